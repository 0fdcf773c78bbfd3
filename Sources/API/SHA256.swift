import COpenSSL

/// SHA-256 through OpenSSL's EVP interface; the only pointer work in the API module.
enum SHA256 {
  /// The lowercase hex digest of `text`'s UTF-8 bytes.
  static func hex(_ text: String) -> String {
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    var bytes = Array(text.utf8)
    let ok = bytes.withUnsafeMutableBytes { input in
      digest.withUnsafeMutableBufferPointer { output in
        EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, EVP_sha256(), nil)
      }
    }
    precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
    let hexDigits = Array("0123456789abcdef".utf8)
    var hex = [UInt8]()
    hex.reserveCapacity(64)
    for byte in digest {
      hex.append(hexDigits[Int(byte >> 4)])
      hex.append(hexDigits[Int(byte & 0xF)])
    }
    return String(decoding: hex, as: UTF8.self)
  }
}
