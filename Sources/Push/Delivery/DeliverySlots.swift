/// Fair delivery slots: which pushes and forwards may be on the wire at once, and with what timeout
/// (docs/design.md "Fair delivery slots"). A pure state machine: no I/O, no clock reads (`now` is passed in, ms
/// on the caller's one clock); the engine asks before starting a request and releases the ticket when the
/// request ends.
///
/// A request (``SlotRequest``) starts only while each bound of its lane (``DeliverySlotLimits/Lane``) holds:
/// 1. its recipient has fewer than `perRecipient` on the wire (1 for forwards: a target's messages in order);
/// 2. its station has fewer than `perStation`;
/// 3. its endpoint group (``EndpointGroup``: network or registrable domain, ports ignored) has fewer than
///    `perGroup`, trusted requests neither checked nor counted;
/// 4. the lane has fewer than `total`;
/// 5. unless privileged, fewer than `total - reserved` unprivileged requests are on the wire.
///
/// **Privileged** means trusted by the caller (a known push service) or to a group that answered fast lately
/// (``EndpointHistory``) with no request to it on the wire for longer than the fast threshold: a group that was
/// fast and has gone slow loses the reserve as soon as its first request outlives the threshold, not only when
/// that request's timeout ends, and when such a request ends slow or unanswered the group stays unprivileged
/// for ``EndpointHistory/holdBackMs`` (an hour). A privileged request gets its transport's normal timeout, any
/// other one ``DeliverySlotLimits/shortTimeoutMs``, so an endpoint with no history of fast answers holds a slot
/// for 3 s at most.
///
/// Why this keeps an unrelated delivery within 3 s when many stations point at slow endpoints: the slow
/// endpoints' requests are unprivileged (short timeout, unreserved share), bounded per station and per group,
/// so they never reach the reserve, where a known service or a target that answered fast before starts at
/// once; and any other newcomer is taken first at the next free slot (``FairQueue``'s fair order), which a
/// slow endpoint frees within the short timeout.
struct DeliverySlots: Sendable {
  let limits: DeliverySlotLimits
  private(set) var history: EndpointHistory

  private struct LaneKey<Key: Hashable & Sendable>: Hashable, Sendable {
    var lane: DeliveryLane
    var key: Key
  }

  private var tickets: [UInt64: SlotTicket] = [:]
  private var nextID: UInt64 = 1
  private var byLane: [DeliveryLane: Int] = [:]
  private var unprivilegedByLane: [DeliveryLane: Int] = [:]
  private var byStation: [LaneKey<DeliveryStation>: Int] = [:]
  private var byGroup: [LaneKey<EndpointGroup>: Int] = [:]
  private var byRecipient: [LaneKey<SlotRecipient>: Int] = [:]
  /// Start times of the requests on the wire to each group (every lane, trusted ones too), by ticket id.
  private var startsByGroup: [EndpointGroup: [UInt64: Int64]] = [:]

  init(limits: DeliverySlotLimits = DeliverySlotLimits(), history: EndpointHistory = EndpointHistory()) {
    self.limits = limits
    self.history = history
  }

  /// Takes a slot for `request` when every bound allows it now; else says which bound it waits for.
  mutating func admit(_ request: SlotRequest, now: Int64) -> SlotDecision {
    if let reason = blocker(request, now: now) { return .wait(reason) }
    let privileged = isPrivileged(request, now: now)
    let ticket = SlotTicket(
      id: nextID, request: request, startedAt: now,
      timeoutMs: privileged ? limits.normalTimeoutMs(request.transport) : limits.shortTimeoutMs,
      privileged: privileged)
    nextID += 1
    tickets[ticket.id] = ticket
    count(ticket, by: 1)
    startsByGroup[request.group, default: [:]][ticket.id] = now
    return .start(ticket)
  }

