import Config
import Logging

#if canImport(Glibc)
  import Glibc
#endif

/// The VAPID key pair's files: the private key (PEM PKCS#8, P-256, mode 0600, this user's) at
/// `[messaging.webpush] vapidKeyFile` (default `vapid.pem` beside the database), made on the listener's first
/// start, and the public key beside it for the responder (`VAPIDPublicKeyFile`). Keeping the private key is what
/// keeps `vapidPublicKey` the same across restarts: browsers bind each subscription to it.
enum VAPIDKeyFile {
  /// Loads the private key at `path`, making one first when there is none; writes the public key file beside it
  /// (a failure there is logged: the responder then shows no `vapidPublicKey`). The error names the file.
  static func load(path: String, subject: String, logger: Logger) -> Result<VAPID, PushError> {
    let pem: [UInt8]
    switch readSmallFile(path, limit: 65_536) {
    case .success(let bytes):
      pem = bytes
      var info = stat()
      if stat(path, &info) == 0, info.st_mode & 0o077 != 0 {
        logger.warn(
          "the VAPID private key file is readable by others; chmod 600 it",
          ["file": path, "mode": String(info.st_mode & 0o777, radix: 8)])
      }
    case .failure(let error):
      guard access(path, F_OK) != 0, errno == ENOENT else {
        return .failure(PushError("messaging.webpush.vapidKeyFile: \(error)"))
      }
      do throws(PushError) {
        pem = try P256Key.generate().privateKeyPEM()
      } catch {
        return .failure(PushError("cannot make a VAPID key: \(error)"))
      }
      var text = String(decoding: pem, as: UTF8.self)
      while text.hasSuffix("\n") { text.removeLast() }
      if case .failure(let failure) = PrivateTokenFile(path: path).save(text) {
        return .failure(PushError("cannot keep the new VAPID key: \(failure.description)"))
      }
      logger.info("made a new VAPID key pair for Web Push", ["file": path])
    }
    let vapid: VAPID
    do throws(PushError) {
      vapid = try VAPID(pem: pem, subject: subject)
    } catch {
      return .failure(PushError("messaging.webpush.vapidKeyFile \(path): \(error)"))
    }
    let publicPath = VAPIDPublicKeyFile.path(forKeyFile: path)
    if let failure = VAPIDPublicKeyFile.write(vapid.publicKeyText, to: publicPath) {
      logger.error("cannot write the VAPID public key for the responder", ["reason": failure])
    }
    return .success(vapid)
  }
}
