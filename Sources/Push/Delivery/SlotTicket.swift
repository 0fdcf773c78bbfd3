/// A slot ``DeliverySlots`` gave a request: hand it back with ``DeliverySlots/release(_:outcome:now:)`` when the
/// request ends, however it ends.
struct SlotTicket: Hashable, Sendable {
  /// Unique among the tickets of one ``DeliverySlots``.
  let id: UInt64
  let request: SlotRequest
  /// When the slot was taken (ms, the caller's clock).
  let startedAt: Int64
  /// The limit to give the request, connect and answer together (ms): the normal timeout of its transport
  /// for a trusted or fast group, else ``DeliverySlotLimits/shortTimeoutMs``.
  let timeoutMs: Int
  /// Whether it was admitted as privileged (trusted, or fast lately): it does not count against the
  /// unreserved share.
  let privileged: Bool
}

/// The answer of ``DeliverySlots/admit(_:now:)``.
enum SlotDecision: Hashable, Sendable {
  /// The request holds a slot now; start it with the ticket's timeout.
  case start(SlotTicket)
  /// Not now: the first bound it is at. Try again after a release.
  case wait(SlotWaitReason)
}

/// Why a request cannot start now, in the order ``DeliverySlots`` checks.
enum SlotWaitReason: Hashable, Sendable {
  /// Its recipient has ``DeliverySlotLimits/Lane/perRecipient`` on the wire.
  case recipientAtCap
  /// Its station has ``DeliverySlotLimits/Lane/perStation`` on the wire.
  case stationAtCap
  /// Its group has ``DeliverySlotLimits/Lane/perGroup`` on the wire (never for a trusted request).
  case groupAtCap
  /// Every slot of its lane is taken.
  case laneFull
  /// Only reserved slots are free and it is neither trusted nor fast lately.
  case onlyReservedFree
}

/// How a request holding a slot ended, what ``EndpointHistory`` learns from it.
enum SlotOutcome: Hashable, Sendable {
  /// The endpoint answered (any status: a quick 4xx or 5xx is still a responsive endpoint).
  case answered
  /// No answer: the timeout, a refused, failed or lost connection, a TLS failure. Demotes the group.
  case noAnswer
  /// Never reached the network (the request could not be built or started, or the engine dropped it):
  /// nothing learned.
  case notSent
}
