import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

@Suite struct MultipartInputStreamTests {
    /// A text, a file and bytes, then a stream without a length unless `endingWithAStream` is false.
    func sampleBody(endingWithAStream: Bool = true) throws -> MultipartBody {
        var body = MultipartBody()
        try body.append(.text("caption text", name: "caption"))
        try body.append(.file(at: Repository.input("blob.bin"), name: "blob"))
        try body.append(.data(Data("\r\n--\r\n".utf8), name: "tricky", filename: "t.bin"))
        let notes = Repository.input("notes.txt")
        if endingWithAStream { try body.append(.stream(name: "notes") { InputStream(url: notes)! }) }
        return body
    }

    @Test func everyMaxLengthFrom1To70YieldsTheSameBytes() throws {
        let body = try sampleBody()
        let expected = try body.bytes()
        for maxLength in 1...70 {
            #expect(try readStream(body.makeInputStream(), maxLength: maxLength) == expected, "maxLength \(maxLength)")
        }
    }

    /// A stream from an offset (what URLSession asks for when it resumes an upload) is the rest of the body, and its
    /// progress counts on from the offset; an offset past the end is refused before a stream exists.
    @Test func aStreamFromAnOffsetIsTheRestOfTheBody() throws {
        let body = try sampleBody(endingWithAStream: false)  // nothing past the start of one without a length resumes
        let whole = try readStream(body.makeInputStream(), maxLength: 4096)
        for offset in [0, 1, whole.count / 2, whole.count - 1, whole.count] {
            let last = Locked<MultipartBody.Progress?>(nil)
            let stream = try body.makeInputStream(startingAt: Int64(offset)) { last.set($0) }
            #expect(try readStream(stream, maxLength: 7) == Array(whole[offset...]), "from \(offset)")
            if offset < whole.count { #expect(last.get()?.completedBytes == Int64(whole.count)) }
        }
        let error = #expect(throws: MultipartError.self) {
            _ = try body.makeInputStream(startingAt: Int64(whole.count) + 1)
        }
        #expect(error?.code == .cannotResume)
    }

    @Test func twoStreamsFromOneBodyAreIndependent() throws {
        let body = try sampleBody()
        let expected = try body.bytes()
        let a = body.makeInputStream()
        let b = body.makeInputStream()
        a.open()
        b.open()
        var fromA: [UInt8] = []
        var fromB: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 37)
        var aDone = false
        var bDone = false
        while !aDone || !bDone {
            if !aDone {
                let n = a.read(&buffer, maxLength: 37)
                if n > 0 { fromA += buffer[..<n] } else { aDone = true }
            }
            if !bDone {
                let n = b.read(&buffer, maxLength: 11)
                if n > 0 { fromB += buffer[..<n] } else { bDone = true }
            }
        }
        #expect(fromA == expected)
        #expect(fromB == expected)
    }

    @Test func statusFollowsTheStreamsLife() throws {
        var body = MultipartBody()
        try body.append(.text("x", name: "x"))
        let stream = body.makeInputStream()
        #expect(stream.streamStatus == .notOpen)
        stream.open()
        #expect(stream.streamStatus == .open)
        #expect(stream.hasBytesAvailable)
        var buffer = [UInt8](repeating: 0, count: 10)
        #expect(stream.read(&buffer, maxLength: 10) == 10)
        #expect(stream.streamStatus == .open)
        var total = 10
        while case let n = stream.read(&buffer, maxLength: 10), n > 0 { total += n }
        #expect(Int64(total) == body.contentLength)
        #expect(stream.streamStatus == .atEnd)
        #expect(!stream.hasBytesAvailable)
        #expect(stream.read(&buffer, maxLength: 10) == 0)
        stream.close()
        #expect(stream.streamStatus == .closed)
        #expect(stream.streamError == nil)
    }

    @Test func readBeforeOpenFails() throws {
        let stream = MultipartBody().makeInputStream()
        var buffer = [UInt8](repeating: 0, count: 10)
        #expect(stream.read(&buffer, maxLength: 10) == -1)
    }

    @Test func anIOErrorEndsTheStreamWithError() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let file = try folder.file("vanishing.bin", contents: [1, 2, 3])
        var body = MultipartBody()
        try body.append(.text("first", name: "first"))
        try body.append(.file(at: file, name: "f"))
        try FileManager.default.removeItem(at: file)
        let stream = body.makeInputStream()
        stream.open()
        var buffer = [UInt8](repeating: 0, count: 1000)
        #expect(stream.read(&buffer, maxLength: 1000) == -1)
        #expect(stream.streamStatus == .error)
        #expect(!stream.hasBytesAvailable)
        let error = try #require(stream.streamError as? MultipartError)
        #expect(error.code == .fileNotFound)
        #expect(stream.read(&buffer, maxLength: 1000) == -1)
    }

    @Test func progressIsReportedAfterEachRead() throws {
        let body = try sampleBody()
        let reports = Locked([MultipartBody.Progress]())
        let stream = body.makeInputStream(progress: { progress in
            var all = reports.get()
            all.append(progress)
            reports.set(all)
        })
        let produced = try readStream(stream, maxLength: 10)
        let seen = reports.get()
        #expect(seen.count == (produced.count + 9) / 10)
        #expect(seen.map(\.completedBytes) == seen.map(\.completedBytes).sorted())
        #expect(seen.last?.completedBytes == Int64(produced.count))
        #expect(seen.allSatisfy { $0.totalBytes == nil })  // the notes stream has no declared length
        #expect(Set(seen.compactMap(\.partIndex)) == [0, 1, 2, 3])
    }

    @Test func throttleLimitsEachReadToAPacketAndPauses() throws {
        var body = MultipartBody()
        try body.append(.data(Data(repeating: 9, count: 3000), name: "d", filename: "d.bin"))
        let throttle = MultipartBody.Throttle(packetSize: 1000, delay: .milliseconds(30))
        let stream = body.makeInputStream(throttle: throttle)
        stream.open()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var sizes: [Int] = []
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            while case let n = stream.read(&buffer, maxLength: buffer.count), n > 0 { sizes.append(n) }
        }
        #expect(sizes.allSatisfy { $0 <= 1000 })
        #expect(sizes.reduce(0, +) == Int(body.contentLength!))
        // One pause after every packet but the last: at least (packets - 1) × 30 ms.
        #expect(elapsed >= .milliseconds(30 * (sizes.count - 1)))
    }
}
