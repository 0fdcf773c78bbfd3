#if canImport(Glibc)
  import Glibc
#endif

/// A credential kept between restarts in a file only its owner can read: mode 0600, owned by the
/// process's user, beside the database (never in it: the internet-facing responder reads the database).
///
/// The APNs provider token lives here: APNs refuses a new token within 20 minutes of the previous one
/// (`TooManyProviderTokenUpdates`), so a restarted listener reuses the one it signed. Reading trusts
/// only a regular file (no symlink) that this user owns and nobody else may read or write; anything
/// else is ignored, and the next save replaces it. A save writes a fresh 0600 file under a random
/// temporary name and renames it over the old one, so a reader never sees half of it.
struct PrivateTokenFile {
  /// Why the file could not be read or written.
  struct Failure: Error, Sendable, CustomStringConvertible {
    var description: String
  }

  /// The file's path.
  let path: String

  /// The file's text, nil when there is none; a failure when it exists but cannot be trusted or read.
  func load() -> Result<String?, Failure> {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    guard fd >= 0 else {
      if errno == ENOENT { return .success(nil) }
      return .failure(Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))"))
    }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else {
      return .failure(Failure(description: "cannot stat \(path): \(String(cString: strerror(errno)))"))
    }
    guard info.st_mode & S_IFMT == S_IFREG else {
      return .failure(Failure(description: "\(path) is not a regular file; ignored"))
    }
    guard info.st_uid == geteuid() else {
      return .failure(Failure(description: "\(path) belongs to uid \(info.st_uid), not this user; ignored"))
    }
    guard info.st_mode & 0o077 == 0 else {
      return .failure(
        Failure(
          description:
            "\(path) is readable or writable by others (mode \(String(info.st_mode & 0o777, radix: 8))); ignored"
        ))
    }
    guard info.st_size <= 16_384 else {
      return .failure(Failure(description: "\(path) is larger than 16384 bytes; ignored"))
    }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while bytes.count <= 16_384 {
      let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        return .failure(Failure(description: "cannot read \(path): \(String(cString: strerror(errno)))"))
      }
      if count == 0 { break }
      bytes.append(contentsOf: chunk[0..<count])
    }
    var text = String(decoding: bytes, as: UTF8.self)
    while text.hasSuffix("\n") { text.removeLast() }
    return .success(text)
  }

  /// Replaces the file with `text` (mode 0600, this user's).
  func save(_ text: String) -> Result<Void, Failure> {
    let temporary = path + ".tmp-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else {
      return .failure(Failure(description: "cannot create \(temporary): \(String(cString: strerror(errno)))"))
    }
    var failure: Failure?
    // The umask can only take bits away; fchmod makes sure no group or other bit is set either way.
    if fchmod(fd, 0o600) != 0 {
      failure = Failure(description: "cannot chmod \(temporary): \(String(cString: strerror(errno)))")
    }
    let bytes = Array((text + "\n").utf8)
    var written = 0
    while failure == nil, written < bytes.count {
      let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        failure = Failure(description: "cannot write \(temporary): \(String(cString: strerror(errno)))")
      } else {
        written += count
      }
    }
    if failure == nil, fsync(fd) != 0 {
      failure = Failure(description: "cannot sync \(temporary): \(String(cString: strerror(errno)))")
    }
    close(fd)
    if failure == nil, rename(temporary, path) != 0 {
      failure = Failure(
        description: "cannot rename \(temporary) to \(path): \(String(cString: strerror(errno)))")
    }
    if let failure {
      unlink(temporary)
      return .failure(failure)
    }
    return .success(())
  }
}
