import Foundation
import StreamingMultipart

func copyBody(_ body: MultipartBody, to output: FileHandle) throws -> Int64 {
    var reader = body.makeReader()
    var buffer = [UInt8](repeating: 0, count: 256 * 1024)
    while true {
        let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        if count == 0 { return reader.bytesRead }
        output.write(Data(buffer[..<count]))
    }
}
