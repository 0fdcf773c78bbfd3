/// The listener lease: who may run the one listener, and until when.
public struct LeaseRecord: Sendable, Equatable {
  /// The holder's identity (for example `host:pid`).
  public var holder: String
  /// When this holder first took the lease, epoch ms.
  public var acquiredAt: Int64
  /// When the lease lapses unless renewed, epoch ms.
  public var expiresAt: Int64
}

/// The answer of a rate limit.
public enum RateDecision: Sendable, Equatable {
  /// Within the limit; the request was counted.
  case allowed
  /// Over the limit; try again after this many milliseconds.
  case limited(retryAfterMs: Int64)
}

/// A push waiting in the outbox, with the message it announces.
public struct OutboxEntry: Sendable, Equatable {
  /// The outbox row id (pass it back to `completeOutbox` / `rescheduleOutbox`).
  public var id: Int64
  /// The upper-case address of the station to notify.
  public var station: String
  /// The id of the stored message.
  public var messageID: Int64
  /// The message itself.
  public var message: StoredMessage
  /// When the push was queued, epoch ms (too old ones may be dropped by the sender).
  public var createdAt: Int64
  /// Failed send attempts so far.
  public var attempts: Int
  /// Not to be sent before this time, epoch ms.
  public var nextAttemptAt: Int64
}

/// How many expired rows `pruneExpired` removed, per table.
public struct PruneResult: Sendable, Equatable {
  /// Dedup keys whose window ended.
  public var dedup: Int
  /// ACK send times older than the retention.
  public var acks: Int
  /// Rate-limit windows that ended.
  public var rateLimits: Int
}
