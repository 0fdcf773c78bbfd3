/// Where a line the writer stores came from.
enum LineOrigin: Sendable, Equatable {
  /// Read from the APRS-IS server.
  case aprsis
  /// Written by this listener to APRS-IS (a `/v1/send` copy, an ACK): aprsc never sends a client its own packets
  /// back, so the connection hands each written line to the writer too, and a station registered here hears
  /// what another station of this server transmitted as it would over the air (``LineRouter``).
  case transmitted
}

/// One line in the ``LineQueue``: its bytes (no line ending) and where it came from.
struct QueuedLine: Sendable, Equatable {
  var bytes: [UInt8]
  var origin: LineOrigin

  init(_ bytes: [UInt8], origin: LineOrigin = .aprsis) {
    self.bytes = bytes
    self.origin = origin
  }
}
