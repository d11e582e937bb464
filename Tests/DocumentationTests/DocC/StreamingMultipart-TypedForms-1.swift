import AsyncHTTPClient
import Foundation
import StreamingMultipart
import StreamingMultipartAsyncHTTPClient

struct Listing: Encodable {
    var title: String
    var price: Decimal
    var tags: [String]
    var seller: Seller
    var photos: [URL]  // file URLs: file parts, read only as the body is sent
    struct Seller: Encodable {
        var name: String
        var verified: Bool
    }
}

func publish(_ listing: Listing, to url: String) async throws -> HTTPClientResponse {
    // title, price, tags[], tags[], seller[name], seller[verified], photos[], photos[]
    let body = try MultipartFormEncoder().encode(listing)
    return try await HTTPClient.shared.upload(body, to: url)
}
