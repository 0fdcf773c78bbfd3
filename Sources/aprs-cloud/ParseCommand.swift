import APRS
import JSON
import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// `aprs-cloud parse`: TNC2 lines on stdin → one JSON object per line on stdout.
enum ParseCommand: Command {
  static let name = "parse"
  static let summary = "classify TNC2 lines from stdin, one JSON object per line"
  static let usage = """
    usage: aprs-cloud parse < lines.txt

    Reads APRS-IS (TNC2) lines on standard input and prints one JSON object per
    line with the keys kind (message, ack, rej, bulletin, announcement, weather,
    telemetry, query, other, comment, invalid), source, addressee, text, msgno,
    replyAck and error; keys that do not apply are left out. A bad line is
    reported as kind "invalid" with the reason in error; it never stops the run.

    example: echo 'OH7AA-1>APRS::OH7LZB   :Testing{42' | aprs-cloud parse
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    guard arguments.isEmpty else {
      printError(usage)
      return .usage
    }
    var reader = LineReader(fileDescriptor: 0)
    var output: [UInt8] = []
    while let line = reader.nextLine() {
      var writer = JSONWriter()
      write(LineSummary.summarize(line), to: &writer)
      output += writer.bytes
      output.append(0x0A)
      if output.count >= 1 << 16 {
        writeAll(1, output)
        output.removeAll(keepingCapacity: true)
      }
    }
    writeAll(1, output)
    return .success
  }

  /// The JSON form of one summary: keys that do not apply are absent.
  static func write(_ summary: LineSummary, to writer: inout JSONWriter) {
    writer.beginObject()
    writer.key("kind")
    writer.string(summary.kind)
    let fields: [(String, String?)] = [
      ("source", summary.source), ("addressee", summary.addressee), ("text", summary.text),
      ("msgno", summary.msgno), ("replyAck", summary.replyAck), ("error", summary.error),
    ]
    for (key, value) in fields {
      guard let value else { continue }
      writer.key(key)
      writer.string(value)
    }
    writer.endObject()
  }
}

/// Splits a file descriptor's bytes into lines on LF, keeping any CR for the parser to judge.
struct LineReader {
  private let fileDescriptor: Int32
  private var buffer: [UInt8] = []
  private var start = 0
  private var atEnd = false

  init(fileDescriptor: Int32) { self.fileDescriptor = fileDescriptor }

  /// The next line without its LF, or nil at end of input. A final line without LF still counts.
  mutating func nextLine() -> ArraySlice<UInt8>? {
    while true {
      if let newline = buffer[start...].firstIndex(of: 0x0A) {
        let line = buffer[start..<newline]
        start = newline + 1
        return line
      }
      if atEnd {
        guard start < buffer.count else { return nil }
        let line = buffer[start...]
        start = buffer.count
        return line
      }
      fill()
    }
  }

  private mutating func fill() {
    if start > 0 {
      buffer.removeSubrange(0..<start)
      start = 0
    }
    var chunk = [UInt8](repeating: 0, count: 65536)
    let count = chunk.withUnsafeMutableBytes { read(fileDescriptor, $0.baseAddress, $0.count) }
    if count <= 0 {
      atEnd = true
    } else {
      buffer.append(contentsOf: chunk[0..<count])
    }
  }
}
