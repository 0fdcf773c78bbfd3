import Config
import Logging
import Store

/// One forward channel (ntfy, webhook or email: ``kind``), driven by the push thread on the engine's curl multi
/// handle (docs/api.md "Forwarding"): ntfy and webhook POSTs over HTTPS, mails through the operator's SMTP server
/// (`[forward.email]`). The three share one ``ForwardBudget`` (forwards on the wire and started per minute, every
/// station together); each target gets one at a time (``maxInFlightPerTarget``: its messages in order, and a slow
/// or dead one holds one slot, not the whole queue); the rest wait in order. Unless `allowPrivateEndpoints`, an
/// HTTPS target is never reached on an address that is not public unicast: libcurl's opensocket callback checks
/// every address the name resolved to (the guard Web Push uses, `HTTPRequest.refusePrivateAddresses`), and such a
/// target is disabled.
final class ForwardChannel: DeliveryChannel {
  /// Forwards on the wire to one target at most.
  static let maxInFlightPerTarget = 1

  let kind: ChannelKind
  let forwardKind: ForwardKind
  let settings: PushConfig.Forward
  private(set) var state = ProviderState.ok
  private let budget: ForwardBudget
  private let jitter: () -> Double
  private var jobs = DeliveryQueue()
  /// Jobs on the wire by target.
  private var inFlightByTarget: [Recipient: Int] = [:]
  /// When the rate lets the next job start, while jobs wait for it.
  private(set) var nextTimerAt: Int64?
  /// Forward channels have no setting their answers can contradict.
  var warning: String? { nil }

  init(
    _ forwardKind: ForwardKind, settings: PushConfig.Forward, budget: ForwardBudget,
    jitter: @escaping () -> Double = { Double.random(in: 0..<1) }
  ) {
    self.forwardKind = forwardKind
    kind = ChannelKind(forwardKind)
    self.settings = settings
    self.budget = budget
    self.jitter = jitter
  }

  /// The three forward channels of `settings`, sharing one budget.
  static func all(settings: PushConfig.Forward, jitter: @escaping () -> Double) -> [ForwardChannel] {
    let budget = ForwardBudget(perMinute: settings.perMinute)
    return ForwardKind.allCases.map { ForwardChannel($0, settings: settings, budget: budget, jitter: jitter) }
  }

  var pendingCount: Int { jobs.count }

  func enqueue(_ job: DeliveryJob) {
    jobs.append(job)
  }

  /// Starts queued jobs within the limits; returns the jobs that ended without an answer.
  func pump(now: Int64, http: CurlMulti, tags: inout Int) -> [DeliveryOutcome] {
    var ended: [DeliveryOutcome] = []
    nextTimerAt = nil
    budget.age(now: now)
    // Jobs whose target has one on the wire already: they keep their place, ahead of the rest.
    var held: [DeliveryJob] = []
    while budget.hasRoom, jobs.waiting > 0 {
      if let wait = budget.rateWait() {
        nextTimerAt = wait
        break
      }
      guard let job = jobs.popFirst() else { break }
      let key = job.recipient.key
      if inFlightByTarget[key, default: 0] >= Self.maxInFlightPerTarget {
        held.append(job)
        continue
      }
      if forwardKind != .email, let until = budget.serviceHolds[Self.origin(of: job.target)] {
        if until > now {
          ended.append(
            DeliveryOutcome(
              job: job,
              decision: .retry(at: until, reason: "the service asked this server to wait (429)"),
              problem: .throttled))
          continue
        }
        budget.serviceHolds[Self.origin(of: job.target)] = nil
      }
      if forwardKind == .email && settings.email == nil {
        // Saved while the server had an SMTP server, which the configuration no longer names: nothing to retry.
        ended.append(
          DeliveryOutcome(
            job: job, decision: .giveUp(reason: "email forwarding is not configured ([forward.email] url)")))
        continue
      }
      tags += 1
      do throws(PushError) {
        try start(job, http: http, tag: tags, now: now)
        jobs.inFlight[tags] = job
        inFlightByTarget[key, default: 0] += 1
        budget.started(now: now)
      } catch {
        ended.append(
          DeliveryOutcome(
            job: job, decision: .retry(at: now + RetryPolicy.minimumBackoffMs, reason: error.description)))
      }
    }
    jobs.putBack(held)
    return ended
  }

  /// Puts `job`'s request on the wire under `tag`: the request its kind builds (``NtfyRequest``,
  /// ``WebhookRequest``, ``EmailRequest``).
  private func start(_ job: DeliveryJob, http: CurlMulti, tag: Int, now: Int64) throws(PushError) {
    switch forwardKind {
    case .email:
      try http.startMail(try EmailRequest.mail(job, settings: settings, now: now), tag: tag)
    case .ntfy:
      try http.start(try NtfyRequest.request(job, settings: settings), tag: tag)
    case .webhook:
      try http.start(try WebhookRequest.request(job, settings: settings, now: now), tag: tag)
    }
  }

  /// Takes the answer to one of its transfers (nil when `tag` is not its own). An answer that asks the whole
  /// service to wait holds every job of that service's targets until the retry.
  func handle(tag: Int, response: ProviderResponse, now: Int64) -> [DeliveryOutcome]? {
    guard let job = jobs.inFlight.removeValue(forKey: tag) else { return nil }
    budget.ended()
    let key = job.recipient.key
    inFlightByTarget[key] = inFlightByTarget[key].flatMap { $0 > 1 ? $0 - 1 : nil }
    let target = job.target
    let made = RetryPolicy.forward(
      response, kind: target.kind, hasToken: target.secret != nil, now: now, attempts: job.attempts,
      jitter: jitter(), throttles: job.throttles, expiresAt: job.expiresAt)
    if made.wholeService, case .retry(let at, _) = made.decision {
      let origin = Self.origin(of: target)
      budget.serviceHolds[origin] = max(budget.serviceHolds[origin] ?? 0, at)
    }
    return [
      DeliveryOutcome(
        job: job, decision: made.decision, response: response, problem: made.problem,
        wholeService: made.wholeService)
    ]
  }

  /// Forward channels are never stopped by a configuration fault (a bad target is that target's): nothing ends.
  func stop(_ reason: String) -> [DeliveryOutcome] { [] }

  func drop(_ recipient: Recipient) -> [DeliveryJob] {
    jobs.remove { $0.recipient.key == recipient }
  }

  /// The service a target is at: `scheme://host[:port]` of its URL, lower case.
  static func origin(of target: ForwardTarget) -> String {
    CurlMulti.origin(of: target.address).lowercased()
  }
}
