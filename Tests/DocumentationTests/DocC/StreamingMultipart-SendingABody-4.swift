import Foundation
import StreamingMultipart

func throttledStream(for body: MultipartBody) -> InputStream {
    body.makeInputStream(throttle: .cellular) { progress in  // 16 KiB packets, 0.2 s apart
        print("sent \(progress.completedBytes) of \(progress.totalBytes ?? -1), part \(progress.partIndex ?? -1)")
    }
}
