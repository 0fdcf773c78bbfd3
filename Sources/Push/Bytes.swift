import Config

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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
