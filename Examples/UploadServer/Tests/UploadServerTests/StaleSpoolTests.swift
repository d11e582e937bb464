import ExampleTestSupport
import Foundation
import Testing

/// At start the server removes the spool files a crashed run left, and nothing else in the folder.
@Suite(.timeLimit(.minutes(5))) struct StaleSpoolTests {
    @Test func filesACrashedRunLeftAreRemovedAtStart() throws {
        let leftover = "upload-" + String(repeating: "3f", count: 16)
        let server = try RunningServer { spool in
            try Data("half an upload".utf8).write(to: spool.appendingPathComponent(leftover))
            try Data("not the spooler's".utf8).write(to: spool.appendingPathComponent("notes.txt"))
        }
        defer { server.stop() }
        #expect(try server.spooledFiles() == ["notes.txt"])
    }
}
