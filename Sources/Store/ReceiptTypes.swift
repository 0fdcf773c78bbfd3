/// What a delivery receipt says; stored as its raw value (`receipts.kind`).
public enum ReceiptKind: String, Sendable, CaseIterable {
  /// The message was received.
  case ack
  /// The message was refused.
  case rej
}

/// An ack or rej that APRS-IS carried to a registered station: proof its message was delivered (or refused).
public struct DeliveryReceipt: Sendable, Equatable {
  /// The registered station the ack or rej is addressed to (any case; stored upper-case).
  public var station: String
  /// Who sent the ack or rej (the peer the station messaged).
  public var peer: String
  /// The message number acknowledged or rejected.
  public var msgno: String
  /// An ack or a rej.
  public var kind: ReceiptKind
  /// The reply-ack `AA` of `ackMM}AA`, if any.
  public var replyAck: String?
  /// When it was received, epoch ms (filled in by the store from `now` when recorded).
  public var receivedAt: Int64

  /// A receipt; see the properties.
  public init(
    station: String, peer: String, msgno: String, kind: ReceiptKind, replyAck: String?, receivedAt: Int64 = 0
  ) {
    self.station = station
    self.peer = peer
    self.msgno = msgno
    self.kind = kind
    self.replyAck = replyAck
    self.receivedAt = receivedAt
  }
}
