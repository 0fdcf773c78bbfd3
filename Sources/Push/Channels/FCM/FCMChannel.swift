import Config
import Logging
import Store

/// FCM HTTP v1: one request per device token, authorised by an OAuth access token that a
/// service-account JWT buys at its `token_uri`.
///
/// The access token is cached and refreshed a few minutes before it expires (a quarter of its
/// lifetime for short ones) while the old one keeps sending; a plain 401 drops it, and the
/// refused request goes out once more with the new one. A refused service account stops the
/// provider; a token endpoint that does not answer makes the queued jobs retry later.
final class FCMChannel: PushChannel {
  let kind = ChannelKind.fcm
  private(set) var state = ProviderState.ok
  let account: ServiceAccount
  private let key: SigningKey
  private let sendURL: String
  private let caFile: String?
  /// `[messaging] preview`: whether the text goes in the notification.
  private let preview: Bool
  private let logger: Logger
  private let jitter: () -> Double
  let maxInFlight: Int

  private var jobs = DeliveryQueue()
  private var accessToken: String?
  private var tokenExpiresAt: Int64 = 0
  private var tokenRefreshAt: Int64 = 0
  private var tokenTag: Int?
  private var tokenFailures = 0
  private var tokenRetryAt: Int64 = 0
  /// Whether `SENDER_ID_MISMATCH` may delete tokens yet (the project proved by an accepted push).
  private var projectCheck = FCMProjectCheck()
  /// Access tokens bought so far (for tests and logs).
  private(set) var tokensFetched = 0

  init(
    account: ServiceAccount, key: SigningKey, config: PushConfig.Android, preview: Bool = true,
    logger: Logger,
    maxInFlight: Int = 100, jitter: @escaping () -> Double = { Double.random(in: 0..<1) }
  ) {
    self.account = account
    self.key = key
    self.sendURL = config.endpoint + "/v1/projects/" + account.projectID + "/messages:send"
    self.caFile = config.caFile
    self.preview = preview
    self.logger = logger
    self.maxInFlight = maxInFlight
    self.jitter = jitter
  }

  /// Loads the service account named by the configuration: the error names the key and file.
  static func load(_ config: PushConfig.Android, preview: Bool, logger: Logger) -> Result<
    FCMChannel, PushError
  > {
    let prefix = "messaging.android.serviceAccountFile \(config.serviceAccountFile): "
    switch readSmallFile(config.serviceAccountFile) {
    case .failure(let error):
      return .failure(PushError("messaging.android.serviceAccountFile: \(error)"))
    case .success(let bytes):
      do throws(PushError) {
        let account = try ServiceAccount(json: bytes)
        let key = try SigningKey(pem: Array(account.privateKeyPEM.utf8), algorithm: .rs256)
        _ = try JWT.serviceAccountAssertion(account: account, key: key, issuedAt: 0)
        return .success(
          FCMChannel(account: account, key: key, config: config, preview: preview, logger: logger))
      } catch {
        return .failure(PushError(prefix + error.description))
      }
    }
  }

  var pendingCount: Int { jobs.count }
  /// FCM has no setting the answers can contradict.
  var warning: String? { nil }

  var nextTimerAt: Int64? {
    guard state == .ok, tokenTag == nil, jobs.waiting > 0 else { return nil }
    return tokenRetryAt
  }

  func enqueue(_ job: DeliveryJob) {
    jobs.append(job)
  }

  /// The whole `messages:send` body (``PushPayload/fcm(_:token:preview:ttlSeconds:)``); no headers of its own.
  func body(_ content: PushContent, for device: DeviceRecord, expiresAt: Int64, ttlSeconds: Int64)
    -> (Result<BuiltPayload, PayloadTooLarge>, [(String, String)])
  {
    (PushPayload.fcm(content, token: device.token, preview: preview, ttlSeconds: ttlSeconds), [])
  }

  func drop(_ recipient: Recipient) -> [DeliveryJob] {
    jobs.remove { $0.recipient.key == recipient }
  }

  func pump(now: Int64, http: CurlMulti, tags: inout Int) -> [DeliveryOutcome] {
    guard state == .ok else { return drain() }
    if accessToken != nil, now >= tokenExpiresAt { accessToken = nil }
    let wantsToken = jobs.waiting > 0 && (accessToken == nil || now >= tokenRefreshAt)
    if wantsToken, tokenTag == nil, now >= tokenRetryAt {
      if let failure = startTokenRequest(now: now, http: http, tags: &tags) { return failure }
    }
    guard let accessToken else { return [] }
    var ended: [DeliveryOutcome] = []
    while jobs.inFlight.count < maxInFlight, var job = jobs.popFirst() {
      job.attempt.credential = accessToken
      let request = HTTPRequest(
        url: sendURL,
        headers: ["authorization: Bearer " + accessToken, "content-type: application/json; charset=utf-8"],
        body: job.payload, caFile: caFile)
      tags += 1
      if let refused = jobs.start(job, request, http: http, tag: tags, now: now) { ended.append(refused) }
    }
    return ended
  }

