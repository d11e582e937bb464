// The parse timing harness of Benchmarks/compare.sh, built once against each version of the library.
//   pb [REPS]                  F1–F4 (ONLY=F2 for F2 alone): median, min and max time, mallocs per part
//   pb parse FILE BOUNDARY     the Peers/ interface: parts=N bytes=M parse_seconds=S
//   pb build FILE [REPS]       3 fields and FILE pulled in 64 KiB reads: median, min and max MB/s

import Foundation
import StreamingMultipart

typealias CountFn = @convention(c) () -> UInt64
let mallocCount: CountFn? = dlsym(nil, "malloc_count").map { unsafeBitCast($0, to: CountFn.self) }

/// Parses `input` as a server would, in 64 KiB chunks (slices, no copies); returns the parts and body bytes.
@inline(never)
func parse(_ input: [UInt8], boundary: String) throws -> (parts: Int, bytes: Int) {
    var limits = MultipartParser.Limits.default
    limits.maxParts = 10_000_000
    limits.maxFileBytes = 1 << 40
    var parser = try MultipartParser(
        boundary: MultipartBoundary(contentType: "multipart/form-data; boundary=\"\(boundary)\""), limits: limits)
    var parts = 0
    var bytes = 0
    var offset = 0
    repeat {
        let end = min(offset + 65536, input.count)
        try parser.append(input[offset..<end])
        offset = end
        while let event = try parser.next() {
            switch event {
            case .partHeaders: parts += 1
            case .bodyBytes(let slice): bytes += slice.count
            case .partEnd, .end: break
            }
        }
    } while offset < input.count
    try parser.finish()
    return (parts, bytes)
}

if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "parse" {
    // The Peers/ interface: parse FILE BOUNDARY -> parts=N bytes=M parse_seconds=S
    let input = [UInt8](try Data(contentsOf: URL(fileURLWithPath: CommandLine.arguments[2])))
    let t0 = DispatchTime.now().uptimeNanoseconds
    let (parts, bytes) = try parse(input, boundary: CommandLine.arguments[3])
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
    print("parts=\(parts) bytes=\(bytes) parse_seconds=\(seconds)")
    exit(0)
}
if CommandLine.arguments.count >= 3, CommandLine.arguments[1] == "build" {
    var body = MultipartBody()
    try body.append(.text("alpha", name: "a"))
    try body.append(.text("bravo", name: "b"))
    try body.append(.text("charlie", name: "c"))
    try body.append(.file(at: URL(fileURLWithPath: CommandLine.arguments[2]), name: "file"))
    var buffer = [UInt8](repeating: 0, count: 65536)
    var rates: [Double] = []
    for _ in 0..<Int(CommandLine.arguments.count > 3 ? CommandLine.arguments[3] : "7")! {
        let t0 = DispatchTime.now().uptimeNanoseconds
        var reader = body.makeReader()
        var total = 0
        while true {
            let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            if count == 0 { break }
            total += count
        }
        rates.append(Double(total) / (Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9) / 1e6)
    }
    rates.sort()
    print(
        String(
            format: "build 3 fields + file\tmedian %.0f MB/s\tmin %.0f\tmax %.0f", rates[rates.count / 2], rates.first!,
            rates.last!))
    exit(0)
}
let reps = Int(CommandLine.arguments.dropFirst().first ?? "5")!
let only = ProcessInfo.processInfo.environment["ONLY"]
for (name, body) in (only == "F2" ? [("F2 100,000 fields", ParseFixtures.manyFields())] : ParseFixtures.all()) {
    var samples: [Double] = []
    var allocs: UInt64 = 0
    for _ in 0..<reps {
        let a0 = mallocCount?() ?? 0
        let t0 = DispatchTime.now().uptimeNanoseconds
        let (parts, bytes) = try parse(body.bytes, boundary: ParseFixtures.boundary)
        precondition(parts == body.parts && bytes == body.bodyBytes, "parsed \(parts) parts, \(bytes) bytes")
        let t1 = DispatchTime.now().uptimeNanoseconds
        allocs = (mallocCount?() ?? 0) - a0
        samples.append(Double(t1 - t0) / 1e9)
    }
    samples.sort()
    let median = samples[samples.count / 2]
    let rate =
        name.hasPrefix("F2")
        ? String(format: "%.0f k parts/s", Double(body.parts) / median / 1e3)
        : String(format: "%.0f MB/s", Double(body.bytes.count) / median / 1e6)
    print(
        "\(name)\tmedian \(rate)\tmin \(String(format: "%.1f", samples.first! * 1e3)) ms\tmax \(String(format: "%.1f", samples.last! * 1e3)) ms\tmallocs/part \(String(format: "%.2f", Double(allocs) / Double(body.parts)))"
    )
}
