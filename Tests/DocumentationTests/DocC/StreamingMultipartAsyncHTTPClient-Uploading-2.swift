import AsyncHTTPClient
import StreamingMultipartAsyncHTTPClient

let uploadClient: HTTPClient = {
    var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
    configuration.connectionPool.retryConnectionEstablishment = false
    configuration.enableInterimResponses()
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}()
