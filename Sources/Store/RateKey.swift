/// The key prefixes of the `rate_limits` windows the responder counts under (a prefix + the station address or
/// the client address key): one place, since `aprs-cloud stations --top` (``Database/topTalkers(now:limit:)``)
/// reads the same windows back by prefix.
public enum RateKey {
  /// Per station: registrations (`[ratelimit] registrationsPerHour`).
  public static let registrations = "registrations:"
  /// Per station: heartbeats (`heartbeatsPerHour`).
  public static let heartbeats = "heartbeats:"
  /// Per client address: new stations (`newStationsPerAddressPerHour`).
  public static let newStationsFromAddress = "new stations from:"
  /// Per IPv4 /24 or IPv6 /48: new stations (`newStationsPerNetworkPerHour`).
  public static let newStationsFromNetwork = "new stations from network:"
  /// Per IPv6 /32: new stations (`newStationsPerWideNetworkPerHour`).
  public static let newStationsFromWideNetwork = "new stations from wide network:"
  /// Per client address: claims (`claimsPerAddressPerHour`).
  public static let claimsFromAddress = "claims from:"
  /// Per IPv4 /24 or IPv6 /48: claims (`claimsPerNetworkPerHour`).
  public static let claimsFromNetwork = "claims from network:"
  /// Per mailbox (`MailboxKey.mailbox(_:)`): confirmation mails of email forward targets
  /// (``ForwardTarget/confirmationsPerDay`` in 24 hours, whatever station asks).
  public static let forwardConfirmationsTo = "forward confirmations to:"
  /// Per mail domain (lower case) that is not a big public provider's: confirmation mails of email forward targets
  /// (``ForwardTarget/confirmationsPerDomainPerDay`` in 24 hours, whatever station asks).
  public static let forwardConfirmationsToDomain = "forward confirmations to domain:"
  /// Per station: confirmation mails it sent (``ForwardTarget/confirmationsPerStationPerDay`` in 24 hours).
  public static let forwardConfirmationsFrom = "forward confirmations from:"
  /// Per station: rounds of claim codes pushed to its devices (``ClaimRequest/roundsPerStationPerDay`` in 24
  /// hours, whatever claim asks).
  public static let claimCodeRounds = "claim code rounds:"
  /// Per station and client: rounds of claim codes (``ClaimRequest/roundsPerClientPerDay``), keyed
  /// `<station> from:<client>`.
  public static let claimCodeRoundsFrom = "claim code rounds of:"
}
