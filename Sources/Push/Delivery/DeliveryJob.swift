import Store

/// One delivery, ready for its channel: a push to a device or a forward to a target, for a batch of the outbox, a
/// notice or a confirmation mail. The engine routes it to ``DeliveryRecipient/channel``, so a push channel only
/// ever holds device jobs and a forward channel target jobs.
struct DeliveryJob {
  /// Unique per engine.
  var id: Int
  /// What it is for.
  var purpose: DeliveryPurpose
  /// Who it goes to.
  var recipient: DeliveryRecipient
  /// A push's body as its channel built it (``PushChannel/body(_:for:expiresAt:ttlSeconds:)``): FCM the whole
  /// request body, APNs and Web Push the payload; empty for a forward (its channel builds the request from
  /// ``entry`` when it starts).
  var payload: [UInt8] = []
  /// The push's own headers (APNs `apns-*`, Web Push `TTL` and `Urgency`), without authorization.
  var headers: [(String, String)] = []
  /// Web Push: what the `Topic` is made from instead of the device's station (``PushContent/collapseName`` of a
  /// subscription push, so it never replaces an undelivered message push); nil: the station.
  var topic: String?
  /// The outbox entry whose message a forward carries; nil for pushes and confirmation mails.
  var entry: OutboxEntry?
  /// Failed attempts of its outbox entries (or of its confirmation mail) so far, for the backoff.
  var attempts = 0
  /// 429s its recipient got in a row before this one (a 429 without `Retry-After` waits 60 s, doubling).
  var throttles = 0
  /// The end of its lifetime (`[messaging] maxAge` after its newest message), epoch ms: the channel's own waits
  /// never run past it. Nil: none (the push test, confirmation mails).
  var expiresAt: Int64?
  /// What its provider remembers between attempts.
  var attempt = ProviderAttempt()

  /// The device of a push job. Only push channels ask, and the engine gives them nothing else.
  var device: DeviceRecord {
    guard case .device(let device) = recipient else { preconditionFailure("a forward job on a push channel") }
    return device
  }

  /// The target of a forward job. Only forward channels ask, and the engine gives them nothing else.
  var target: ForwardTarget {
    guard case .target(let target) = recipient else { preconditionFailure("a push job on a forward channel") }
    return target
  }

  /// APNs: the environment to remember for the device after `decision` (`APNsRoute.remember`).
  func environmentToRemember(after decision: PushDecision) -> APNsEnvironment? {
    guard decision == .delivered, let environment = attempt.apnsEnvironment else { return nil }
    return APNsRoute.remember(stored: device.apnsEnvironment, accepted: environment)
  }
}

/// What a push provider remembers of one job between its attempts.
struct ProviderAttempt {
  /// Already resent once with fresh credentials.
  var reauthenticated = false
  /// The credential it was sent with (to refresh it only once for many refusals).
  var credential = ""
  /// APNs: the environment of its current (or last) attempt; nil until the channel picks one.
  var apnsEnvironment: APNsEnvironment?
  /// APNs: already sent to the other environment after `BadDeviceToken`.
  var triedOtherEnvironment = false
}