  func handle(tag: Int, response: ProviderResponse, now: Int64) -> [DeliveryOutcome]? {
    if tag == tokenTag {
      tokenTag = nil
      return handleToken(response, now: now)
    }
    guard var job = jobs.inFlight.removeValue(forKey: tag) else { return nil }
    var decision = RetryPolicy.fcm(
      response, now: now, attempts: job.attempts, reauthenticated: job.attempt.reauthenticated,
      jitter: jitter(),
      throttles: job.throttles, expiresAt: job.expiresAt)
    if decision == .delivered {
      projectCheck.accepted()
    } else if RetryPolicy.isSenderIDMismatch(response) {
      decision = senderMismatch(job.device.token, decision)
    }
    switch decision {
    case .reauthenticate(let reason):
      if accessToken == job.attempt.credential {
        logger.info("fcm refused the access token; fetching a new one", ["reason": reason])
        accessToken = nil
      }
      job.attempt.reauthenticated = true
      jobs.pushFront(job)
      return []
    case .stopProvider(let reason):
      var ended = stop(reason)
      ended.append(DeliveryOutcome(job: job, decision: decision, response: response))
      return ended
    default:
      return [DeliveryOutcome(job: job, decision: decision, response: response)]
    }
  }

  /// The decision for a `SENDER_ID_MISMATCH` answer to `token` (`FCMProjectCheck`): `policy`'s deletion once
  /// the project is proven, else the push given up with the token kept, or the provider stopped.
  private func senderMismatch(_ token: String, _ policy: PushDecision) -> PushDecision {
    switch projectCheck.senderMismatch(token: token) {
    case .deleteToken:
      return policy
    case .keepToken:
      return .giveUp(
        reason: "403 SENDER_ID_MISMATCH before FCM accepted any push for project \(account.projectID): "
          + "token kept (the service account may be for another Firebase project than the app)")
    case .stopProvider(let tokens):
      return .stopProvider(
        reason: "FCM answered 403 SENDER_ID_MISMATCH for \(tokens) different devices and accepted no push: "
          + "the service account (\(account.clientEmail)) is for project \(account.projectID), not the app's; "
          + "no token was deleted; fix [messaging.android] serviceAccountFile and restart")
    }
  }

  // MARK: Access token

  private func startTokenRequest(now: Int64, http: CurlMulti, tags: inout Int) -> [DeliveryOutcome]? {
    let assertion: String
    do throws(PushError) {
      assertion = try JWT.serviceAccountAssertion(account: account, key: key, issuedAt: now / 1000)
    } catch {
      return stop("cannot sign the service-account JWT: \(error)")
    }
    let body =
      "grant_type=" + formEncode("urn:ietf:params:oauth:grant-type:jwt-bearer") + "&assertion="
      + formEncode(assertion)
    let request = HTTPRequest(
      url: account.tokenURI, headers: ["content-type: application/x-www-form-urlencoded"],
      body: Array(body.utf8), caFile: caFile)
    tags += 1
    do throws(PushError) {
      try http.start(request, tag: tags)
      tokenTag = tags
    } catch {
      tokenRetryAt = now + RetryPolicy.minimumBackoffMs
    }
    return nil
  }

  private func handleToken(_ response: ProviderResponse, now: Int64) -> [DeliveryOutcome] {
    switch RetryPolicy.oauth(response, now: now, attempts: tokenFailures, jitter: jitter()) {
    case .token(let token, let expiresIn):
      accessToken = token
      tokensFetched += 1
      tokenFailures = 0
      tokenRetryAt = 0
      // `expiresIn` is clamped by the policy; the arithmetic saturates all the same.
      let lifetime = ProviderNumber.multiplying(expiresIn, 1000)
      tokenExpiresAt = ProviderNumber.adding(now, lifetime)
      tokenRefreshAt = ProviderNumber.adding(now, lifetime - min(300_000, lifetime / 4))
      logger.debug("fcm access token fetched", ["expiresIn": String(expiresIn)])
      return []
    case .retry(let at, let reason):
      tokenFailures += 1
      tokenRetryAt = at
      logger.warn("fcm access token not fetched; retrying later", ["reason": reason])
      guard accessToken == nil else { return [] }
      // Without a usable token nothing can go out: the queued pushes retry later.
      return jobs.drainWaiting().map { DeliveryOutcome(job: $0, decision: .retry(at: at, reason: reason)) }
    case .stopProvider(let reason):
      return stop(reason)
    }
  }

  // MARK: Stopping

  /// Stops the provider (a configuration fault): every waiting job ends with the reason.
  func stop(_ reason: String) -> [DeliveryOutcome] {
    state.stop(reason)
    return drain()
  }

  /// Every waiting job, ended with the reason the channel does not send.
  private func drain() -> [DeliveryOutcome] {
    state.reason.map { jobs.stopWaiting(reason: $0) } ?? []
  }
}
