import Config
import Logging
import Store

/// Web Push and UnifiedPush (RFC 8030): one POST per subscription to its endpoint, with a VAPID `Authorization`
/// (RFC 8292) and, when the subscription has keys, the body encrypted as `aes128gcm` (RFC 8291). One client per
/// platform (`webpush`, `unifiedpush`), both sharing one `VAPID` identity and the engine's curl multi handle:
/// requests to one origin share its connection (HTTP/2 where the push service offers it, else one kept-alive
/// HTTP/1.1 connection). What goes on the wire is bounded by the engine's shared ``SlotPool`` (per station, per
/// endpoint network or domain, a reserved share for the browsers' own push services (``KnownPushServices``) and for
/// endpoints that answered fast before, a short limit for the others: docs/design.md "Fair delivery slots"), so
/// one slow service, or many endpoints of one party, cannot hold every slot.
///
/// Unless `allowPrivateEndpoints`, no request goes to an address that is not public unicast: the endpoint's
/// host is judged by the addresses libcurl is about to connect to (`HTTPRequest.refusePrivateAddresses`), so a
/// name resolving to loopback, a private network or a cloud's metadata address is caught at send time like an
/// address literal. Such a subscription is deleted without a retry (`RetryPolicy.webPush`).
///
/// No credential to refresh and no account: the client stops only when the engine stops it.
final class WebPushChannel: PushChannel {
  let kind: ChannelKind
  let platform: DevicePlatform
  private(set) var state = ProviderState.ok
  let vapid: VAPID
  private let settings: PushConfig.WebPush
  private let logger: Logger
  private let jitter: () -> Double
  /// `[messaging] preview`: whether the text goes in the notification.
  private let preview: Bool

  private var jobs: SlottedQueue
  /// Push services that refuse every push the same way (`warning`).
  private var serviceWatch: WebPushServiceWatch
  /// Subscriptions refused the same way on every push, deleted after a day of it.
  private var refusals = WebPushRefusals()

  init(
    platform: DevicePlatform, vapid: VAPID, settings: PushConfig.WebPush, preview: Bool = true,
    slots: SlotPool, logger: Logger,
    jitter: @escaping () -> Double = { Double.random(in: 0..<1) }
  ) {
    self.jitter = jitter
    precondition(platform.isWebPush, "a Web Push client is for webpush or unifiedpush")
    self.platform = platform
    kind = ChannelKind(platform)
    self.preview = preview
    self.vapid = vapid
    self.settings = settings
    self.logger = logger
    jobs = SlottedQueue(pool: slots)
    serviceWatch = WebPushServiceWatch(subject: settings.subject)
  }

  var pendingCount: Int { jobs.count }
  var nextTimerAt: Int64? { nil }
  /// A push service that refused every push the same way lately (`WebPushServiceWatch`), with the VAPID contact.
  var warning: String? { serviceWatch.warning }

  func enqueue(_ job: DeliveryJob) {
    let host = WebPushEndpoint(job.device.token)?.host ?? ""
    jobs.append(
      job,
      as: SlotRequest(
        lane: .push, station: DeliveryStation(job.device.station), recipient: SlotRecipient(job.device.token),
        group: EndpointGroup(url: job.device.token), trusted: KnownPushServices.contains(host)))
  }

  /// The JSON payload (``WebPushPayload/body(_:preview:encrypted:)``, encrypted when the job starts if the
  /// subscription has keys) and the `TTL` and `Urgency` headers.
  func body(_ content: PushContent, for device: DeviceRecord, expiresAt: Int64, ttlSeconds: Int64)
    -> (Result<BuiltPayload, PayloadTooLarge>, [(String, String)])
  {
    (
      WebPushPayload.body(content, preview: preview, encrypted: device.webPushKeys != nil),
      WebPushPayload.headers(ttlSeconds: ttlSeconds, priority: content.priority)
    )
  }

  func drop(_ recipient: Recipient) -> [DeliveryJob] {
    jobs.remove { $0.recipient.key == recipient }
  }

  func pump(now: Int64, http: CurlMulti, tags: inout Int) -> [DeliveryOutcome] {
    guard state == .ok else { return drain() }
    var ended: [DeliveryOutcome] = []
    while let (job, ticket) = jobs.next(now: now) {
      let endpoint: WebPushEndpoint
      switch Self.endpoint(of: job, platform: platform) {
      case .failure(let box):
        jobs.unsent(ticket, now: now)
        ended.append(box.outcome)
        continue
      case .success(let parsed):
        endpoint = parsed
      }
      var request: HTTPRequest
      switch self.request(job, to: endpoint, now: now) {
      case .failure(let box):
        jobs.unsent(ticket, now: now)
        ended.append(box.outcome)
        continue
      case .success(let built):
        request = built
      }
      request.timeoutMs = ticket.timeoutMs
      tags += 1
      let tag = tags
      let send = { () throws(PushError) in try http.start(request, tag: tag) }
      if let refused = jobs.start(job, ticket, tag: tag, now: now, send) { ended.append(refused) }
    }
    return ended
  }

  /// The endpoint of `job`'s device; or the job's end when it cannot be sent to (a token that is not an endpoint,
  /// a `webpush` device without keys): such a subscription goes. Where the endpoint's host is (a private
  /// address on a public server) is judged when the connection opens, on the addresses it resolved to.
  static func endpoint(of job: DeliveryJob, platform: DevicePlatform) -> Result<WebPushEndpoint, OutcomeBox> {
    guard let endpoint = WebPushEndpoint(job.device.token) else {
      return .failure(dead(job, "not an https:// push endpoint"))
    }
    if platform == .webpush && job.device.webPushKeys == nil {
      return .failure(dead(job, "a webpush subscription without keys"))
    }
    return .success(endpoint)
  }

