import Foundation
import MultipartTestSupport
import Testing

@testable import StreamingMultipart

/// One spooler's uploads share a disk budget: a form that would pass it fails with `insufficientStorage` (507) and
/// leaves nothing, and bytes come back as files are removed or moved out.
@Suite struct DiskBudgetTests {
    static func upload(fileBytes: Int) throws -> (body: [UInt8], contentType: String) {
        var body = MultipartBody()
        try body.append(.text("hello", name: "caption"))
        try body.append(.data(Data(repeating: 1, count: fileBytes), name: "f", filename: "f.bin"))
        return (try body.bytes(), body.contentType)
    }

    @Test func formsShareTheBudgetAndGetItBackWhenTheirFilesGo() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let budget = MultipartSpooler.DiskBudget(bytes: 250_000)
        let spooler = MultipartSpooler(directory: folder.url, limits: .untimed, diskBudget: budget)
        let (body, contentType) = try Self.upload(fileBytes: 100_000)
        let first = try await spooler.spool(chunkStream(body, size: 4096), contentType: contentType)
        let second = try await spooler.spool(chunkStream(body, size: 4096), contentType: contentType)
        #expect(budget.usedBytes == 200_000)
        // A third would pass the budget: refused, its file removed, its bytes given back.
        let error = await #expect(throws: MultipartError.self) {
            try await spooler.spool(chunkStream(body, size: 4096), contentType: contentType)
        }
        #expect(error?.code == .insufficientStorage)
        #expect(error?.httpStatus == 507)
        #expect(error?.message.contains("shared budget") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(folder.url.path) == false)
        #expect(budget.usedBytes == 200_000)
        #expect(try folder.contents().count == 2)
        // Removing a form's files, or moving one out, gives its bytes back.
        first.removeFiles()
        #expect(budget.usedBytes == 100_000)
        try second.files[0].move(to: folder.url.appendingPathComponent("kept.bin"))
        #expect(budget.usedBytes == 0)
        let third = try await spooler.spool(chunkStream(body, size: 4096), contentType: contentType)
        #expect(budget.usedBytes == 100_000)
        third.removeFiles()
        #expect(budget.usedBytes == 0)
    }

    @Test func concurrentUploadsNeverHoldMoreThanTheBudget() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let budget = MultipartSpooler.DiskBudget(bytes: 1_000_000)
        let spooler = MultipartSpooler(directory: folder.url, limits: .untimed, diskBudget: budget)
        let (body, contentType) = try Self.upload(fileBytes: 300_000)
        // Eight uploads at once into room for three: each either spools whole or is refused with 507.
        let outcomes = await withTaskGroup(of: SpooledForm?.self) { group in
            for _ in 0..<8 {
                group.addTask { try? await spooler.spool(chunkStream(body, size: 1000), contentType: contentType) }
            }
            var forms: [SpooledForm?] = []
            for await form in group { forms.append(form) }
            return forms
        }
        let kept = outcomes.compactMap { $0 }
        #expect((1...3).contains(kept.count))
        #expect(budget.usedBytes == Int64(kept.count) * 300_000)
        #expect(try folder.contents().count == kept.count)
        for form in kept { form.removeFiles() }
        #expect(budget.usedBytes == 0)
    }

    @Test func everyCodeHasItsStatusAndServerFailuresNameNoPath() throws {
        let expected: [(MultipartError.Code, Int)] = [
            (.boundaryNotFound, 400), (.truncated, 400), (.invalidDelimiter, 400), (.missingName, 400),
            (.invalidBoundary, 400), (.invalidCompressedData, 400), (.streamFailed, 400), (.timedOut, 408),
            (.limitExceeded, 413), (.invalidContentType, 415), (.unsupportedContentEncoding, 415),
            (.unsupportedCharset, 415), (.cancelled, 503), (.insufficientStorage, 507), (.writeFailed, 500),
            (.invalidLimit, 500), (.fileNotFound, 500),
        ]
        for (code, status) in expected {
            #expect(MultipartError(code: code, message: "m").httpStatus == status, "\(code)")
        }
        let full = MultipartError(
            code: .writeFailed, message: "writing part 1 to /var/spool/uploads/upload-ab12 failed",
            cause: SystemCallError("write", errno: ENOSPC))
        #expect(full.httpStatus == 507)
        #expect(!full.clientMessage.contains("/var/spool"))
        let client = MultipartError(code: .truncated, message: "the body ended inside part 0")
        #expect(client.clientMessage == client.message)
    }
}
