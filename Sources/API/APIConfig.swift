/// The limits and windows the API enforces. Defaults suit a public server.
public struct APIConfig: Sendable {
  /// Largest accepted request body (PROTOCOL.md: 64 KiB).
  public var maxBodyBytes = 65_536
  /// A station is live (in the filter, its devices used) while heard within this window.
  public var stationExpiryMs: Int64 = 7 * 24 * 3_600_000
  /// Registrations per station per hour.
  public var registrationsPerHour = 60
  /// Heartbeats per station per hour (the app sends one per 6 h, and one per avatar change).
  public var heartbeatsPerHour = 60
  /// Avatar uploads per station per hour.
  public var avatarUploadsPerHour = 20
  /// Whether `/v1/sync` may report outgoing (`"sent"`) messages.
  public var includeSent = true

  public init() {}
}
