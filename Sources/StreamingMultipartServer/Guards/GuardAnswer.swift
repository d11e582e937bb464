import Foundation
import NIOCore
import NIOHTTP1

/// An error answered by a connection guard, before the request reaches the server's handlers:
/// `{"error":{"code","message"}}` with `Connection: close`, the shape the examples answer every error in, written
/// from the guard's place in the pipeline (after the HTTP/1 codec); ``CloseAfterResponseHandler``, nearer the
/// socket, closes the connection after it.
struct GuardAnswer {
    let status: HTTPResponseStatus
    let code: String
    let message: String

    private struct Body: Encodable {
        struct Error: Encodable {
            var code: String
            var message: String
        }
        var error: Error
    }

    /// The JSON body.
    var body: Data {
        (try? JSONEncoder().encode(Body(error: .init(code: code, message: message)))) ?? Data("{}".utf8)
    }

    /// Writes the answer through `context`.
    func send(through context: ChannelHandlerContext) {
        let data = body
        var head = HTTPResponseHead(version: .http1_1, status: status)
        head.headers.add(name: "content-type", value: "application/json; charset=utf-8")
        head.headers.add(name: "content-length", value: String(data.count))
        head.headers.add(name: "connection", value: "close")
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: data)))), promise: nil)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
    }
}
