#if canImport(Glibc)
  import Glibc
#endif

/// Reads whole small files: configuration, key files, service accounts.
public enum SmallFile {
  /// Why a file could not be read; `description` reads "cannot read PATH: REASON".
  public struct Failure: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot read \(path): \(reason)" }
  }

  /// The file's bytes, refusing files over `limit` bytes (a mistaken path, not a config).
  public static func read(_ path: String, limit: Int = 1_048_576) -> Result<[UInt8], Failure> {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return .failure(Failure(path: path, reason: String(cString: strerror(errno)))) }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16_384)
    while true {
      let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        return .failure(Failure(path: path, reason: String(cString: strerror(errno))))
      }
      if count == 0 { break }
      bytes.append(contentsOf: chunk[0..<count])
      guard bytes.count <= limit else {
        return .failure(Failure(path: path, reason: "larger than \(limit) bytes; is this the right file?"))
      }
    }
    return .success(bytes)
  }
}
