#if canImport(Glibc)
  import Glibc
#endif

/// A file only its owner may read and write (mode 0600 whatever the umask), written whole or not at all: the
/// bytes go into a new `<path>.tmp-<pid>` beside it, are synced, and only then take `path`'s place. For files
/// that hold or may come to hold a secret (Litestream's YAML with an S3 key, `up`'s starter configuration).
public enum OwnerOnlyFile {
  /// How the finished file takes `path`'s place.
  public enum Placement: Sendable {
    /// `rename(2)`: whatever is at `path` is replaced.
    case replace
    /// `link(2)`: only when nothing is at `path`; a file that appeared meanwhile is kept.
    case keepExisting
  }

  /// Why the file was not written: `strerror`'s text for the call that failed.
  public struct WriteError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
  }

  /// Writes `bytes` to `path` as `placement` says. True when the file was written, false when
  /// `.keepExisting` found a file at `path` (left as it was). Throws with the reason otherwise; no
  /// temporary file is left behind.
  @discardableResult
  public static func write(_ bytes: [UInt8], to path: String, placement: Placement) throws(WriteError) -> Bool
  {
    let temporary = path + ".tmp-\(getpid())"
    unlink(temporary)
    let fd = open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw WriteError(reason: String(cString: strerror(errno))) }
    defer { unlink(temporary) }
    let written = fchmod(fd, 0o600) == 0 && writeAll(fd, bytes) && fsync(fd) == 0
    let reason = String(cString: strerror(errno))
    close(fd)
    guard written else { throw WriteError(reason: reason) }
    switch placement {
    case .replace:
      guard rename(temporary, path) == 0 else { throw WriteError(reason: String(cString: strerror(errno))) }
    case .keepExisting:
      guard link(temporary, path) == 0 else {
        if errno == EEXIST { return false }
        throw WriteError(reason: String(cString: strerror(errno)))
      }
    }
    return true
  }
}
