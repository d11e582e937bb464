import Foundation
import StreamingMultipart

struct ListingUpload: Decodable {
    var title: String
    var price: Decimal
    var tags: [String]
    var seller: Seller
    var photos: [SpooledFile]
    struct Seller: Decodable {
        var name: String
        var verified: Bool
    }
}

func receive(
    _ body: some AsyncSequence<[UInt8], any Error> & Sendable, contentType: String, spooler: MultipartSpooler
) async throws -> [String] {
    try await spooler.withSpooledForm(body, contentType: contentType) { form in
        let listing = try MultipartFormDecoder().decode(ListingUpload.self, from: form)
        var kept: [String] = []
        for photo in listing.photos {
            let path = "/srv/photos/\(UUID().uuidString)-\(photo.safeFilename)"
            try photo.move(to: path)  // kept; every other spooled file is removed when the closure returns
            kept.append(path)
        }
        return kept
    }
}
