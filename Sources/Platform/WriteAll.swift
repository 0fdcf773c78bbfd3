#if canImport(Glibc)
  import Glibc
#endif

/// Writes every byte of `bytes` to `fileDescriptor` (a blocking descriptor: a pipe, standard
/// error, a CGI answer), retrying short writes and `EINTR`. False when `write(2)` fails (the
/// reader went away: `EPIPE`, once `SIGPIPE` is ignored).
@discardableResult
public func writeAll(_ fileDescriptor: Int32, _ bytes: [UInt8]) -> Bool {
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
