/// An APRS packet in TNC2 text form: `SOURCE>DESTINATION,PATH1,PATH2:INFORMATION`.
///
/// The header is decoded to strings (callsigns are ASCII); the information field stays bytes because
/// APRS-IS carries bytes, not UTF-8. Build one with ``parse(_:)``.
public struct TNC2Packet: Hashable, Sendable {
  /// The source call as sent, e.g. `OH7AA-1` (validated: 1–9 letters, digits or `-`).
  public var source: String
  /// The destination ("tocall"), e.g. `APRS` or `APZACL`.
  public var destination: String
  /// The digipeater and q-construct path, e.g. `["WIDE1-1", "qAo", "OH7AA"]`; may be empty.
  public var path: [String]
  /// Everything after the first `:`, without the line ending.
  public var information: [UInt8]

  /// Makes a packet from its parts, unvalidated (tests, outgoing packets).
  public init(source: String, destination: String, path: [String], information: [UInt8]) {
    self.source = source
    self.destination = destination
    self.path = path
    self.information = information
  }
}
