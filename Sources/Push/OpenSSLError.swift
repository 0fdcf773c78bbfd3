import COpenSSL

/// OpenSSL's error queue, for the messages of the module's crypto (`SigningKey`, `ECECrypto`).
enum OpenSSLError {
  /// OpenSSL's most recent error as text (and the queue cleared); "no detail from OpenSSL" when it is empty.
  static func last() -> String {
    let code = ERR_get_error()
    ERR_clear_error()
    guard code != 0 else { return "no detail from OpenSSL" }
    var buffer = [CChar](repeating: 0, count: 256)
    ERR_error_string_n(code, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
