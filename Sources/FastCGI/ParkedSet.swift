/// The parked requests, by id: which key wakes each one, the version it waits to see passed, and
/// its deadline. Pure bookkeeping for the server's keeper thread (which alone owns it): what to
/// wake when a key changes, what has run out of time, what to answer at a stop, and whether a
/// request may park at all under the per-key and per-group caps (`admit`).
struct ParkedSet {
  /// One parked request.
  struct Entry: Equatable {
    /// What wakes it (a station address).
    var key: String
    /// The group its ticket named (a client address), counted against `Caps.perGroup`; nil: none.
    var group: String? = nil
    /// It wakes when its key's newest version is above this (the sync's `since`).
    var after: Int64
    /// Monotonic ms when it is answered anyway.
    var deadline: Int64
    /// Monotonic ms when the request was first parked: the oldest of a key gives way first.
    var parkedAt: Int64 = 0
    /// The lane its ticket named (`ParkTicket.lane`): `Caps.perKey` holds per key and lane, and a request only
    /// ever displaces one of its own lane.
    var lane: Int = 0
  }

  /// The per-key and per-group caps `admit` holds the set to (`ParkingOptions.maxParkedPerKey`,
  /// `maxParkedPerGroup`; at least 1 each).
  struct Caps: Equatable {
    var perKey: Int = .max
    var perGroup: Int = .max
  }

  /// What `admit` decided for a request about to park.
  enum Admission: Equatable {
    /// It is parked. When its key was full, `displacing` (the key's oldest request, already taken
    /// out) is to be answered now to make room: the newest request of a key wins.
    case parked(displacing: UInt64?)
    /// Not parked: its key is full and it is older than every request parked on it (a request
    /// parked again after a wake keeps its first park time). Answer it now, as a displaced one.
    case displaced
    /// Not parked: its group holds `perGroup` requests already. Answer it now.
    case groupFull
  }

  private var entries: [UInt64: Entry] = [:]
  /// The ids parked on each key, in the order they were inserted.
  private var byKey: [String: [UInt64]] = [:]
  /// How many are parked in each group.
  private var groups: [String: Int] = [:]
  private var deadlines = DeadlineHeap()

  var count: Int { entries.count }
  var isEmpty: Bool { entries.isEmpty }

  /// The entry parked under `id`, if it is parked.
  subscript(id: UInt64) -> Entry? { entries[id] }

  /// How many are parked on `key` (every lane).
  func count(key: String) -> Int { byKey[key]?.count ?? 0 }

  /// How many are parked on `key` in `lane`.
  func count(key: String, lane: Int) -> Int {
    (byKey[key] ?? []).reduce(0) { $0 + (entries[$1]?.lane == lane ? 1 : 0) }
  }

  /// How many are parked in `group`.
  func count(group: String) -> Int { groups[group] ?? 0 }

  /// Parks `entry` under `id` if the caps allow, taking out the key's oldest request when the key
  /// is full (see `Admission`). `firstPark`: false for a request parked again after a wake, which
  /// only just left its group and so is not held to `perGroup` again (the group is over the cap by
  /// at most the requests coming back at that moment).
  ///
  /// Decided in this order: a full key (in the request's lane) gives way to the newer request (the older one is answered,
  /// with `messages:[]` in the API), so a client that reconnects is never refused because of its
  /// own stale requests and a flood of one key only churns that key; the request that gives way is the oldest of
  /// the newcomer's own group when it has one there, else the oldest of the group holding the most on the key, so
  /// a stranger's flood pushes out its own requests, never a lone client's (``yielding(to:)``); then the group must
  /// have room, unless the request displaced is of the same group (the group does not grow).
  mutating func admit(_ entry: Entry, id: UInt64, caps: Caps, firstPark: Bool = true) -> Admission {
    if entries[id] != nil { remove(id) }
    var victim: UInt64?
    if count(key: entry.key, lane: entry.lane) >= caps.perKey, let oldest = yielding(to: entry) {
      guard entries[oldest]!.parkedAt <= entry.parkedAt else { return .displaced }
      victim = oldest
    }
    if firstPark, let group = entry.group {
      let freed = victim.map { entries[$0]?.group == group ? 1 : 0 } ?? 0
      if count(group: group) - freed >= caps.perGroup { return .groupFull }
    }
    if let victim { remove(victim) }
    insert(entry, id: id)
    return .parked(displacing: victim)
  }

