import Config
import Logging
import Store

/// One forward: a stored message, or a confirmation mail, for one target.
struct ForwardJob {
  /// Unique per sender (shares the engine's job numbers).
  var id: Int
  /// The engine's batch it belongs to; nil for a confirmation mail (no outbox row behind it).
  var batchID: Int?
  var target: ForwardTarget
  /// The outbox entry whose message it forwards; nil for a confirmation mail.
  var entry: OutboxEntry?
  /// The code a confirmation mail carries.
  var confirmationCode: String?
  /// Failed attempts of its outbox entries, or of its confirmation mail, so far (for the backoff).
  var attempts = 0
  /// 429s its target got in a row before this one.
  var throttles = 0
  /// The end of the forward's lifetime (`[messaging] maxAge` after its message), epoch ms; nil for none.
  var expiresAt: Int64?
}

/// The result of one forward job.
struct ForwardOutcome {
  var job: ForwardJob
  var decision: PushDecision
  /// The target's answer; nil when the job never reached it.
  var response: ProviderResponse?
  /// The class of a failure (``ForwardDecision/problem``).
  var problem: ForwardProblem?
  /// The service asked this whole server to wait (``ForwardDecision/wholeService``).
  var wholeService = false
}

/// The forwarder's sending side, driven by the push thread on the engine's curl multi handle (docs/api.md
/// "Forwarding"): ntfy and webhook POSTs over HTTPS, mails through the operator's SMTP server
/// (`[forward.email]`). At most ``maxInFlight`` on the wire and `[forward] perMinute` started per minute, every
/// station together, and one at a time per target (``maxInFlightPerTarget``: a target gets its messages in order,
/// and a slow or dead one holds one slot, not the whole queue); the rest wait in order. Unless `allowPrivateEndpoints`, an HTTPS target is never reached on
/// an address that is not public unicast: libcurl's opensocket callback checks every address the name resolved
/// to (the guard Web Push uses, `HTTPRequest.refusePrivateAddresses`), and such a target is disabled.
final class ForwardClient {
  /// Forwards on the wire at most.
  static let maxInFlight = 32
  /// Forwards on the wire to one target at most.
  static let maxInFlightPerTarget = 1

  let settings: PushConfig.Forward
  private let jitter: () -> Double
  private var waiting: [ForwardJob] = []
  private var head = 0
  private var inFlight: [Int: ForwardJob] = [:]
  /// Jobs on the wire by target (`ForwardTarget.deliveryKey`).
  private var inFlightByTarget: [String: Int] = [:]
  /// Start times within the last minute (the global rate).
  private var starts: [Int64] = []
  /// When the rate lets the next job start, while jobs wait for it.
  private(set) var nextTimerAt: Int64?
  /// Services (by ``origin(of:)``) that asked this whole server to wait, and until when (epoch ms): their
  /// targets' jobs are not started before (ntfy limits per client address, docs/api.md "Forwarding (email, ntfy, webhooks)").
  private var serviceHolds: [String: Int64] = [:]

  init(settings: PushConfig.Forward, jitter: @escaping () -> Double = { Double.random(in: 0..<1) }) {
    self.settings = settings
    self.jitter = jitter
  }

  /// Jobs queued or on the wire.
  var pendingCount: Int { waiting.count - head + inFlight.count }

  func enqueue(_ job: ForwardJob) {
    waiting.append(job)
  }

  /// Starts queued jobs within the limits; returns the jobs that ended without an answer.
  func pump(now: Int64, http: CurlMulti, tags: inout Int) -> [ForwardOutcome] {
    var ended: [ForwardOutcome] = []
    nextTimerAt = nil
    starts.removeAll { $0 <= now - 60_000 }
    // Jobs whose target has one on the wire already: they keep their place, ahead of the rest.
    var held: [ForwardJob] = []
    while inFlight.count < Self.maxInFlight, head < waiting.count {
      if starts.count >= settings.perMinute {
        nextTimerAt = (starts.first ?? now) + 60_000
        break
      }
      let job = waiting[head]
      head += 1
      let key = job.target.deliveryKey
      if inFlightByTarget[key, default: 0] >= Self.maxInFlightPerTarget {
        held.append(job)
        continue
      }
      if job.target.kind != .email, let until = serviceHolds[Self.origin(of: job.target)] {
        if until > now {
          ended.append(
            ForwardOutcome(
              job: job,
              decision: .retry(at: until, reason: "the service asked this server to wait (429)"),
              problem: .throttled))
          continue
        }
        serviceHolds[Self.origin(of: job.target)] = nil
      }
      if job.target.kind == .email && settings.email == nil {
        // Saved while the server had an SMTP server, which the configuration no longer names: nothing to retry.
        ended.append(
          ForwardOutcome(
            job: job, decision: .giveUp(reason: "email forwarding is not configured ([forward.email] url)")))
        continue
      }
      tags += 1
      do throws(PushError) {
        try start(job, http: http, tag: tags, now: now)
        inFlight[tags] = job
        inFlightByTarget[key, default: 0] += 1
        starts.append(now)
      } catch {
        ended.append(
          ForwardOutcome(
            job: job, decision: .retry(at: now + RetryPolicy.minimumBackoffMs, reason: error.description)))
      }
    }
    if !held.isEmpty {
      head -= held.count
      waiting.replaceSubrange(head..<(head + held.count), with: held)
    }
    if head > 256, head * 2 > waiting.count {
      waiting.removeFirst(head)
      head = 0
    }
    return ended
  }

