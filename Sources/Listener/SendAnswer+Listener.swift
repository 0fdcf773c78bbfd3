import Store

extension SendAnswer {
  /// What an ack or rej addressed to a served station says about the station's sends: the addressee
  /// (`receipt.peer`) answered message number `receipt.msgno`.
  init(_ receipt: DeliveryReceipt) {
    self.init(
      station: receipt.station, peer: receipt.peer, msgno: receipt.msgno,
      kind: receipt.kind == .rej ? .rej : .ack)
  }

  /// The reply-ack a received message carries (APRS 1.1: `{MM}AA`, where `AA` acknowledges the receiver's own
  /// message `AA`), nil when it carries none (no `}`, or `{MM}` with nothing after it). `message.msgno` holds
  /// everything after `{` (``APRS/AddressedPacket/seqId``).
  init?(replyAckIn message: IncomingMessage) {
    // A copy for another SSID of the call (`to` set) answers that SSID's message, not one of the station's.
    guard message.direction == .received, message.to == nil, let seqId = message.msgno,
      let brace = seqId.firstIndex(of: "}")
    else { return nil }
    let acked = seqId[seqId.index(after: brace)...]
    guard !acked.isEmpty else { return nil }
    self.init(station: message.station, peer: message.peer, msgno: String(acked), kind: .replyAck)
  }
}
