#if canImport(Glibc)
  import Glibc
#endif

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

  /// Parameter names to look up, as bytes (made once, used for every request).
  struct Names: Sendable {
    let utf8: [[UInt8]]

    init(_ names: [String]) {
      utf8 = names.map { Array($0.utf8) }
    }
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

  /// Checks that `bytes` are well-formed pairs, without making a string of any of them.
  static func check(_ bytes: ArraySlice<UInt8>) throws(Malformed) {
    var failure: Malformed?
    bytes.withUnsafeBufferPointer { buffer in
      do throws(Malformed) {
        try walk(buffer) { _, _ in }
      } catch {
        failure = error
      }
    }
    if let failure { throw failure }
  }

  /// The values of `names` (the first of each, nil when absent), found by comparing bytes: no
  /// dictionary, no string for a name that is not asked for. `bytes` must be well-formed (`check`).
  static func values(of names: Names, in bytes: ArraySlice<UInt8>) -> [String?] {
    var found = [String?](repeating: nil, count: names.utf8.count)
    bytes.withUnsafeBufferPointer { buffer in
      guard let base = buffer.baseAddress else { return }
      try? walk(buffer) { name, value in
        for position in names.utf8.indices where found[position] == nil {
          let candidate = names.utf8[position]
          guard candidate.count == name.count else { continue }
          let equal = candidate.withUnsafeBufferPointer {
            memcmp($0.baseAddress!, base + name.lowerBound, name.count)
          }
          if equal == 0 {
            found[position] = String(decoding: UnsafeBufferPointer(rebasing: buffer[value]), as: UTF8.self)
          }
        }
      }
    }
    return found
  }

  private static func decode(
    _ bytes: ArraySlice<UInt8>, _ pair: (String, String) -> Void
  ) throws(Malformed) {
    var failure: Malformed?
    bytes.withUnsafeBufferPointer { buffer in
      do throws(Malformed) {
        try walk(buffer) { name, value in
          pair(
            String(decoding: UnsafeBufferPointer(rebasing: buffer[name]), as: UTF8.self),
            String(decoding: UnsafeBufferPointer(rebasing: buffer[value]), as: UTF8.self))
        }
      } catch {
        failure = error
      }
    }
    if let failure { throw failure }
  }

  /// Calls `pair` with the index ranges (in `buffer`) of each name and value.
  private static func walk(
    _ buffer: UnsafeBufferPointer<UInt8>, _ pair: (Range<Int>, Range<Int>) -> Void
  ) throws(Malformed) {
    var index = 0
    let end = buffer.count
    while index < end {
      let nameLength = try length(buffer, &index)
      let valueLength = try length(buffer, &index)
      guard nameLength + valueLength <= end - index else {
        throw Malformed(reason: "a name-value pair is longer than the parameters")
      }
      pair(index..<index + nameLength, index + nameLength..<index + nameLength + valueLength)
      index += nameLength + valueLength
    }
  }

  private static func length(_ buffer: UnsafeBufferPointer<UInt8>, _ index: inout Int) throws(Malformed)
    -> Int
  {
    guard index < buffer.count else { throw Malformed(reason: "a name-value pair is cut short") }
    let first = buffer[index]
    guard first & 0x80 != 0 else {
      index += 1
      return Int(first)
    }
    guard buffer.count - index >= 4 else { throw Malformed(reason: "a four-byte length is cut short") }
    let value =
      Int(first & 0x7F) << 24 | Int(buffer[index + 1]) << 16 | Int(buffer[index + 2]) << 8
      | Int(buffer[index + 3])
    index += 4
    return value
  }
}