  /// Puts `job`'s request on the wire under `tag`.
  private func start(_ job: ForwardJob, http: CurlMulti, tag: Int, now: Int64) throws(PushError) {
    let target = job.target
    switch target.kind {
    case .email:
      guard let email = settings.email else {
        throw PushError("email forwarding is not configured ([forward.email] url)")
      }
      let message: [UInt8]
      if let code = job.confirmationCode {
        message = ForwardPayload.confirmationMail(
          from: email.from, to: target.address, station: target.station, code: code, now: now)
      } else if let entry = job.entry {
        message = ForwardPayload.messageMail(
          from: email.from, to: target.address, station: target.station, message: entry.message)
      } else {
        throw PushError("a forward without a message")
      }
      try http.startMail(
        MailRequest(
          url: email.url, from: email.from, to: target.address, message: message, username: email.username,
          password: email.password, caFile: settings.caFile),
        tag: tag)
    case .ntfy, .webhook:
      guard let entry = job.entry else { throw PushError("a forward without a message") }
      guard let endpoint = WebPushEndpoint(target.address) else {
        throw PushError("not an https:// URL: \(CurlMulti.origin(of: target.address))")
      }
      var request: HTTPRequest
      if target.kind == .ntfy {
        request = HTTPRequest(
          url: endpoint.url,
          headers: ForwardPayload.ntfyHeaders(
            message: entry.message, priority: target.priority, token: target.secret),
          body: ForwardPayload.ntfyBody(station: target.station, message: entry.message),
          caFile: settings.caFile)
      } else {
        let body = ForwardPayload.webhookBody(station: target.station, message: entry.message)
        request = HTTPRequest(
          url: endpoint.url,
          headers: ForwardPayload.webhookHeaders(
            secret: target.secret ?? "", seconds: now / 1000, body: body),
          body: body, caFile: settings.caFile)
      }
      request.refusePrivateAddresses = !settings.allowPrivateEndpoints
      try http.start(request, tag: tag)
    }
  }

  /// Takes the answer to one of its transfers (nil when `tag` is not its own). An answer that asks the whole
  /// service to wait holds every job of that service's targets until the retry.
  func handle(tag: Int, response: ProviderResponse, now: Int64) -> ForwardOutcome? {
    guard let job = inFlight.removeValue(forKey: tag) else { return nil }
    let key = job.target.deliveryKey
    inFlightByTarget[key] = inFlightByTarget[key].flatMap { $0 > 1 ? $0 - 1 : nil }
    let made = RetryPolicy.forward(
      response, kind: job.target.kind, hasToken: job.target.secret != nil, now: now, attempts: job.attempts,
      jitter: jitter(), throttles: job.throttles, expiresAt: job.expiresAt)
    if made.wholeService, case .retry(let at, _) = made.decision {
      let origin = Self.origin(of: job.target)
      serviceHolds[origin] = max(serviceHolds[origin] ?? 0, at)
    }
    return ForwardOutcome(
      job: job, decision: made.decision, response: response, problem: made.problem,
      wholeService: made.wholeService)
  }

  /// Removes the waiting jobs of the target with `deliveryKey` (a target just disabled: nothing more goes to it)
  /// and returns them.
  func drop(_ deliveryKey: String) -> [ForwardJob] {
    var dropped: [ForwardJob] = []
    var kept: [ForwardJob] = []
    for job in waiting[head...] {
      if job.target.deliveryKey == deliveryKey { dropped.append(job) } else { kept.append(job) }
    }
    guard !dropped.isEmpty else { return [] }
    waiting = kept
    head = 0
    return dropped
  }

  /// The service a target is at: `scheme://host[:port]` of its URL, lower case.
  static func origin(of target: ForwardTarget) -> String {
    CurlMulti.origin(of: target.address).lowercased()
  }
}
