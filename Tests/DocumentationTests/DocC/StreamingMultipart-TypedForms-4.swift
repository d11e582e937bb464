import Foundation
import StreamingMultipart

struct Profile: Codable {
    var name: String
    var born: Date
    var languages: [String]
    var address: Address
    var avatar: MultipartFile
    struct Address: Codable {
        var city: String
        var zip: String
    }
}

// Client: name, born, languages[], languages[], address[city], address[zip], avatar (a file part).
func profileBody(_ profile: Profile) throws -> MultipartBody {
    try MultipartFormEncoder().encode(profile)
}

// Server: the same type back from a spooled form; the avatar arrives as a file on disk.
func readProfile(_ form: SpooledForm) throws -> Profile {
    try MultipartFormDecoder().decode(Profile.self, from: form)
}