  /// The request for `job`: VAPID, the headers, the body encrypted for the subscription's keys (when it has
  /// them); or the job's end when its keys cannot be used (not a point on P-256).
  private func request(_ job: DeliveryJob, to endpoint: WebPushEndpoint, now: Int64) -> Result<
    HTTPRequest, OutcomeBox
  > {
    var headers: [String] = []
    let body: [UInt8]
    do throws(PushError) {
      headers.append("authorization: " + (try vapid.authorization(origin: endpoint.origin, now: now)))
      if let keys = job.device.webPushKeys {
        body = try WebPushEncryption.encrypt(job.payload, for: keys)
        headers += ["content-type: application/octet-stream", "content-encoding: aes128gcm"]
      } else {
        body = job.payload
        headers.append("content-type: application/json")
      }
    } catch {
      return .failure(Self.dead(job, "cannot encrypt for this subscription: \(error)"))
    }
    for (name, value) in job.headers { headers.append(name + ": " + value) }
    headers.append("topic: " + vapid.topic(station: job.topic ?? job.device.station))
    // No `Expect: 100-continue` round trip on HTTP/1.1 push services.
    headers.append("expect:")
    var request = HTTPRequest(url: endpoint.url, headers: headers, body: body, caFile: settings.caFile)
    request.refusePrivateAddresses = !settings.allowPrivateEndpoints
    return .success(request)
  }

  private static func dead(_ job: DeliveryJob, _ reason: String) -> OutcomeBox {
    OutcomeBox(DeliveryOutcome(job: job, decision: .gone(reason: reason, refreshedBefore: nil)))
  }

  func handle(tag: Int, response: ProviderResponse, now: Int64) -> [DeliveryOutcome]? {
    guard let job = jobs.answered(tag: tag, response: response, now: now) else { return nil }
    let answered = RetryPolicy.webPush(
      response, now: now, attempts: job.attempts, jitter: jitter(), throttles: job.throttles,
      expiresAt: job.expiresAt)
    // The service watch judges the push service by its answer, before a refusal becomes a deletion.
    watch(job, response, answered)
    let decision = refusals.decide(token: job.device.token, response: response, decision: answered, now: now)
    return [DeliveryOutcome(job: job, decision: decision, response: response)]
  }

  /// Feeds the push service's watch: an accepted push (or a subscription answered for) clears it, a refusal that
  /// is neither about load nor about the push's size (a 4xx given up: 400, 401, 403, …) counts.
  private func watch(_ job: DeliveryJob, _ response: ProviderResponse, _ decision: PushDecision) {
    guard response.transportError == nil, response.refusedAddress == nil,
      let host = WebPushEndpoint(job.device.token)?.host
    else { return }
    let before = serviceWatch.warning
    switch decision {
    case .delivered, .gone:
      serviceWatch.succeeded(host: host)
    case .giveUp where (400..<500).contains(response.status) && response.status != 413:
      serviceWatch.refused(host: host, kind: RetryPolicy.failureKind(response, platform: platform))
    default:
      return
    }
    if let warning = serviceWatch.warning, warning != before {
      logger.warn(
        "a web push service refuses every push", ["platform": platform.rawValue, "warning": warning])
    }
  }

  /// Stops the provider: every waiting job ends with the reason.
  func stop(_ reason: String) -> [DeliveryOutcome] {
    state.stop(reason)
    return drain()
  }

  /// Every waiting job, ended with the reason the channel does not send.
  private func drain() -> [DeliveryOutcome] {
    state.reason.map { jobs.stopWaiting(reason: $0) } ?? []
  }
}

/// A job's end as an `Error`, so `prepare` can return it in a `Result`.
struct OutcomeBox: Error {
  var outcome: DeliveryOutcome
  init(_ outcome: DeliveryOutcome) { self.outcome = outcome }
}

extension ChannelSetup {
  /// Adds the `webpush` and `unifiedpush` clients when `[messaging.webpush]` is on: the VAPID key at `keyFile`
  /// is loaded, or made on first use; a key that cannot be read or made stops both, loudly.
  mutating func addWebPush(_ config: PushConfig, keyFile: String?, slots: SlotPool, logger: Logger) {
    let platforms: [DevicePlatform] = [.webpush, .unifiedpush]
    guard let settings = config.webPush, let keyFile else {
      for platform in platforms { states[platform] = .off(config.webPushOff ?? "not configured") }
      // One warning for both (one switch, one fix): on the webpush line of /health.
      if let warning = config.webPushWarning { warnings[.webpush] = warning }
      return
    }
    if let host = PushConfig.WebPush.localContactHost(settings.subject) {
      logger.warn(
        "the web push contact is on a local name: Apple's push service refuses every push with it"
          + " (403 BadJwtToken); set [messaging.webpush] subject to a real mailto: or https:// contact",
        ["subject": settings.subject, "host": host])
    }
    switch VAPIDKeyFile.load(path: keyFile, subject: settings.subject, logger: logger) {
    case .success(let vapid):
      for platform in platforms {
        clients[platform] = WebPushChannel(
          platform: platform, vapid: vapid, settings: settings, preview: config.preview, slots: slots,
          logger: logger)
        states[platform] = .ok
      }
    case .failure(let error):
      for platform in platforms { states[platform] = .stopped(error.description) }
    }
  }
}
