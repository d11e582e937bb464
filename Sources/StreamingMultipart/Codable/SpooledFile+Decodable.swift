extension SpooledFile: Decodable {
    /// A spooled file comes only from ``MultipartFormDecoder``, which hands over the form's own file; any other
    /// decoder fails with `DecodingError.typeMismatch`.
    public init(from decoder: any Decoder) throws {
        throw DecodingError.typeMismatch(
            SpooledFile.self,
            .init(
                codingPath: decoder.codingPath,
                debugDescription: "a SpooledFile is decoded only by MultipartFormDecoder, from a spooled form"))
    }
}
