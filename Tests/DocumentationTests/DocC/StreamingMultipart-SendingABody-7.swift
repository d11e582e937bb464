import Foundation
import StreamingMultipart

func copyBody(_ body: MultipartBody, to output: FileHandle) throws -> Int64 {
    var reader = body.makeReader()
    while true {
        let chunk = try [UInt8](capacity: 256 * 1024) { try reader.read(into: &$0) }
        if chunk.isEmpty { return reader.bytesRead }
        try output.write(contentsOf: chunk)
    }
}
