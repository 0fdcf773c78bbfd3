/// One line received from APRS-IS: a server comment or a packet.
public enum TNC2Line: Equatable, Sendable {
  /// A line starting with `#` (banner, `# logresp …`, keepalive, `# filter … active`): its bytes without the
  /// line ending, starting with the `#`.
  case comment([UInt8])
  /// A packet in TNC2 text form.
  case packet(TNC2Packet)

  /// Parses one line (with or without its CR, LF or CR LF ending). Same as ``TNC2Packet/parse(_:)``.
  public static func parse(_ line: some Collection<UInt8>) -> Result<TNC2Line, TNC2Error> {
    TNC2Packet.parse(line)
  }

  /// The packet, when this line is one.
  public var packet: TNC2Packet? {
    if case .packet(let packet) = self { return packet }
    return nil
  }
}
