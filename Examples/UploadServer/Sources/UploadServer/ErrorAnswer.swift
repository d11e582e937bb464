import Foundation
import NIOCore
import NIOHTTP1

/// An error answered by a connection guard, before the request reaches the router: `{"error":{"code","message"}}`
/// with `Connection: close`, written from the guard's place in the pipeline (below Hummingbird's HTTPTypes codec);
/// ``CloseAfterResponseHandler``, nearer the socket, closes the connection after it.
struct ErrorAnswer {
    let status: HTTPResponseStatus
    let code: String
    let message: String

    /// Writes the answer through `context`.
    func send(through context: ChannelHandlerContext) {
        let body = ErrorBody(error: .init(code: code, message: message))
        let data = (try? JSONEncoder().encode(body)) ?? Data("{}".utf8)
        var head = HTTPResponseHead(version: .http1_1, status: status)
        head.headers.add(name: "content-type", value: "application/json; charset=utf-8")
        head.headers.add(name: "content-length", value: String(data.count))
        head.headers.add(name: "connection", value: "close")
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: data)))), promise: nil)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
    }
}
