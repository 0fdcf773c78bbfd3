import Store

/// One station's pending pushes, sent as one provider request per device.
public struct PushBatch: Sendable, Equatable {
  /// The station they are for.
  public var station: String
  /// The outbox entries, oldest first.
  public var entries: [OutboxEntry]

  /// The outbox ids.
  public var ids: [Int64] { entries.map(\.id) }
  /// The newest message (the one the notification names).
  public var newest: OutboxEntry {
    entries.max { $0.message.timestamp < $1.message.timestamp } ?? entries[entries.count - 1]
  }
  /// When the oldest entry was queued.
  public var createdAt: Int64 { entries.map(\.createdAt).min() ?? 0 }
}

/// What to do with the outbox right now.
public struct CoalescePlan: Sendable, Equatable {
  /// Entries older than `maxAge`: drop them instead of sending late.
  public var expired: [OutboxEntry] = []
  /// Batches to send now (now marked in flight).
  public var batches: [PushBatch] = []
  /// When the next waiting burst's window closes, if any is waiting.
  public var nextWakeAt: Int64?
}

/// The coalescing scheduler: a pure state machine over the outbox with an injected clock.
///
/// A station's pending entries form one burst; the burst is sent when the window that opened
/// with its oldest entry closes (`createdAt + window`), carrying every entry that arrived by
/// then: at most one provider send per device per window, and never more than `window` late.
/// Entries already handed to the sender are remembered as in flight and not planned again
/// until `finished(_:)`, so the same outbox rows can be read again on every wake-up.
public struct Coalescer: Sendable {
  /// The coalescing window, ms (0: at once).
  public var windowMs: Int64
  /// Older entries are dropped, ms.
  public var maxAgeMs: Int64
  /// Outbox ids handed out and not finished yet.
  public private(set) var inFlight: Set<Int64> = []

  public init(windowMs: Int64, maxAgeMs: Int64) {
    self.windowMs = windowMs
    self.maxAgeMs = maxAgeMs
  }

  /// Plans `due` (the outbox entries whose next attempt is due at `now`) at `now`.
  public mutating func plan(due: [OutboxEntry], now: Int64) -> CoalescePlan {
    var plan = CoalescePlan()
    var order: [String] = []
    var groups: [String: [OutboxEntry]] = [:]
    for entry in due where !inFlight.contains(entry.id) {
      if now - entry.createdAt > maxAgeMs {
        plan.expired.append(entry)
        continue
      }
      // A `sendFailed` notice (the push of a sent message) is a burst of its own, never merged with messages.
      let group = entry.message.direction == .sent ? entry.station + "\u{1F}sent" : entry.station
      if groups[group] == nil { order.append(group) }
      groups[group, default: []].append(entry)
    }
    for group in order {
      let entries = groups[group] ?? []
      let batch = PushBatch(station: entries[0].station, entries: entries)
      let readyAt = batch.createdAt + windowMs
      if now >= readyAt {
        plan.batches.append(batch)
        for entry in entries { inFlight.insert(entry.id) }
      } else {
        plan.nextWakeAt = min(plan.nextWakeAt ?? readyAt, readyAt)
      }
    }
    return plan
  }

  /// The sender is done with these entries (sent, rescheduled or dropped).
  public mutating func finished(_ ids: [Int64]) {
    for id in ids { inFlight.remove(id) }
  }
}
