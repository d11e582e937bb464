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
    var cover: MultipartFile  // a file part from bytes in memory, with the filename and type the server sees
    struct Seller: Encodable {
        var name: String
        var verified: Bool
    }
}

func cover(_ png: Data) -> MultipartFile {
    MultipartFile(png, filename: "cover.png", contentType: "image/png")  // or MultipartFile(contentsOf: fileURL)
}

/// `client` follows no redirect itself and fails a refused connection at once, as the AsyncHTTPClient product's
/// "Uploading" article makes it, so that the upload's own redirect and retry rules apply.
func publish(_ listing: Listing, to url: String, with client: HTTPClient) async throws -> HTTPClientResponse {
    // title, price, tags[], tags[], seller[name], seller[verified], photos[], photos[], cover
    let body = try MultipartFormEncoder().encode(listing)
    return try await client.upload(body, to: url)
}
