/// The listener's one live `#filter` line, as ``FilterPlanner/plan(maximumLineLength:)`` chose it.
///
/// `spec` is `g/E1/E2/…` (entries matching the **addressee** of messages) and, with outgoing tracking,
/// ` b/E1/…` (entries matching the **sender** of any packet); an entry is a station address (exact, SSID
/// included; a bare call's `CALL-0` beside it) or a prefix `P*` (1–8 characters before the `*`). With no station at all the spec is `g/*`,
/// which aprsc 2.1.21 accepts and which matches nothing (a bare `*` is an empty entry: docs/aprs-is.md
/// "Filters").
public struct FilterLine: Hashable, Sendable {
  /// One part of the line (`g/` or `b/`) and what it covers.
  public struct Part: Hashable, Sendable {
    /// The entries, sorted: station addresses and prefixes ending in `*`. Empty when the part is left out.
    public let entries: [String]
    /// Stations matched by an exact entry.
    public let exactStations: Int
    /// Stations matched only by a prefix entry.
    public let prefixStations: Int
    /// The model's share (0…1) of all traffic of this kind that the prefix entries let through
    /// (``AddresseeModel``): 0 for an exact list, about 1 when every first character is a prefix.
    public let estimatedShare: Double

    /// A part with no entries.
    public static let empty = Part(entries: [], exactStations: 0, prefixStations: 0, estimatedShare: 0)
  }

  /// The spec sent after `#filter `.
  public let spec: String
  /// The `g/` part: addressees of messages.
  public let addressees: Part
  /// The `b/` part: senders (outgoing tracking, watched calls, stations following their own transmissions);
  /// ``Part/empty`` without any.
  public let senders: Part
  /// The stations that asked to follow their own transmissions: whom the line follows, who fell back
  /// (``OwnTransmissionPlan/none`` when nobody asked).
  public internal(set) var ownTransmissions: OwnTransmissionPlan = .none

  /// `#filter SPEC` + CR LF, ready to send.
  public var line: [UInt8] { OutgoingLine.filter(spec) }
  /// The length of ``line`` in bytes, CR LF included (`/health` `filterBytes`).
  public var byteCount: Int { spec.utf8.count + FilterPlanner.lineOverhead }
  /// All entries of both parts (`/health` `filterEntries`).
  public var entryCount: Int { addressees.entries.count + senders.entries.count }
  /// Stations matched by an exact entry in either part (`/health` `filterExactStations`).
  public var exactStationCount: Int { addressees.exactStations + senders.exactStations }
  /// True when every station has its own exact entry: the line lets nothing else through.
  public var isExact: Bool { addressees.prefixStations == 0 && senders.prefixStations == 0 }

  /// The line for no stations: `#filter g/*`.
  public static let empty = FilterLine(spec: "g/*", addressees: .empty, senders: .empty)
}
