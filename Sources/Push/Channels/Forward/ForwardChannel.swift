import Config
import Logging
import Store

/// One forward channel (ntfy, webhook or email: ``kind``), driven by the push thread on the engine's curl multi
/// handle (docs/api.md "Forwarding"): ntfy and webhook POSTs over HTTPS, mails through the operator's SMTP server
/// (`[forward.email]`). What goes on the wire takes a slot of the engine's ``SlotPool`` (the forward lane: per
/// station, per target one at a time so its messages arrive in order, per endpoint network or domain, a reserved
/// share for the SMTP server and for targets that answered fast before, a short limit for the others: docs/design.md
/// "Fair delivery slots"); the three channels also share one ``ForwardBudget`` (started per minute, every station
/// together). Unless `allowPrivateEndpoints`, an HTTPS target is never reached on an address that is not public
/// unicast: libcurl's opensocket callback checks every address the name resolved to (the guard Web Push uses,
/// `HTTPRequest.refusePrivateAddresses`), and such a target is disabled.
final class ForwardChannel: DeliveryChannel {
  let kind: ChannelKind
  let forwardKind: ForwardKind
  let settings: PushConfig.Forward
  private(set) var state = ProviderState.ok
  private let budget: ForwardBudget
  private let jitter: () -> Double
  private var jobs: SlottedQueue
  /// When the rate lets the next job start, while jobs wait for it.
  private(set) var nextTimerAt: Int64?
  /// Forward channels have no setting their answers can contradict.
  var warning: String? { nil }

  init(
    _ forwardKind: ForwardKind, settings: PushConfig.Forward, budget: ForwardBudget, slots: SlotPool,
    jitter: @escaping () -> Double = { Double.random(in: 0..<1) }
  ) {
    self.forwardKind = forwardKind
    kind = ChannelKind(forwardKind)
    self.settings = settings
    self.budget = budget
    jobs = SlottedQueue(pool: slots)
    self.jitter = jitter
  }

  /// The three forward channels of `settings`, sharing one budget and the engine's slots.
  static func all(settings: PushConfig.Forward, slots: SlotPool, jitter: @escaping () -> Double)
    -> [ForwardChannel]
  {
    let budget = ForwardBudget(perMinute: settings.perMinute)
    return ForwardKind.allCases.map {
      ForwardChannel($0, settings: settings, budget: budget, slots: slots, jitter: jitter)
    }
  }

  var pendingCount: Int { jobs.count }

  /// Queues a job: a mail goes to the operator's SMTP server (trusted: one configured server), an ntfy or webhook
  /// forward to the target's own URL.
  func enqueue(_ job: DeliveryJob) {
    let target = job.target
    let email = forwardKind == .email
    let request = SlotRequest(
      lane: .forward, station: DeliveryStation(target.station), recipient: SlotRecipient(target.deliveryKey),
      group: EndpointGroup(url: email ? settings.email?.url ?? "" : target.address),
      transport: email ? .smtp : .https, trusted: email)
    jobs.append(job, as: request)
  }

  /// Starts queued jobs within the limits; returns the jobs that ended without an answer.
  func pump(now: Int64, http: CurlMulti, tags: inout Int) -> [DeliveryOutcome] {
    var ended: [DeliveryOutcome] = []
    nextTimerAt = nil
    budget.age(now: now)
    while jobs.count > 0 {
      if let wait = budget.rateWait() {
        nextTimerAt = wait
        break
      }
      guard let (job, ticket) = jobs.next(now: now) else { break }
      if forwardKind != .email, let until = budget.serviceHolds[Self.origin(of: job.target)] {
        if until > now {
          jobs.unsent(ticket, now: now)
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
        jobs.unsent(ticket, now: now)
        ended.append(
          DeliveryOutcome(
            job: job, decision: .giveUp(reason: "email forwarding is not configured ([forward.email] url)")))
        continue
      }
      tags += 1
      let tag = tags
      let send = { () throws(PushError) in
        try self.start(job, timeoutMs: ticket.timeoutMs, http: http, tag: tag, now: now)
      }
      if let refused = jobs.start(job, ticket, tag: tag, now: now, send) {
        ended.append(refused)
      } else {
        budget.started(now: now)
      }
    }
    return ended
  }

  /// Puts `job`'s request on the wire under `tag`: the request its kind builds (``NtfyRequest``,
  /// ``WebhookRequest``, ``EmailRequest``).
  private func start(_ job: DeliveryJob, timeoutMs: Int, http: CurlMulti, tag: Int, now: Int64)
    throws(PushError)
  {
    switch forwardKind {
    case .email:
      var mail = try EmailRequest.mail(job, settings: settings, now: now)
      mail.timeoutMs = timeoutMs
      try http.startMail(mail, tag: tag)
    case .ntfy, .webhook:
      var request =
        forwardKind == .ntfy
        ? try NtfyRequest.request(job, settings: settings)
        : try WebhookRequest.request(job, settings: settings, now: now)
      request.timeoutMs = timeoutMs
      try http.start(request, tag: tag)
    }
  }

  /// Takes the answer to one of its transfers (nil when `tag` is not its own). An answer that asks the whole
  /// service to wait holds every job of that service's targets until the retry.
  func handle(tag: Int, response: ProviderResponse, now: Int64) -> [DeliveryOutcome]? {
    guard let job = jobs.answered(tag: tag, response: response, now: now) else { return nil }
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
