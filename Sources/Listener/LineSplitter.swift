/// Cuts the bytes read from APRS-IS into lines.
///
/// A line ends at CR, LF or CR LF (empty lines are skipped). APRS-IS lines are at most 512 bytes with CR LF, so a
/// line of more than ``maximumContentLength`` bytes is not returned: its bytes are discarded up to its end and it is
/// reported once as ``Piece/tooLong(length:)``. Bytes are never decoded; any byte value is fine.
struct LineSplitter: Sendable {
  /// The longest line content kept (512 bytes with CR LF).
  static let maximumContentLength = 510

  /// What ``feed(_:_:)`` produces.
  enum Piece: Equatable, Sendable {
    /// A complete line without its ending.
    case line([UInt8])
    /// A line longer than ``LineSplitter/maximumContentLength``, discarded; `length` is its content length.
    case tooLong(length: Int)
  }

  private var partial: [UInt8] = []
  private var discarding = false
  private var discardedLength = 0

  init() {}

  /// Bytes of a line still waiting for its end.
  var pendingCount: Int { discarding ? discardedLength : partial.count }

  /// Forgets a partial line (the connection was closed).
  mutating func reset() {
    partial.removeAll(keepingCapacity: true)
    discarding = false
    discardedLength = 0
  }

  /// Splits `bytes` (continuing any partial line) and calls `emit` for every complete line, in order.
  mutating func feed(_ bytes: UnsafeRawBufferPointer, _ emit: (Piece) -> Void) {
    var start = 0
    let count = bytes.count
    var index = 0
    while index < count {
      let byte = bytes[index]
      if byte == 0x0A || byte == 0x0D {
        finish(bytes, start, index, emit)
        start = index + 1
      }
      index += 1
    }
    if start < count { append(bytes, start, count) }
  }

  /// Same as ``feed(_:_:)`` for an array (tests).
  mutating func feed(_ bytes: [UInt8], _ emit: (Piece) -> Void) {
    bytes.withUnsafeBytes { feed($0, emit) }
  }

  private mutating func append(_ bytes: UnsafeRawBufferPointer, _ lower: Int, _ upper: Int) {
    if discarding {
      discardedLength += upper - lower
      return
    }
    if partial.count + (upper - lower) > Self.maximumContentLength {
      discarding = true
      discardedLength = partial.count + (upper - lower)
      partial.removeAll(keepingCapacity: true)
      return
    }
    partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[lower..<upper]))
  }

  private mutating func finish(
    _ bytes: UnsafeRawBufferPointer, _ lower: Int, _ upper: Int, _ emit: (Piece) -> Void
  ) {
    append(bytes, lower, upper)
    if discarding {
      emit(.tooLong(length: discardedLength))
      discarding = false
      discardedLength = 0
      return
    }
    guard !partial.isEmpty else { return }
    emit(.line(partial))
    partial.removeAll(keepingCapacity: true)
  }
}
