import Foundation
import StreamingMultipartURLSession  // the core and the URLRequest conveniences

#if canImport(FoundationNetworking)
import FoundationNetworking  // URLSession on Linux
#endif

final class UploadDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    let body: MultipartBody

    init(body: MultipartBody) { self.body = body }

    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping (InputStream?) -> Void
    ) {
        completionHandler(body.makeInputStream())
    }
}
