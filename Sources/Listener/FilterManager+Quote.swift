extension FilterManager {
  /// How many bytes of a `#filter` spec aprsc quotes in its `# filter … active` answer: it keeps the spec in a
  /// 256-byte buffer for its status page and answers from that copy (`FILTER_S_SIZE` in aprsc's src/worker.h,
  /// `filter_commands` in src/filter.c), so a longer spec comes back cut to its first 255 bytes.
  static let quotedSpecLimit = 255

  /// The spec as aprsc quotes it back for a `#filter` line that sent `sent`: its first ``quotedSpecLimit``
  /// bytes, with every control or non-ASCII byte replaced by `_` (aprsc's `sanitize_ascii_string`), and without
  /// surrounding blanks (``ServerComment`` reads the answer that way). Pure.
  static func quotedAnswer(for sent: String) -> String {
    var quoted = Array(sent.utf8.prefix(quotedSpecLimit))
    for index in quoted.indices where quoted[index] < 0x20 || quoted[index] >= 0x7F {
      quoted[index] = UInt8(ascii: "_")
    }
    while let first = quoted.first, first == UInt8(ascii: " ") { quoted.removeFirst() }
    while let last = quoted.last, last == UInt8(ascii: " ") { quoted.removeLast() }
    return String(decoding: quoted, as: UTF8.self)
  }

  /// True when `answer` (the spec of a `# filter … active` line) confirms the `#filter` line that sent `sent`:
  /// it echoes the spec whole, or, for a spec longer than aprsc quotes, exactly its first 255 bytes.
  static func answerConfirms(_ answer: String, sent: String) -> Bool {
    answer == sent || answer == quotedAnswer(for: sent)
  }
}
