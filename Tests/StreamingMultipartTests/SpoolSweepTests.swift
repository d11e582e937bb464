import Foundation
import MultipartTestSupport
import StreamingMultipart
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `MultipartSpooler.removeStaleFiles(olderThan:)`: what a crash left behind goes, and nothing else does.
@Suite struct SpoolSweepTests {
    /// Sets a path's last modification `secondsAgo` into the past (the link itself for a symbolic link).
    func age(_ path: String, secondsAgo: Double) throws {
        let then = Date().addingTimeInterval(-secondsAgo).timeIntervalSince1970
        var times = [timespec](repeating: timespec(), count: 2)
        for index in 0..<2 {
            times[index].tv_sec = time_t(then)
            times[index].tv_nsec = 0
        }
        #expect(utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) == 0, "utimensat \(path): \(errno)")
    }

    @Test func removesOnlyOldFilesItsOwnSpoolerNamed() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let hex = String(repeating: "0123456789abcdef", count: 2)
        let stale = try folder.file("upload-\(hex)", contents: [1, 2, 3]).path
        let fresh = try folder.file("upload-\(String(hex.reversed()))", contents: [4]).path
        let othersOld = [
            try folder.file("upload-photo.jpg", contents: [5]).path,  // a client's kind of name
            try folder.file("upload-\(hex.uppercased())", contents: [6]).path,  // not the spooler's digits
            try folder.file("upload-\(hex)0", contents: [7]).path,  // one digit too many
            try folder.file("keep.txt", contents: [8]).path,
        ]
        let victim = try folder.file("victim", contents: [9]).path
        let link = folder.url.appendingPathComponent("upload-" + String(repeating: "a", count: 32)).path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: victim)
        let subfolder = folder.url.appendingPathComponent("upload-" + String(repeating: "b", count: 32)).path
        try FileManager.default.createDirectory(atPath: subfolder, withIntermediateDirectories: false)
        for path in [stale, victim, link, subfolder] + othersOld { try age(path, secondsAgo: 7200) }

        let spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        #expect(try spooler.removeStaleFiles(olderThan: .seconds(3600)) == 1)
        #expect(!FileManager.default.fileExists(atPath: stale))
        for path in [fresh, victim, link, subfolder] + othersOld {
            #expect((try? FileManager.default.attributesOfItem(atPath: path)) != nil, "\(path) was removed")
        }
        #expect(try spooler.removeStaleFiles(olderThan: .seconds(3600)) == 0)
        #expect(try spooler.removeStaleFiles(olderThan: .zero) == 1)  // the fresh one, now old enough
    }

    /// The names the spooler really gives its files are the ones the sweep looks for: a form left on disk (as a
    /// crashed process leaves it) is found once old enough, and not before.
    @Test func findsTheFilesASpoolerCreated() async throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        var body = MultipartBody()
        try body.append(.data(Data(repeating: 7, count: 1000), name: "f", filename: "a.bin"))
        try body.append(.data(Data(repeating: 8, count: 1000), name: "g", filename: "b.bin"))
        let bytes = try body.bytes()
        let spooler = MultipartSpooler(directory: folder.url, limits: .untimed)
        let form = try await spooler.spool(chunkStream(bytes, size: 512), contentType: body.contentType)
        let paths = form.files.compactMap(\.path)
        #expect(paths.count == 2)
        #expect(try spooler.removeStaleFiles(olderThan: .seconds(60)) == 0)
        for path in paths { try age(path, secondsAgo: 120) }
        #expect(try spooler.removeStaleFiles(olderThan: .seconds(60)) == 2)
        #expect(try folder.contents() == [])
        form.removeFiles()  // the form's own removal finds them gone, and says nothing
    }

    @Test func aMissingFolderIsAWriteFailureNamingIt() throws {
        let folder = "/nonexistent-\(UUID().uuidString)"
        let spooler = MultipartSpooler(directory: folder, limits: .untimed)
        let error = #expect(throws: MultipartError.self) { try spooler.removeStaleFiles(olderThan: .seconds(1)) }
        #expect(error?.code == .writeFailed)
        #expect(error?.message.contains(folder) == true)
        #expect((error?.cause as? SystemCallError)?.errno == ENOENT)
    }

    /// A spooler into a store has no folder: sweeping it is an error that says so, never a sweep of the folder the
    /// process runs in (what an empty path would have named).
    @Test func aSpoolerIntoAStoreHasNoFolderToSweep() throws {
        let spooler = MultipartSpooler(store: RecordingStore())
        let error = #expect(throws: MultipartError.self) { try spooler.removeStaleFiles(olderThan: .seconds(1)) }
        #expect(error?.code == .invalidState && error?.message.contains("no spool folder") == true, "\(error!)")
    }
}
