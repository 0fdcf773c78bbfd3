/// What ``DeliverySlots`` remembers of each ``EndpointGroup``'s answers: whether its latest one came fast. A
/// group is **fast** when its latest outcome was an answer within ``fastAnswerMs`` and that answer is at most
/// ``memoryMs`` old; a slower answer, or none (a timeout, a refused or lost connection), demotes it until its
/// next fast answer. A group that was trusted with a request (it was fast when the request started) and then
/// answered it slowly or not at all is held back (``holdBack(_:now:)``): no answer promotes it for
/// ``holdBackMs``, so an endpoint that answers fast only to be trusted, then stalls, can do it once an hour.
/// A fast group may use the reserved share and gets the normal timeout; any other one (never heard, slow
/// lately, held back, or forgotten) gets ``DeliverySlotLimits/shortTimeoutMs`` (docs/design.md "Fair delivery
/// slots").
///
/// Bounded: at most ``capacity`` groups. Past it, the least recently updated quarter (and every entry older
/// than ``memoryMs``) is dropped at once, so each insertion costs O(log n) amortised. A dropped group is
/// unknown again: forgetting a fast group costs it short timeouts until its next fast answer; forgetting a
/// held-back one ends its hold-back, which takes answers from thousands of other groups within the hour to
/// force. Pure: `now` (ms on the caller's one clock) is passed in.
struct EndpointHistory: Sendable {
  /// An answer within this many ms is fast (1 s: FCM, APNs and the common Web Push services answer in a few
  /// hundred ms; a webhook or UnifiedPush server that answers slower is served, only not trusted).
  let fastAnswerMs: Int64
  /// A fast answer older than this counts for nothing (ms; default a day: a group not used for a day is
  /// judged afresh).
  let memoryMs: Int64
  /// Groups remembered at most (default 10,000: a few hundred KB).
  let capacity: Int
  /// How long a group that betrayed the trust stays unprivileged (ms; default an hour).
  let holdBackMs: Int64

  private struct Entry {
    /// When the latest fast answer came, if the latest outcome was one (ms); nil after a slow one.
    var fastAt: Int64?
    /// The last update, for the eviction order (ms).
    var updatedAt: Int64
    /// No promotion before this (ms), after ``holdBack(_:now:)``.
    var heldBackUntil: Int64 = .min
  }

  private var entries: [EndpointGroup: Entry] = [:]

  init(
    fastAnswerMs: Int64 = 1_000, memoryMs: Int64 = 86_400_000, capacity: Int = 10_000,
    holdBackMs: Int64 = 3_600_000
  ) {
    precondition(
      fastAnswerMs > 0 && memoryMs > 0 && capacity >= 4 && holdBackMs >= 0, "history limits must be positive")
    self.fastAnswerMs = fastAnswerMs
    self.memoryMs = memoryMs
    self.capacity = capacity
    self.holdBackMs = holdBackMs
  }

  /// Groups remembered now (at most ``capacity``).
  var count: Int { entries.count }

  /// Whether `group` answered fast lately (see the type's rule).
  func isFast(_ group: EndpointGroup, now: Int64) -> Bool {
    guard let entry = entries[group], let fastAt = entry.fastAt, now >= entry.heldBackUntil else {
      return false
    }
    return now - fastAt <= memoryMs
  }

  /// Holds `group` back from promotion for ``holdBackMs`` from `now`: a request it was trusted with (started
  /// as privileged, not trusted by the caller) got a slow answer or none.
  mutating func holdBack(_ group: EndpointGroup, now: Int64) {
    if entries[group] == nil, entries.count >= capacity { evict(now: now) }
    var entry = entries[group] ?? Entry(fastAt: nil, updatedAt: now)
    entry.fastAt = nil
    entry.updatedAt = now
    entry.heldBackUntil = now + holdBackMs
    entries[group] = entry
  }

  /// Records that a request to `group` got an answer `elapsedMs` after it started: fast within
  /// ``fastAnswerMs``, else a demotion.
  mutating func recordAnswer(_ group: EndpointGroup, elapsedMs: Int64, now: Int64) {
    update(group, fastAt: elapsedMs <= fastAnswerMs ? now : nil, now: now)
  }

  /// Records that a request to `group` got no answer (timed out, refused, connection lost): a demotion.
  mutating func recordNoAnswer(_ group: EndpointGroup, now: Int64) {
    update(group, fastAt: nil, now: now)
  }

  private mutating func update(_ group: EndpointGroup, fastAt: Int64?, now: Int64) {
    if entries[group] == nil, entries.count >= capacity { evict(now: now) }
    var entry = entries[group] ?? Entry(fastAt: nil, updatedAt: now)
    entry.fastAt = fastAt
    entry.updatedAt = now
    entries[group] = entry
  }

  /// Drops every entry older than ``memoryMs`` and, if that leaves more than three quarters of ``capacity``,
  /// the least recently updated ones down to that.
  private mutating func evict(now: Int64) {
    entries = entries.filter { now - $0.value.updatedAt <= memoryMs }
    let keep = capacity * 3 / 4
    guard entries.count > keep else { return }
    let oldest = entries.sorted { $0.value.updatedAt < $1.value.updatedAt }.prefix(entries.count - keep)
    for (group, _) in oldest { entries[group] = nil }
  }
}
