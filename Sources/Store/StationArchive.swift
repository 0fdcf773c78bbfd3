import APRS

/// Everything the server holds of one station that its owner may take to another server (docs/protocol.md
/// "Owned stations", `POST /v1/export`; `aprs-cloud stations CALL --export FILE` and `aprs-cloud import FILE`):
/// its claim, settings, subscriptions, read markers and every stored entry (received and sent messages, the
/// entries of other SSIDs and of subscriptions), oldest first.
///
/// What is not in it: push tokens (a device registers anew with the new server), the audit trail, dedup and ACK
/// state, the watches' states (a watch starts anew), drops and the rate limits.
public struct StationArchive: Sendable, Equatable {
  /// The station's address, upper case (`N0CALL-7`, or `N0CALL` for SSID 0).
  public var station: String
  /// Its claim (the station key's SHA-256 and when it was claimed), nil for an unclaimed station.
  public var claim: ArchivedClaim?
  /// Its settings.
  public var settings: StationSettings
  /// Its subscriptions, in order, each with its id (the entries name them).
  public var subscriptions: [Subscription]
  /// Its read markers: peer (or `*`) → the newest message timestamp read, epoch ms.
  public var readMarkers: [String: Int64]
  /// Every stored entry, oldest first; `timestamp` is unique across a database (the sync cursor).
  public var entries: [StoredMessage]

  /// An archive; see the properties.
  public init(
    station: String, claim: ArchivedClaim?, settings: StationSettings, subscriptions: [Subscription],
    readMarkers: [String: Int64], entries: [StoredMessage]
  ) {
    self.station = station
    self.claim = claim
    self.settings = settings
    self.subscriptions = subscriptions
    self.readMarkers = readMarkers
    self.entries = entries
  }

  /// The most entries one archive holds: every ring of a station (three of `ringSize`, at most 1,000 each) and
  /// the largest `untilPulled` inbox (`maxUnpulledPerStation`, at most 100,000) fit; an import of a document with
  /// more is refused.
  public static let maximumEntries = 250_000
}

/// A claim as an archive carries it: the key itself is never stored, only its SHA-256, so the owner's key goes
/// on working on the server the archive is imported into.
public struct ArchivedClaim: Sendable, Equatable {
  /// The station key's SHA-256, 64 lower-case hex digits.
  public var keyHash: String
  /// When the station was claimed, epoch ms.
  public var claimedAt: Int64

  /// A claim; see the properties.
  public init(keyHash: String, claimedAt: Int64) {
    self.keyHash = keyHash
    self.claimedAt = claimedAt
  }
}
