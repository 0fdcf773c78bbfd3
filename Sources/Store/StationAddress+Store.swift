extension String {
  /// The store's canonical form of a station address: trimmed of spaces and upper-cased in
  /// ASCII only, exactly as SQLite's `upper()` does, so the schema's CHECKs agree with it.
  var canonicalAddress: String {
    var bytes = Array(utf8)
    while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
    let start = bytes.firstIndex { $0 != 0x20 && $0 != 0x09 } ?? bytes.endIndex
    return String(
      decoding: bytes[start...].map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }, as: UTF8.self)
  }
}
