import AsyncHTTPClient

let uploadClient: HTTPClient = {
    var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
    configuration.connectionPool.retryConnectionEstablishment = false
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}()
