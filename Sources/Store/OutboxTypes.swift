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
