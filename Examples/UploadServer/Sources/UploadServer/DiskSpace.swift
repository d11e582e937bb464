import Foundation

enum DiskSpace {
    /// Half the free space of the file system that holds `path` (8 GiB when it cannot be read): the default disk
    /// budget, so that uploads together can never fill the disk the server runs on.
    static func halfFree(at path: String) -> Int64 {
        let free = (try? FileManager.default.attributesOfFileSystem(forPath: path)[.systemFreeSize] as? NSNumber)?
            .int64Value
        return max(1, (free ?? (16 << 30)) / 2)
    }
}
