/// What an APRS-IS packet is, as far as the listener cares. The raw values are the `kind` strings of
/// `aprs-cloud parse` and of ``LineSummary``.
public enum PacketKind: String, Hashable, Sendable, CaseIterable {
  /// A personal message: the only kind that is stored, pushed and (when numbered) ACKed.
  case message
  /// An acknowledgement (`ack…` text).
  case ack
  /// A rejection (`rej…` text).
  case rej
  /// A bulletin: addressee `BLN` + digit (`BLN0`…`BLN9`), including group bulletins like `BLN3WX`.
  case bulletin
  /// An announcement: addressee `BLN` + letter (`BLNA`…`BLNZ`), as APRS101 ch. 14 defines it.
  case announcement
  /// A weather or warning message: addressee starting with `NWS-`, `NWS_`, `SKY`, `CWA` or `BOM`.
  case weather
  /// Telemetry metadata: text starting with `PARM.`, `UNIT.`, `EQNS.` or `BITS.`.
  case telemetry
  /// A directed query: text starting with `?` (`?APRSP`, `?IGATE`).
  case query
  /// Anything that is not a message-format packet: positions, status, objects, empty messages, …
  case other
}
