import Config
import Logging
import Store

/// APNs with token authentication: one ES256 provider token, signed with the `.p8` key, shared
/// by every request and re-signed about every 50 minutes (Apple wants between 20 and 60), never
/// per request. `ExpiredProviderToken` re-signs at once and resends that push once;
/// `InvalidProviderToken` stops the provider.
///
/// The token is also kept across restarts through `cache` (a 0600 file of the listener's beside the
/// database, `PrivateTokenFile`; never the database, which the internet-facing responder reads):
/// APNs answers `TooManyProviderTokenUpdates` to a new token within 20 minutes of the previous
/// one, which a restarted listener or an operator's `push-test` would otherwise earn. A cached
/// token APNs calls invalid (a replaced key) is dropped and re-signed once before the provider is
/// stopped.
///
/// Each device's push goes to the environment that last accepted it, else to the one `production`
/// picks; a `BadDeviceToken` is tried once in the other environment before the token is called
/// dead (`APNsRoute`), and a `production` setting the devices contradict becomes `warning`.
final class APNsChannel: PushChannel {
  /// Where the provider token is kept between processes: `load` and `save` a
  /// `"<keyId> <teamId> <issuedAtMs> <jwt>"` line.
  struct TokenCache {
    var load: () -> String?
    var save: (String) -> Void
  }

  /// A provider token is re-signed after this long.
  static let tokenRefreshMs: Int64 = 50 * 60_000

  let kind = ChannelKind.apns
  private(set) var state = ProviderState.ok
  private let config: PushConfig.IOS
  private let key: SigningKey
  private let logger: Logger
  /// `[messaging] preview`: whether the text goes in the notification.
  private let preview: Bool
  /// Each push's own `gcm.message_id` (FlutterFire hands only such pushes to the app).
  private var messageIDs = PushMessageIDs()
  private let jitter: () -> Double
  let maxInFlight: Int

  private var jobs = DeliveryQueue()
  private var providerToken: String?
  private var providerTokenIssuedAt: Int64 = 0
  private var cachedToken: String?
  private var cacheRead = false
  /// Shares the provider token with other processes (nil: this process only).
  var cache: TokenCache?
  /// Provider tokens signed so far (for tests and logs).
  private(set) var tokensSigned = 0
  private var environmentWatch: APNsEnvironmentWatch
  private(set) var warning: String?

  init(
    config: PushConfig.IOS, key: SigningKey, preview: Bool = true, logger: Logger, maxInFlight: Int = 100,
    jitter: @escaping () -> Double = { Double.random(in: 0..<1) }
  ) {
    self.config = config
    self.key = key
    self.logger = logger
    self.preview = preview
    self.maxInFlight = maxInFlight
    self.jitter = jitter
    environmentWatch = APNsEnvironmentWatch(production: config.production)
  }

  /// Loads the `.p8` key named by the configuration: the error names the key and file.
  static func load(_ config: PushConfig.IOS, preview: Bool, logger: Logger) -> Result<APNsChannel, PushError>
  {
    switch readSmallFile(config.keyFile) {
    case .failure(let error):
      return .failure(PushError("messaging.ios.apns.keyFile: \(error)"))
    case .success(let bytes):
      do throws(PushError) {
        let key = try SigningKey(pem: bytes, algorithm: .es256)
        _ = try JWT.apnsProviderToken(keyID: config.keyId, teamID: config.teamId, key: key, issuedAt: 0)
        return .success(APNsChannel(config: config, key: key, preview: preview, logger: logger))
      } catch {
        return .failure(PushError("messaging.ios.apns.keyFile \(config.keyFile): \(error)"))
      }
    }
  }

  var pendingCount: Int { jobs.count }
  var nextTimerAt: Int64? { nil }

  func enqueue(_ job: DeliveryJob) {
    jobs.append(job)
  }

  /// The payload (``PushPayload/apns(_:preview:messageID:)``, its own `gcm.message_id` each) and the `apns-*`
  /// headers: the bundle id as topic, the expiry, the collapse id and the priority of `content`.
  func body(_ content: PushContent, for device: DeviceRecord, expiresAt: Int64, ttlSeconds: Int64)
    -> (Result<BuiltPayload, PayloadTooLarge>, [(String, String)])
  {
    (
      PushPayload.apns(content, preview: preview, messageID: messageIDs.next()),
      PushPayload.apnsHeaders(
        station: content.station, bundleId: config.bundleId, expiration: expiresAt / 1000,
        collapseID: content.collapseID, priority: content.priority)
    )
  }

  func drop(_ recipient: Recipient) -> [DeliveryJob] {
    jobs.remove { $0.recipient.key == recipient }
  }

