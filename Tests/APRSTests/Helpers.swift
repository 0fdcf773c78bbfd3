@testable import APRS

/// The UTF-8 bytes of a test line.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Parses a line that must be a packet; nil when it is not.
func packet(_ line: String) -> TNC2Packet? {
  guard case .success(.packet(let packet)) = TNC2Packet.parse(bytes(line)) else { return nil }
  return packet
}

/// Parses and classifies a line that must be a packet; nil when it is not one.
func classified(_ line: String) -> Classified? {
  packet(line).map(AddressedPacket.classify)
}

/// The addressed packet of a line, or nil.
func addressed(_ line: String) -> AddressedPacket? {
  classified(line)?.addressed
}

/// The parse error of a line, or nil.
func parseError(_ line: [UInt8]) -> TNC2Error? {
  guard case .failure(let error) = TNC2Packet.parse(line) else { return nil }
  return error
}
