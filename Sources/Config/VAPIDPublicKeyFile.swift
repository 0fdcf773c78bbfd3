#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The VAPID public key as the responder reads it: one line of unpadded base64url (87 characters, the 65-byte
/// uncompressed P-256 point) in `<vapidKeyFile>.pub`, beside the private key in the data directory.
///
/// The listener owns the key pair: on every start it makes the private key if there is none (0600) and
/// (re)writes this file when its content differs, with the folder's file mode (`FileModes`: readable by the
/// responder's group in the shared-folder layout). The responder only reads this file, never the private key;
/// `GET /v1/info` shows it as `vapidPublicKey`. It stays the same across restarts because the private key does.
public enum VAPIDPublicKeyFile {
  /// The public key file of the private key at `keyFile`.
  public static func path(forKeyFile keyFile: String) -> String { keyFile + ".pub" }

  /// The public key in the file, nil when the file is missing, unreadable or not one valid key.
  public static func read(_ path: String) -> String? {
    guard case .success(let bytes) = SmallFile.read(path, limit: 1024) else { return nil }
    var text = String(decoding: bytes, as: UTF8.self)
    while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
    return isPublicKey(text) ? text : nil
  }

  /// Writes `key` (which must pass `isPublicKey`) unless the file already holds it: a temporary file renamed
  /// over the old one, mode 0644 less the process's umask. Returns the failure's text, nil on success.
  public static func write(_ key: String, to path: String) -> String? {
    guard isPublicKey(key) else { return "not a VAPID public key" }
    if read(path) == key { return nil }
    let temporary = path + ".tmp-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
    guard fd >= 0 else { return "cannot create \(temporary): \(String(cString: strerror(errno)))" }
    let bytes = Array((key + "\n").utf8)
    let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    let synced = fsync(fd) == 0
    close(fd)
    guard written == bytes.count, synced, rename(temporary, path) == 0 else {
      let reason = String(cString: strerror(errno))
      unlink(temporary)
      return "cannot write \(path): \(reason)"
    }
    return nil
  }

  /// Whether `text` is 87 base64url characters that decode to 65 bytes starting 0x04 (an uncompressed point; that
  /// it lies on P-256 is the key pair's business).
  public static func isPublicKey(_ text: String) -> Bool {
    let utf8 = Array(text.utf8)
    guard utf8.count == 87 else { return false }
    func value(_ byte: UInt8) -> UInt8? {
      switch byte {
      case 0x41...0x5A: byte - 0x41
      case 0x61...0x7A: byte - 0x61 + 26
      case 0x30...0x39: byte - 0x30 + 52
      case 0x2D: 62
      case 0x5F: 63
      default: nil
      }
    }
    guard utf8.allSatisfy({ value($0) != nil }) else { return false }
    // The first 6 bits of 0x04 are 000001 ("B"); 87 characters carry 522 bits, the last 2 of which must be 0.
    return utf8[0] == UInt8(ascii: "B") && (value(utf8[86])! & 0x03) == 0
  }
}
