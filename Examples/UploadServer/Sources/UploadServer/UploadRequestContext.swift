import Hummingbird
import NIOCore

/// Hummingbird's basic context with the client's address, which the upload admission counts slots by.
struct UploadRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
