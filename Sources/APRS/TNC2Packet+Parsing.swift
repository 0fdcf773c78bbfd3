extension TNC2Packet {
  /// The longest line APRS-IS carries, CR LF included.
  public static let maximumLineLength = 512
  /// The longest line without its CR LF: longer lines are ``TNC2Error/tooLong(length:)``.
  public static let maximumContentLength = maximumLineLength - 2
  /// The longest source call.
  public static let maximumSourceLength = 9

  /// Parses one APRS-IS line.
  ///
  /// Accepts a CR, LF or CR LF ending, or none (all trailing CR and LF bytes are dropped). The rest must be at
  /// most 510 bytes. A line starting with `#` is a ``TNC2Line/comment(_:)``. Otherwise the header up to the
  /// first `:` must hold `SOURCE>DESTINATION[,PATH…]`; the source is checked as APRS-IS does (1–9 letters,
  /// digits or `-`, either case); path elements must not be empty; nothing else is validated. Control bytes
  /// and invalid UTF-8 are fine anywhere: the header is decoded leniently, the information field not at all.
  public static func parse(_ line: some Collection<UInt8>) -> Result<TNC2Line, TNC2Error> {
    if let result = line.withContiguousStorageIfAvailable({ parse(buffer: $0) }) { return result }
    return Array(line).withUnsafeBufferPointer { parse(buffer: $0) }
  }

  /// ``parse(_:)`` on contiguous bytes.
  static func parse(buffer: UnsafeBufferPointer<UInt8>) -> Result<TNC2Line, TNC2Error> {
    var upper = buffer.count
    while upper > 0 && (buffer[upper - 1] == ASCII.lf || buffer[upper - 1] == ASCII.cr) { upper -= 1 }
    guard upper > 0 else { return .failure(.empty) }
    guard upper <= maximumContentLength else { return .failure(.tooLong(length: upper)) }
    if buffer[0] == ASCII.hash { return .success(.comment(Array(buffer[0..<upper]))) }
    switch scanPacket(buffer, 0, upper) {
    case .failure(let error): return .failure(error)
    case .success(let scan): return .success(.packet(TNC2Packet(buffer, scan)))
    }
  }

  /// Builds the packet's strings and arrays from a successful scan.
  private init(_ buffer: UnsafeBufferPointer<UInt8>, _ scan: TNC2Scan) {
    source = String(decoding: UnsafeBufferPointer(rebasing: buffer[scan.source]), as: UTF8.self)
    destination = String(decoding: UnsafeBufferPointer(rebasing: buffer[scan.destination]), as: UTF8.self)
    var path: [String] = []
    if !scan.path.isEmpty {
      var start = scan.path.lowerBound
      for index in scan.path where buffer[index] == ASCII.comma {
        path.append(String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self))
        start = index + 1
      }
      path.append(
        String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<scan.path.upperBound]), as: UTF8.self))
    }
    self.path = path
    information = Array(buffer[scan.information])
  }

  /// Finds the header's parts in `buffer[lower..<upper]` (no line ending, no `#` check) without allocating.
  /// Also used on the inner packet of a third-party `}` wrapper.
  static func scanPacket(
    _ buffer: UnsafeBufferPointer<UInt8>, _ lower: Int, _ upper: Int
  ) -> Result<TNC2Scan, TNC2Error> {
    var colon = lower
    var greaterThan = -1
    while colon < upper {
      let byte = buffer[colon]
      if byte == ASCII.colon { break }
      if byte == ASCII.greaterThan && greaterThan < 0 { greaterThan = colon }
      colon += 1
    }
    guard colon < upper else { return .failure(.noInformation) }
    guard greaterThan >= 0 else { return .failure(.noSource) }

    let sourceLength = greaterThan - lower
    guard sourceLength >= 1 && sourceLength <= maximumSourceLength else { return .failure(.invalidSource) }
    for index in lower..<greaterThan {
      let byte = buffer[index]
      guard ASCII.isAlphanumeric(byte) || byte == ASCII.hyphen else { return .failure(.invalidSource) }
    }

    var destinationEnd = greaterThan + 1
    while destinationEnd < colon && buffer[destinationEnd] != ASCII.comma { destinationEnd += 1 }
    guard destinationEnd > greaterThan + 1 else { return .failure(.noDestination) }

    var path = colon..<colon
    if destinationEnd < colon {
      // Every element between commas must be non-empty: no ",," and no trailing ",".
      var previous = destinationEnd
      for index in (destinationEnd + 1)..<colon where buffer[index] == ASCII.comma {
        guard index > previous + 1 else { return .failure(.invalidPath) }
        previous = index
      }
      guard colon > previous + 1 else { return .failure(.invalidPath) }
      path = (destinationEnd + 1)..<colon
    }
    return .success(
      TNC2Scan(
        source: lower..<greaterThan, destination: (greaterThan + 1)..<destinationEnd, path: path,
        information: (colon + 1)..<upper))
  }
}
