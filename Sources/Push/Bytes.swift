import Config

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// base64url without padding (RFC 7515 §2), as JWTs use it.
enum Base64URL {
  private static let alphabet: [UInt8] = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

  /// The encoding of `bytes`.
  static func encode(_ bytes: some Collection<UInt8>) -> String {
    let input = Array(bytes)
    var output: [UInt8] = []
    output.reserveCapacity((input.count * 4 + 2) / 3)
    var index = 0
    while index + 3 <= input.count {
      let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
      output.append(alphabet[Int(value >> 18 & 63)])
      output.append(alphabet[Int(value >> 12 & 63)])
      output.append(alphabet[Int(value >> 6 & 63)])
      output.append(alphabet[Int(value & 63)])
      index += 3
    }
    let rest = input.count - index
    if rest == 1 {
      let value = UInt32(input[index]) << 16
      output.append(alphabet[Int(value >> 18 & 63)])
      output.append(alphabet[Int(value >> 12 & 63)])
    } else if rest == 2 {
      let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
      output.append(alphabet[Int(value >> 18 & 63)])
      output.append(alphabet[Int(value >> 12 & 63)])
      output.append(alphabet[Int(value >> 6 & 63)])
    }
    return String(decoding: output, as: UTF8.self)
  }

  /// The bytes of a base64url text (padding tolerated), or nil when it is not base64url.
  static func decode(_ text: String) -> [UInt8]? {
    var values: [UInt8] = []
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - UInt8(ascii: "A"))
      case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - UInt8(ascii: "a") + 26)
      case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte - UInt8(ascii: "0") + 52)
      case UInt8(ascii: "-"), UInt8(ascii: "+"): values.append(62)
      case UInt8(ascii: "_"), UInt8(ascii: "/"): values.append(63)
      case UInt8(ascii: "="): continue
      default: return nil
      }
    }
    guard values.count % 4 != 1 else { return nil }
    var output: [UInt8] = []
    var buffer: UInt32 = 0
    var bits = 0
    for value in values {
      buffer = buffer << 6 | UInt32(value)
      bits += 6
      if bits >= 8 {
        bits -= 8
        output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
      }
    }
    return output
  }
}

/// Reads a whole (small) file: key files, service accounts. Nil with the reason when it cannot.
func readSmallFile(_ path: String, limit: Int = 1_048_576) -> Result<[UInt8], PushError> {
  SmallFile.read(path, limit: limit).mapError { PushError($0.description) }
}

/// A token shortened for logs: never log a push token in full.
func redactedToken(_ token: String) -> String {
  token.count <= 8 ? "…" : "…" + String(token.suffix(8))
}

/// `application/x-www-form-urlencoded` encoding of one value.
func formEncode(_ text: String) -> String {
  var output = ""
  let hex = Array("0123456789ABCDEF")
  for byte in text.utf8 {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
      UInt8(ascii: "~"):
      output.unicodeScalars.append(Unicode.Scalar(byte))
    default:
      output.append("%")
      output.append(hex[Int(byte >> 4)])
      output.append(hex[Int(byte & 15)])
    }
  }
  return output
}
