/// Which of a station's devices its governing claim governs (docs/design.md "Who may do what"): read beside the
/// station's settings by the listener and the push sender, never set.
///
/// A claim governs the devices it brought (registered with its key, or first registered after it was made) and
/// those it adopted (the device whose pushed code proved it, keyed since). A keyless device registered before
/// the claim was made is the station's earlier user's: for it every message is stored, pushed and ACKed as it
/// would be without the claim, so a squatter's mute, quiet hours, blocked calls or ACK policy never reach it.
public struct ClaimReach: Sendable, Equatable {
  /// When the governing claim was made (`stations.claimed_at`), epoch ms.
  public var claimedAt: Int64
  /// How many keyless devices registered before ``claimedAt`` the station has.
  public var earlierDevices: Int
  /// Whether one of them asked for ACKs: its last register carried `ackMessages:true` (`devices.ack_messages`).
  public var earlierWantAcks: Bool

  /// A reach; see the properties.
  public init(claimedAt: Int64, earlierDevices: Int = 0, earlierWantAcks: Bool = false) {
    self.claimedAt = claimedAt
    self.earlierDevices = earlierDevices
    self.earlierWantAcks = earlierWantAcks
  }

  /// Whether the claim governs `device`: keyed, or first registered when the claim was made or later.
  public func governs(_ device: DeviceRecord) -> Bool { device.keyed || device.registeredAt >= claimedAt }
}
