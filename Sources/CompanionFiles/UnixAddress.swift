#if canImport(Glibc)
  import Glibc
#endif

/// A `sockaddr_un` for a path; nil when the path does not fit (the wake sockets' addresses).
struct UnixAddress {
  private var storage = sockaddr_un()

  init?(_ path: String) {
    let bytes = Array(path.utf8)
    let capacity = MemoryLayout.size(ofValue: storage.sun_path)
    guard !bytes.isEmpty, bytes.count < capacity else { return nil }
    storage.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &storage.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
  }

  mutating func withPointer<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
    let length = socklen_t(MemoryLayout<sockaddr_un>.size)
    return withUnsafePointer(to: &storage) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
    }
  }

  mutating func bind(_ fd: Int32) -> Int32 {
    withPointer { Glibc.bind(fd, $0, $1) }
  }
}
