import Store

/// One channel's sending side, driven by the engine's thread on its one curl multi handle: the channel holds its
/// queue (a ``DeliveryQueue``), builds each job's request, keeps its credentials fresh and turns each answer into
/// a decision through its own retry table. The engine routes every job to the channel of its recipient
/// (``DeliveryRecipient/channel``) and applies every outcome in one place, whatever the channel.
protocol DeliveryChannel: AnyObject {
  /// Which channel it is.
  var kind: ChannelKind { get }
  /// Whether it sends, and if not, why.
  var state: ProviderState { get }
  /// Jobs queued or on the wire.
  var pendingCount: Int { get }
  /// When it wants to run again without network activity (a credential retry, a rate window), epoch ms.
  var nextTimerAt: Int64? { get }
  /// A misconfiguration it sends despite (shown in `/health`), nil when none.
  var warning: String? { get }
  /// Queues a job.
  func enqueue(_ job: DeliveryJob)
  /// Refreshes credentials and starts queued jobs within its limits; returns the jobs that ended without an
  /// answer.
  func pump(now: Int64, http: CurlMulti, tags: inout Int) -> [DeliveryOutcome]
  /// Takes the answer to one of its transfers (nil when `tag` is not its own); returns the jobs that ended (a job
  /// resent with fresh credentials, or to the other APNs environment, does not end).
  func handle(tag: Int, response: ProviderResponse, now: Int64) -> [DeliveryOutcome]?
  /// Stops the channel (a configuration fault): every waiting job ends with the reason (returned).
  func stop(_ reason: String) -> [DeliveryOutcome]
  /// Removes the waiting jobs of `recipient` (one just found dead: nothing more goes to it) and returns them.
  func drop(_ recipient: Recipient) -> [DeliveryJob]
}

/// A channel to registered devices: it also builds a push's body from the batch's content.
protocol PushChannel: DeliveryChannel {
  /// The body (FCM: the whole request; APNs and Web Push: the payload) and the headers of `content` for `device`,
  /// or why it cannot go (bigger than the provider takes). `ttlSeconds`: what is left of the push's lifetime.
  func body(_ content: PushContent, for device: DeviceRecord, expiresAt: Int64, ttlSeconds: Int64)
    -> (Result<BuiltPayload, PayloadTooLarge>, [(String, String)])
}