  func pump(now: Int64, http: CurlMulti, tags: inout Int) -> [DeliveryOutcome] {
    guard state == .ok else { return drain() }
    guard jobs.waiting > 0 else { return [] }
    if providerToken == nil && !cacheRead {
      cacheRead = true
      loadCachedToken(now: now)
    }
    if providerToken == nil || now - providerTokenIssuedAt >= APNsChannel.tokenRefreshMs {
      do throws(PushError) {
        let token = try JWT.apnsProviderToken(
          keyID: config.keyId, teamID: config.teamId, key: key, issuedAt: now / 1000)
        providerToken = token
        providerTokenIssuedAt = now
        cachedToken = nil
        tokensSigned += 1
        cache?.save("\(config.keyId) \(config.teamId) \(now) \(token)")
        logger.debug("apns provider token signed", ["keyId": config.keyId])
      } catch {
        return stop("cannot sign the APNs provider token: \(error)")
      }
    }
    guard let providerToken else { return [] }
    var ended: [DeliveryOutcome] = []
    while jobs.inFlight.count < maxInFlight, var job = jobs.popFirst() {
      guard let token = DeviceToken.apns(job.device.token) else {
        ended.append(
          DeliveryOutcome(
            job: job, decision: .gone(reason: "not a hex APNs device token", refreshedBefore: nil)))
        continue
      }
      let environment =
        job.attempt.apnsEnvironment
        ?? APNsRoute.first(stored: job.device.apnsEnvironment, production: config.production)
      job.attempt.apnsEnvironment = environment
      job.attempt.credential = providerToken
      var headers = ["authorization: bearer " + providerToken]
      for (name, value) in job.headers { headers.append(name + ": " + value) }
      let request = HTTPRequest(
        url: config.endpoint(production: environment == .production) + "/3/device/" + token, headers: headers,
        body: job.payload, caFile: config.caFile)
      tags += 1
      if let refused = jobs.start(job, request, http: http, tag: tags, now: now) { ended.append(refused) }
    }
    return ended
  }

  func handle(tag: Int, response: ProviderResponse, now: Int64) -> [DeliveryOutcome]? {
    guard var job = jobs.inFlight.removeValue(forKey: tag) else { return nil }
    let decision = RetryPolicy.apns(
      response, now: now, attempts: job.attempts, reauthenticated: job.attempt.reauthenticated,
      jitter: jitter(),
      throttles: job.throttles, expiresAt: job.expiresAt)
    // Expired, or a token from the shared cache that APNs refuses: re-sign and resend once.
    var resign: String?
    switch decision {
    case .reauthenticate(let reason): resign = reason
    case .stopProvider(let reason)
    where !job.attempt.reauthenticated && job.attempt.credential == cachedToken:
      resign = reason
    default: break
    }
    if let reason = resign {
      if providerToken == job.attempt.credential {
        logger.info("apns refused the provider token; re-signing", ["reason": reason])
        providerToken = nil
        cachedToken = nil
      }
      job.attempt.reauthenticated = true
      jobs.pushFront(job)
      return []
    }
    if case .stopProvider(let reason) = decision {
      var ended = stop(reason)
      ended.append(DeliveryOutcome(job: job, decision: decision, response: response))
      return ended
    }
    let environment = job.attempt.apnsEnvironment ?? APNsRoute.configured(production: config.production)
    let step = APNsRoute.next(
      after: decision, badDeviceToken: RetryPolicy.isBadDeviceToken(response), environment: environment,
      triedOther: job.attempt.triedOtherEnvironment)
    switch step {
    case .tryOther(let other):
      logger.debug(
        "apns: BadDeviceToken; trying the other environment",
        ["token": redactedToken(job.device.token), "refusedBy": environment.rawValue, "next": other.rawValue])
      job.attempt.apnsEnvironment = other
      job.attempt.triedOtherEnvironment = true
      jobs.pushFront(job)
      return []
    case .done(let final):
      if final == .delivered { noteAccepted(job.device.token, by: environment) }
      return [DeliveryOutcome(job: job, decision: final, response: response)]
    }
  }

  /// Feeds the environment watch; logs its warning when it appears.
  private func noteAccepted(_ token: String, by environment: APNsEnvironment) {
    environmentWatch.accepted(token: token, by: environment)
    let now = environmentWatch.warning
    guard now != warning else { return }
    warning = now
    if let now {
      logger.warn("apns: the production setting contradicts the devices", ["warning": now])
    } else {
      logger.info("apns: the configured environment accepts devices again")
    }
  }

  /// Takes the shared provider token when it is for this key and team and young enough.
  private func loadCachedToken(now: Int64) {
    guard let line = cache?.load() else { return }
    let fields = line.split(separator: " ", maxSplits: 3).map(String.init)
    guard fields.count == 4, fields[0] == config.keyId, fields[1] == config.teamId,
      let issuedAt = Int64(fields[2]), issuedAt >= 0, now >= 0,
      issuedAt <= now + 60_000, now - issuedAt < APNsChannel.tokenRefreshMs
    else { return }
    providerToken = fields[3]
    providerTokenIssuedAt = issuedAt
    cachedToken = fields[3]
    logger.debug(
      "apns provider token reused", ["keyId": config.keyId, "ageSeconds": String((now - issuedAt) / 1000)])
  }

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