  /// Hands back `ticket`'s slot and tells the history how its request ended (an answer is timed from
  /// `ticket.startedAt` to `now`; a privileged, untrusted request that ended slow or unanswered holds its group
  /// back). False, and nothing changes, when the ticket is not on the wire (released
  /// already, or another instance's).
  @discardableResult
  mutating func release(_ ticket: SlotTicket, outcome: SlotOutcome, now: Int64) -> Bool {
    guard let held = tickets.removeValue(forKey: ticket.id), held == ticket else { return false }
    count(held, by: -1)
    let group = held.request.group
    startsByGroup[group]?[held.id] = nil
    if startsByGroup[group]?.isEmpty == true { startsByGroup[group] = nil }
    let elapsedMs = now - held.startedAt
    switch outcome {
    case .answered: history.recordAnswer(group, elapsedMs: elapsedMs, now: now)
    case .noAnswer: history.recordNoAnswer(group, now: now)
    case .notSent: return true
    }
    if held.privileged, !held.request.trusted, outcome == .noAnswer || elapsedMs > history.fastAnswerMs {
      history.holdBack(group, now: now)
    }
    return true
  }

  /// The first bound (in the type's order) that keeps `request` from starting now; nil when it may start.
  func blocker(_ request: SlotRequest, now: Int64) -> SlotWaitReason? {
    let lane = limits[request.lane]
    if let cap = lane.perRecipient,
      byRecipient[LaneKey(lane: request.lane, key: request.recipient), default: 0] >= cap
    {
      return .recipientAtCap
    }
    if stationInFlight(request.station, lane: request.lane) >= lane.perStation { return .stationAtCap }
    if !request.trusted, byGroup[LaneKey(lane: request.lane, key: request.group), default: 0] >= lane.perGroup
    {
      return .groupAtCap
    }
    if inFlight(request.lane) >= lane.total { return .laneFull }
    if unprivilegedByLane[request.lane, default: 0] >= lane.total - lane.reserved,
      !isPrivileged(request, now: now)
    {
      return .onlyReservedFree
    }
    return nil
  }

  /// Whether `request` may use the reserved share and gets the normal timeout: trusted, or to a group that
  /// answered fast lately and has no request on the wire for longer than the fast threshold.
  func isPrivileged(_ request: SlotRequest, now: Int64) -> Bool {
    if request.trusted { return true }
    guard history.isFast(request.group, now: now) else { return false }
    let oldest = startsByGroup[request.group]?.values.min() ?? now
    return now - oldest <= history.fastAnswerMs
  }

  /// Requests on the wire in `lane`.
  func inFlight(_ lane: DeliveryLane) -> Int { byLane[lane, default: 0] }

  /// Unprivileged requests on the wire in `lane` (at most its `total - reserved`).
  func unprivilegedInFlight(_ lane: DeliveryLane) -> Int { unprivilegedByLane[lane, default: 0] }

  /// Requests on the wire for `station` in `lane`.
  func stationInFlight(_ station: DeliveryStation, lane: DeliveryLane) -> Int {
    byStation[LaneKey(lane: lane, key: station), default: 0]
  }

  /// Untrusted requests on the wire to `group` in `lane`.
  func groupInFlight(_ group: EndpointGroup, lane: DeliveryLane) -> Int {
    byGroup[LaneKey(lane: lane, key: group), default: 0]
  }

  /// The tickets on the wire, every lane.
  var onTheWire: [SlotTicket] { Array(tickets.values) }

  private mutating func count(_ ticket: SlotTicket, by step: Int) {
    let request = ticket.request
    Self.add(step, to: &byLane, request.lane)
    if !ticket.privileged { Self.add(step, to: &unprivilegedByLane, request.lane) }
    Self.add(step, to: &byStation, LaneKey(lane: request.lane, key: request.station))
    if !request.trusted { Self.add(step, to: &byGroup, LaneKey(lane: request.lane, key: request.group)) }
    Self.add(step, to: &byRecipient, LaneKey(lane: request.lane, key: request.recipient))
  }

  /// Adds `step` to `key`'s count, dropping the key at zero (the maps hold only what is on the wire).
  private static func add<Key: Hashable>(_ step: Int, to counts: inout [Key: Int], _ key: Key) {
    let value = counts[key, default: 0] + step
    counts[key] = value > 0 ? value : nil
  }
}
