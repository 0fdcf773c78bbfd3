/// The two pools of ``DeliverySlots``: each has its own slots, shares and caps, so a flood of one kind never
/// takes a slot of the other.
enum DeliveryLane: Hashable, Sendable, CaseIterable {
  /// Pushes that wake a station's devices: FCM, APNs, Web Push, UnifiedPush.
  case push
  /// Copies of a station's messages to its forward targets: ntfy, webhooks, email.
  case forward
}

/// How a delivery reaches its endpoint, which decides its normal timeout (``DeliverySlotLimits/normalTimeoutMs(_:)``).
enum DeliveryTransport: Hashable, Sendable {
  /// One HTTPS POST (push services, ntfy, webhooks).
  case https
  /// One mail through the operator's SMTP server (`[forward.email]`).
  case smtp
}

/// The station a delivery is for, as the per-station cap counts it (the canonical call with SSID, as stored).
struct DeliveryStation: Hashable, Sendable, CustomStringConvertible {
  let call: String
  init(_ call: String) { self.call = call }
  var description: String { call }
}

/// The one device or forward target a delivery goes to, as the per-recipient cap counts it: the device's push
/// token or subscription, a forward target's `ForwardTarget.deliveryKey`. With a per-recipient cap of 1 (the
/// forward lane's), a target gets its messages one at a time and in order.
struct SlotRecipient: Hashable, Sendable, CustomStringConvertible {
  let key: String
  init(_ key: String) { self.key = key }
  var description: String { key }
}

/// One delivery asking for a slot: what ``DeliverySlots`` bounds it by. Built once per job by the engine; the
/// slots never parse anything from it again.
struct SlotRequest: Hashable, Sendable {
  var lane: DeliveryLane
  var station: DeliveryStation
  var recipient: SlotRecipient
  /// The endpoint's network or registrable domain (``EndpointGroup/init(url:)`` of the URL it is sent to; for
  /// a mail, of the SMTP server's URL).
  var group: EndpointGroup
  var transport: DeliveryTransport
  /// A known service the operator configured (FCM, APNs, the operator's SMTP server, a push service the
  /// engine lists as known): the caller says so. Trusted requests may use the reserved share, always get the
  /// normal timeout and are not counted against their group's cap (one such service serves every station
  /// over a few multiplexed connections; its capacity is the point of it).
  var trusted: Bool

  init(
    lane: DeliveryLane, station: DeliveryStation, recipient: SlotRecipient, group: EndpointGroup,
    transport: DeliveryTransport = .https, trusted: Bool = false
  ) {
    self.lane = lane
    self.station = station
    self.recipient = recipient
    self.group = group
    self.transport = transport
    self.trusted = trusted
  }
}
