/// What the listener did in each of the last 60 minutes (lines read, messages stored, ACKs sent): the status
/// page's chart. The listener keeps it in memory and publishes it with its status (`listener.history`); a
/// restart starts it empty. Pure value with its one text encoding beside it.
public struct ActivityHistory: Sendable, Equatable {
  /// One minute's counts.
  public struct Minute: Sendable, Equatable {
    /// The minute's start, epoch ms (a multiple of 60,000).
    public var start: Int64
    public var lines: Int
    public var stored: Int
    public var acks: Int

    public init(start: Int64, lines: Int = 0, stored: Int = 0, acks: Int = 0) {
      self.start = start
      self.lines = lines
      self.stored = stored
      self.acks = acks
    }
  }

  /// How many minutes are kept.
  public static let length = 60
  static let minuteMs: Int64 = 60_000

  /// The minutes with any record, oldest first, none older than ``length`` minutes before the newest.
  public private(set) var minutes: [Minute] = []

  public init(minutes: [Minute] = []) {
    self.minutes = minutes
  }

  /// Adds counts that happened at `now` (ms) to its minute, and forgets minutes that fell out of the hour.
  /// A clock that went back adds to the newest minute (never reorders).
  public mutating func add(lines: Int, stored: Int, acks: Int, at now: Int64) {
    let start = Self.minuteStart(now)
    if let last = minutes.last, last.start >= start {
      minutes[minutes.count - 1].lines += max(0, lines)
      minutes[minutes.count - 1].stored += max(0, stored)
      minutes[minutes.count - 1].acks += max(0, acks)
    } else {
      minutes.append(Minute(start: start, lines: max(0, lines), stored: max(0, stored), acks: max(0, acks)))
    }
    let oldest = minutes[minutes.count - 1].start - Int64(Self.length - 1) * Self.minuteMs
    minutes.removeAll { $0.start < oldest }
  }

  /// The counts of each of the ``length`` minutes ending with the one holding `now`, oldest first (zero where
  /// nothing was recorded): what a chart draws.
  public func series(endingAt now: Int64) -> [Minute] {
    let newest = Self.minuteStart(now)
    var byStart: [Int64: Minute] = [:]
    for minute in minutes { byStart[minute.start] = minute }
    return (0..<Self.length).map { index in
      let start = newest - Int64(Self.length - 1 - index) * Self.minuteMs
      return byStart[start] ?? Minute(start: start)
    }
  }

  /// The start of the minute holding `ms` (negative times too).
  static func minuteStart(_ ms: Int64) -> Int64 {
    ms - ((ms % minuteMs) + minuteMs) % minuteMs
  }

  /// `start:lines,stored,acks` per minute, separated by `;` (empty for none).
  public var text: String {
    minutes.map { "\($0.start):\($0.lines),\($0.stored),\($0.acks)" }.joined(separator: ";")
  }

  /// Decodes ``text``; a garbled minute is skipped, at most ``length`` are kept.
  public init(text: String) {
    var minutes: [Minute] = []
    for part in text.split(separator: ";").prefix(Self.length) {
      let halves = part.split(separator: ":", maxSplits: 1)
      guard halves.count == 2, let start = Int64(halves[0]), start % Self.minuteMs == 0 else { continue }
      let counts = halves[1].split(separator: ",").compactMap { Int($0) }
      guard counts.count == 3, counts.allSatisfy({ $0 >= 0 }) else { continue }
      minutes.append(Minute(start: start, lines: counts[0], stored: counts[1], acks: counts[2]))
    }
    self.minutes = minutes.sorted { $0.start < $1.start }
  }
}