  /// The request that gives way to `newcomer` on its full key and lane: the oldest of the newcomer's own group when
  /// that group has one there, else the oldest of the group with the most there (first inserted among equals).
  private func yielding(to newcomer: Entry) -> UInt64? {
    var byGroup: [String?: [UInt64]] = [:]
    for id in byKey[newcomer.key] ?? [] {
      guard let entry = entries[id], entry.lane == newcomer.lane else { continue }
      byGroup[entry.group, default: []].append(id)
    }
    let candidates =
      newcomer.group.flatMap { byGroup[$0] }
      ?? byGroup.values.max { left, right in
        left.count != right.count ? left.count < right.count : oldest(left) > oldest(right)
      } ?? []
    return candidates.min { entries[$0]!.parkedAt < entries[$1]!.parkedAt }
  }

  /// The earliest park time among `ids`.
  private func oldest(_ ids: [UInt64]) -> Int64 { ids.map { entries[$0]!.parkedAt }.min() ?? .max }

  /// Parks `entry` under `id` (replacing whatever was parked under it), whatever the caps.
  mutating func insert(_ entry: Entry, id: UInt64) {
    if entries[id] != nil { remove(id) }
    entries[id] = entry
    byKey[entry.key, default: []].append(id)
    if let group = entry.group { groups[group, default: 0] += 1 }
    deadlines.insert(deadline: entry.deadline, id: id)
  }

  /// Takes `id` out (a client that went away); nil when it was not parked.
  @discardableResult
  mutating func remove(_ id: UInt64) -> Entry? {
    guard let entry = entries.removeValue(forKey: id) else { return nil }
    if var ids = byKey[entry.key] {
      ids.removeAll { $0 == id }
      byKey[entry.key] = ids.isEmpty ? nil : ids
    }
    if let group = entry.group, let held = groups[group] {
      groups[group] = held > 1 ? held - 1 : nil
    }
    return entry
  }

  /// Takes out and returns the ids parked on `key` whose `after` is below `newest`.
  mutating func wake(key: String, newest: Int64) -> [UInt64] {
    guard let ids = byKey[key] else { return [] }
    let woken = ids.filter { entries[$0].map { $0.after < newest } ?? false }
    for id in woken { remove(id) }
    return woken
  }

  /// Takes out and returns the ids whose deadline is at or before `now` (monotonic ms).
  mutating func expired(now: Int64) -> [UInt64] {
    var due: [UInt64] = []
    while let first = deadlines.first, first.deadline <= now {
      _ = deadlines.pop()
      if let entry = entries[first.id], entry.deadline == first.deadline {
        remove(first.id)
        due.append(first.id)
      }
    }
    return due
  }

  /// The earliest deadline of a parked entry (stale heap entries are dropped on the way).
  mutating func nextDeadline() -> Int64? {
    while let first = deadlines.first {
      if let entry = entries[first.id], entry.deadline == first.deadline { return first.deadline }
      _ = deadlines.pop()
    }
    return nil
  }

  /// When the keeper is to wake for the parked deadlines: the earliest one, or with `tickMs` above 0 the first
  /// multiple of `tickMs` at or after it (`ParkingOptions.deadlineTickMs`), so every deadline within one tick
  /// is answered by one wake-up (`expired(now:)` then takes out all that have passed; none that has not).
  mutating func nextWake(tickMs: Int64) -> Int64? {
    guard let deadline = nextDeadline() else { return nil }
    guard tickMs > 0, deadline <= Int64.max - tickMs else { return deadline }
    let remainder = deadline % tickMs
    guard remainder != 0 else { return deadline }
    return deadline - remainder + (remainder > 0 ? tickMs : 0)
  }

  /// Takes out every entry (a stop answers them all); ids in no particular order.
  mutating func removeAll() -> [UInt64] {
    let ids = Array(entries.keys)
    entries = [:]
    byKey = [:]
    groups = [:]
    deadlines.removeAll()
    return ids
  }
}
