/// What ``Database/importStation(_:withClaim:now:)`` did with an archive.
public struct StationImport: Sendable, Equatable {
  /// The entries stored: those of the archive the station's retention keeps on this server.
  public var entries: Int
  /// The archive's older entries left out: more than the station's retention keeps here (`[server] ringSize` a
  /// ring, or the station's `untilPulled` `max` for its own messages, at most `maxUnpulledPerStation`).
  public var dropped: Int
  /// How the archive's claim came along: `.unproven` when the operator brought it, nil when the station was
  /// imported unclaimed.
  public var claim: ClaimProof?

  /// A result; see the properties.
  public init(entries: Int, dropped: Int, claim: ClaimProof?) {
    self.entries = entries
    self.dropped = dropped
    self.claim = claim
  }
}
