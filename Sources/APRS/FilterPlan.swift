/// The APRS-IS filter for a set of registered stations, and where it fits.
///
/// `g/` parts match the **addressee** (messages, acks, rejs, third-party ones too); optional `b/` parts match
/// the **sender**, for outgoing tracking. Entries are upper case, deduplicated and sorted so the same set
/// always gives the same spec, and chunked into parts of at most ``entriesPerPart`` calls
/// (`g/A/B/C g/D/E …`): aprsc parses each part separately and long parts are where clients and servers
/// disagree, so 30 keeps every part short (about 300 bytes) without wasting many bytes on `g/` prefixes.
///
/// `#filter` replaces the whole filter, so the spec is never split over several `#filter` lines: either the
/// one line fits (``FilterMode/live``), or the spec goes into the login line (``FilterMode/login``), or it is
/// left out and the listener takes the full feed (``FilterMode/fullFeed``).
public struct FilterPlan: Hashable, Sendable {
  /// The longest `#filter` line APRS-IS accepts, CR LF included; a longer one is dropped silently.
  public static let maximumLiveLineLength = 510
  /// The longest login line this plan puts a filter into, CR LF included. aprsc reads about 8 KB per line;
  /// 8000 stays safely below.
  public static let maximumLoginLineLength = 8000
  /// Bytes of the login line reserved for everything but the spec (`user … pass … vers … … filter `, CR LF).
  public static let loginLineReserve = 200
  /// The most calls in one `g/` or `b/` part.
  public static let entriesPerPart = 30
  /// The bytes `#filter ` and CR LF add to a spec.
  static let liveLineOverhead = 10

  /// The `g/` entries: the stations' addresses (`CALL` or `CALL-SSID`), sorted, without duplicates.
  public let addressees: [String]
  /// The `b/` entries (outgoing tracking), sorted, without duplicates.
  public let senders: [String]
  /// The filter parts, `g/…` first, then `b/…`.
  public let parts: [String]
  /// The whole filter spec: ``parts`` joined by spaces; empty when there are no stations.
  public let spec: String
  /// Where the spec fits.
  public let mode: FilterMode

  /// A plan for messages addressed to `stations`.
  public init(stations: some Sequence<StationAddress>) {
    self.init(stations: stations, tracking: [StationAddress]())
  }

  /// A plan for messages addressed to `stations` plus everything sent by `tracking`.
  public init(stations: some Sequence<StationAddress>, tracking: some Sequence<StationAddress>) {
    addressees = Set(stations.lazy.map(\.description)).sorted()
    senders = Set(tracking.lazy.map(\.description)).sorted()
    parts = Self.parts("g/", addressees) + Self.parts("b/", senders)
    spec = parts.joined(separator: " ")
    let length = spec.utf8.count
    if length + Self.liveLineOverhead <= Self.maximumLiveLineLength {
      mode = .live
    } else if length + Self.loginLineReserve <= Self.maximumLoginLineLength {
      mode = .login
    } else {
      mode = .fullFeed
    }
  }

  /// The length of the `#filter` line for this spec, CR LF included.
  public var liveLineLength: Int { spec.utf8.count + Self.liveLineOverhead }

  /// The `#filter SPEC` line when the mode is ``FilterMode/live``, else nil.
  public var liveLine: [UInt8]? {
    mode == .live ? OutgoingLine.filter(spec) : nil
  }

  /// The login line: with ` filter SPEC` unless the mode is ``FilterMode/fullFeed`` (the full-feed port
  /// takes no filter) or there are no stations.
  public func loginLine(
    user: some StringProtocol, passcode: Int, softwareName: some StringProtocol,
    softwareVersion: some StringProtocol
  ) -> [UInt8] {
    OutgoingLine.login(
      user: user, passcode: passcode, softwareName: softwareName, softwareVersion: softwareVersion,
      filter: mode == .fullFeed ? nil : spec)
  }

  /// `prefix` + up to ``entriesPerPart`` entries joined by `/`, for each chunk.
  private static func parts(_ prefix: String, _ entries: [String]) -> [String] {
    stride(from: 0, to: entries.count, by: entriesPerPart).map { start in
      prefix + entries[start..<min(start + entriesPerPart, entries.count)].joined(separator: "/")
    }
  }
}
