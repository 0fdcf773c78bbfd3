/// The FastCGI name-value pairs of FCGI_PARAMS (and FCGI_GET_VALUES): each pair is a name length,
/// a value length (one byte below 128, else four bytes with the high bit set: up to 2^31 - 1), the
/// name and the value.
///
/// Lengths are checked against the bytes that are actually there before anything is allocated, in
/// 64-bit arithmetic: a length or a sum of lengths past the end of the record is a malformed record
/// (libfcgi 2.4.2 aborted the whole process on a name and a value whose lengths summed past
/// `INT_MAX`).
enum ParamsDecoder {
  /// Why FCGI_PARAMS content cannot be decoded.
  struct Malformed: Error, Equatable {
    let reason: String
  }

  /// Every pair in order (a name may come twice).
  static func decodePairs(_ bytes: ArraySlice<UInt8>) throws(Malformed) -> [(String, String)] {
    var pairs: [(String, String)] = []
    try decode(bytes) { name, value in pairs.append((name, value)) }
    return pairs
  }

  /// The parameters as a dictionary; a name sent twice keeps its first value (as libfcgi's
  /// `FCGX_GetParam` did).
  static func decodeParameters(_ bytes: ArraySlice<UInt8>) throws(Malformed) -> [String: String] {
    var parameters: [String: String] = [:]
    parameters.reserveCapacity(32)
    try decode(bytes) { name, value in
      if parameters[name] == nil { parameters[name] = value }
    }
    return parameters
  }

  private static func decode(
    _ bytes: ArraySlice<UInt8>, _ pair: (String, String) -> Void
  ) throws(Malformed) {
    var index = bytes.startIndex
    let end = bytes.endIndex
    while index < end {
      let nameLength = try length(bytes, &index)
      let valueLength = try length(bytes, &index)
      guard nameLength + valueLength <= end - index else {
        throw Malformed(reason: "a name-value pair is longer than the parameters")
      }
      let name = String(decoding: bytes[index..<index + nameLength], as: UTF8.self)
      index += nameLength
      let value = String(decoding: bytes[index..<index + valueLength], as: UTF8.self)
      index += valueLength
      pair(name, value)
    }
  }

  private static func length(_ bytes: ArraySlice<UInt8>, _ index: inout Int) throws(Malformed) -> Int {
    guard index < bytes.endIndex else { throw Malformed(reason: "a name-value pair is cut short") }
    let first = bytes[index]
    guard first & 0x80 != 0 else {
      index += 1
      return Int(first)
    }
    guard bytes.endIndex - index >= 4 else { throw Malformed(reason: "a four-byte length is cut short") }
    let value =
      Int(first & 0x7F) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8
      | Int(bytes[index + 3])
    index += 4
    return value
  }
}
