#if canImport(Glibc)
  import Glibc
#endif

/// Microseconds on the monotonic clock, for request timings.
func monotonicMicroseconds() -> Int64 {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
}

/// Writes every byte to a file descriptor, retrying short writes and EINTR. False on failure.
@discardableResult
func writeAll(_ fileDescriptor: Int32, _ bytes: [UInt8]) -> Bool {
  bytes.withUnsafeBytes { buffer in
    var offset = 0
    while offset < buffer.count {
      let written = Glibc.write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
      if written < 0 {
        if errno == EINTR { continue }
        return false
      }
      offset += written
    }
    return true
  }
}
