/// The parked requests, by id: which key wakes each one, the version it waits to see passed, and
/// its deadline. Pure bookkeeping for the server's keeper thread (which alone owns it): what to
/// wake when a key changes, what has run out of time, what to answer at a stop.
struct ParkedSet {
  /// One parked request.
  struct Entry: Equatable {
    /// What wakes it (a station address).
    var key: String
    /// It wakes when its key's newest version is above this (the sync's `since`).
    var after: Int64
    /// Monotonic ms when it is answered anyway.
    var deadline: Int64
  }

  private var entries: [UInt64: Entry] = [:]
  private var byKey: [String: [UInt64]] = [:]
  private var deadlines = DeadlineHeap()

  var count: Int { entries.count }
  var isEmpty: Bool { entries.isEmpty }

  /// The entry parked under `id`, if it is parked.
  subscript(id: UInt64) -> Entry? { entries[id] }

  /// Parks `entry` under `id` (replacing whatever was parked under it).
  mutating func insert(_ entry: Entry, id: UInt64) {
    if entries[id] != nil { remove(id) }
    entries[id] = entry
    byKey[entry.key, default: []].append(id)
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

  /// Takes out every entry (a stop answers them all); ids in no particular order.
  mutating func removeAll() -> [UInt64] {
    let ids = Array(entries.keys)
    entries = [:]
    byKey = [:]
    deadlines.removeAll()
    return ids
  }
}
