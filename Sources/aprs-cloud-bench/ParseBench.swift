import APRS

/// `parse CORPUS_FILE [ITERATIONS]`: TNC2 parse + classify on every line of a corpus, ITERATIONS times
/// (default 10) after one warm-up pass. Prints `swift-aprs parse: <lines> lines in <s> s = <rate> lines/s`
/// on stdout and the kinds seen in one pass on stderr.
enum ParseBench: Benchmark {
  static let name = "parse"
  static let usage = "parse CORPUS_FILE [ITERATIONS]   TNC2 parse + classify every line (default 10 passes)"

  static func run(_ arguments: [String]) -> Int32 {
    guard (1...2).contains(arguments.count) else {
      printError("usage: aprs-cloud-bench \(usage)")
      return 2
    }
    guard let corpus = readFile(arguments[0]) else {
      printError("aprs-cloud-bench parse: cannot read \(arguments[0])")
      return 1
    }
    guard let iterations = arguments.count == 2 ? Int(arguments[1]) : 10, iterations > 0 else {
      printError("aprs-cloud-bench parse: ITERATIONS must be a positive integer")
      return 2
    }
    let lines = splitLines(corpus)

    var kinds: [String: Int] = [:]
    for line in lines { kinds[kind(of: corpus[line]), default: 0] += 1 }
    printError(kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))

    let clock = ContinuousClock()
    var checksum = 0
    let start = clock.now
    for _ in 0..<iterations {
      for line in lines { checksum &+= work(corpus[line]) }
    }
    let elapsed = seconds(start.duration(to: clock.now))
    let total = lines.count * iterations
    print(
      "swift-aprs parse: \(total) lines in \(fixed(elapsed, decimals: 3)) s = "
        + "\(Int((Double(total) / elapsed).rounded())) lines/s")
    if checksum == 0 { printError("(checksum 0)") }  // keeps the work observable
    return 0
  }

  /// The measured work for one line: parse, then classify a packet. Returns a number that depends on the result.
  @inline(never)
  static func work(_ line: ArraySlice<UInt8>) -> Int {
    switch TNC2Packet.parse(line) {
    case .success(.packet(let packet)):
      switch AddressedPacket.classify(packet) {
      case .addressed(let message): return message.text.utf8.count &+ message.addressee.utf8.count
      case .other: return packet.information.count
      }
    case .success(.comment(let bytes)): return bytes.count
    case .failure: return 1
    }
  }

  /// The summary kind of a line (for the stderr breakdown).
  static func kind(of line: ArraySlice<UInt8>) -> String {
    LineSummary(line: line).kind
  }

  /// Ranges of the lines split on LF (each keeps its CR; the parser drops it); no empty trailing line.
  static func splitLines(_ bytes: [UInt8]) -> [Range<Int>] {
    var lines: [Range<Int>] = []
    var start = 0
    for index in bytes.indices where bytes[index] == 0x0A {
      lines.append(start..<index)
      start = index + 1
    }
    if start < bytes.count { lines.append(start..<bytes.count) }
    return lines
  }
}
