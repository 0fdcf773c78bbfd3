/// `[send]`: messages the phones hand to the server (`/v1/send`), which the listener transmits and retries until
/// the addressee answers. Read by both programs: the responder takes the switch and the limits, the listener
/// the schedule.
///
/// ```ini
/// [send]
/// enabled = true          ; /v1/send on (the listener also needs a verified [aprsis] login)
/// perMinute = 10          ; sends accepted per station per minute (429 past it)
/// inFlight = 20           ; sends of one station waiting for an answer at once (429 past it)
/// sendsPerAddressPerMinute = 20   ; sends accepted per client address (IPv4, IPv6 /64) per minute (429)
/// sendsPerMinuteGlobal = 30       ; sends accepted per minute from everyone together (429 past it)
/// bulletinsPerDay = 4     ; bulletins and announcements accepted per station in any 24 h (429 past it)
/// transmitBudgetPerMinute = 60    ; lines the listener transmits per minute, first copies and retries
/// schedule = 0, 31, 62, 124, 248, 496, 992, 1984   ; seconds after the send at which a copy goes out
/// ackWait = 60s           ; after the last copy, how long an answer may take before the message expires
/// poll = 250ms            ; how often the listener looks for new sends
/// ```
///
/// The schedule's copies must be at least 31 s apart: APRS-IS drops a line identical to one it passed within
/// 30 s, counted in whole seconds, so a copy 30 s after the previous one is usually dropped (docs/aprs-is.md "Sending ACKs").
///
/// The limits keep the server from flooding APRS-IS under the operator's login (docs/design.md "Who may do what"):
/// the responder refuses sends past the per-station, per-address and global limits, and the listener writes at
/// most `transmitBudgetPerMinute` lines of sent messages in any minute; copies past the budget wait their turn
/// (the copy due first goes first), none is dropped.
public struct SendConfig: Sendable, Equatable {
  /// The least time between two copies of one message (ms).
  public static let minimumSpacingMs: Int64 = 31_000
  /// The default schedule (s): the decaying half hour of APRS's author.
  public static let defaultScheduleSeconds: [Int64] = [0, 31, 62, 124, 248, 496, 992, 1984]
  /// The most copies a schedule may have.
  public static let maximumCopies = 20
  /// The latest copy a schedule may have (ms): a day.
  public static let maximumOffsetMs: Int64 = 86_400_000

  /// `/v1/send` is on.
  public var enabled = true
  /// Sends accepted per station per minute.
  public var perMinute = 10
  /// Sends of one station in flight at once.
  public var inFlight = 20
  /// Sends accepted per client address (`ClientAddress`: the IPv4 address, or the IPv6 /64) per minute.
  public var sendsPerAddressPerMinute = 20
  /// Sends accepted per minute over every station and address together.
  public var sendsPerMinuteGlobal = 30
  /// Bulletins and announcements (`BLN…` sends) accepted per station in any 24 h; each also counts as a send
  /// against the per-minute limits.
  public var bulletinsPerDay = 4
  /// Lines of sent messages (first copies and retries together) the listener writes in any 60 s at most.
  public var transmitBudgetPerMinute = 60
  /// When each copy goes out, ms after the send: starts at 0 or later, strictly increasing, at least
  /// ``minimumSpacingMs`` apart.
  public var scheduleMs: [Int64] = SendConfig.defaultScheduleSeconds.map { $0 * 1000 }
  /// How long an answer may take after the last copy before the message is `expired` (ms).
  public var ackWaitMs: Int64 = 60_000
  /// How often the listener looks for new sends where its wake socket cannot be bound (ms); with it, each
  /// `/v1/send` wakes the sender at once and the look is every 30 s (`WakeSocket.Role.listener.fallbackPollMs`).
  public var pollMs: Int64 = 250

  /// The defaults.
  public init() {}

  /// Reads and validates `[send]`, falling back to the defaults.
  public init(_ config: ConfigFile) throws(ConfigError) {
    let defaults = SendConfig()
    let section = "send"
    enabled = try config.bool(section, "enabled", default: defaults.enabled)
    perMinute = try config.int(section, "perMinute", default: defaults.perMinute, range: 1...10_000)
    inFlight = try config.int(section, "inFlight", default: defaults.inFlight, range: 1...1000)
    sendsPerAddressPerMinute = try config.int(
      section, "sendsPerAddressPerMinute", default: defaults.sendsPerAddressPerMinute, range: 1...100_000)
    sendsPerMinuteGlobal = try config.int(
      section, "sendsPerMinuteGlobal", default: defaults.sendsPerMinuteGlobal, range: 1...1_000_000)
    bulletinsPerDay = try config.int(
      section, "bulletinsPerDay", default: defaults.bulletinsPerDay, range: 1...1000)
    transmitBudgetPerMinute = try config.int(
      section, "transmitBudgetPerMinute", default: defaults.transmitBudgetPerMinute, range: 1...10_000)
    if let value = config.value(section, "schedule") {
      scheduleMs = try Self.schedule(value)
    }
    ackWaitMs = try config.duration(section, "ackWait", default: defaults.ackWaitMs, range: 1_000...3_600_000)
    pollMs = try config.duration(section, "poll", default: defaults.pollMs, range: 20...60_000)
  }

  /// Parses `schedule`: comma-separated durations (a plain number is seconds), checked against the rules above.
  static func schedule(_ value: ConfigFile.Value) throws(ConfigError) -> [Int64] {
    func invalid(_ reason: String) -> ConfigError {
      .invalidValue(key: "send.schedule", value: value.text, source: value.source.description, reason: reason)
    }
    var offsets: [Int64] = []
    for item in value.text.split(separator: ",", omittingEmptySubsequences: false) {
      let text = item.filter { $0 != " " && $0 != "\t" }
      guard let offset = ConfigFile.parseDuration(String(text)) else {
        throw invalid("expected comma-separated times such as 0, 31, 62 (seconds) or 31s, 1m")
      }
      offsets.append(offset)
    }
    guard !offsets.isEmpty, offsets.count <= maximumCopies else {
      throw invalid("expected 1 to \(maximumCopies) times")
    }
    guard offsets.last! <= maximumOffsetMs else { throw invalid("the last copy must be within a day") }
    for (previous, next) in zip(offsets, offsets.dropFirst()) where next - previous < minimumSpacingMs {
      throw invalid(
        "copies must be at least 31 s apart (APRS-IS drops a line identical to one it passed within 30 s,"
          + " counted in whole seconds)")
    }
    return offsets
  }

  /// The keys this struct reads.
  public static let schema = ConfigSchema(sections: [
    "send": [
      "enabled", "perMinute", "inFlight", "sendsPerAddressPerMinute", "sendsPerMinuteGlobal",
      "bulletinsPerDay", "transmitBudgetPerMinute", "schedule", "ackWait", "poll",
    ]
  ])
}
