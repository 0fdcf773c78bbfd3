import Store

/// Whether a provider sends, and if not, why.
public enum ProviderState: Sendable, Equatable, CustomStringConvertible {
  /// Configured and sending.
  case ok
  /// Not configured or disabled (the reason is for the log).
  case off(String)
  /// Stopped by a configuration fault (a bad service account, an unreadable key file, a key
  /// APNs refuses) until the configuration is fixed and the program restarted.
  case stopped(String)

  /// The state as published for `/health`, `/metrics` and `aprs-cloud status` (without the reason for off).
  public var published: PushProviderState {
    switch self {
    case .ok: .ok
    case .off: .off
    case .stopped(let reason): .stopped(reason: reason)
    }
  }

  /// As published: `ok`, `off` or `stopped: …`.
  public var description: String { published.description }

  /// Stops the provider with `reason`; a provider already stopped keeps its first reason.
  mutating func stop(_ reason: String) {
    if case .stopped = self { return }
    self = .stopped(reason)
  }
}

/// One device's push, ready for its provider.
struct SendJob {
  /// Unique per sender.
  var id: Int
  /// The batch it belongs to (the engine's, or the push test's).
  var batchID: Int
  /// The device.
  var device: DeviceRecord
  /// FCM: the whole request body; APNs: the payload.
  var payload: [UInt8]
  /// APNs headers (without authorization).
  var headers: [(String, String)] = []
  /// Web Push: what the `Topic` is made from instead of the device's station (``PushContent/collapseName`` of a
  /// subscription push, so it never replaces an undelivered message push); nil: the station.
  var topic: String?
  /// Failed attempts of its outbox entries so far (for the backoff).
  var attempts: Int = 0
  /// 429s its device got in a row before this push (a 429 without `Retry-After` waits 60 s, doubling).
  var throttles: Int = 0
  /// The end of the push's lifetime (`[messaging] maxAge` after its newest message), epoch ms: the sender's
  /// own waits never run past it. Nil: no lifetime (the push test).
  var expiresAt: Int64?
  /// Already resent once with fresh credentials.
  var reauthenticated = false
  /// The credential it was sent with (to refresh it only once for many refusals).
  var credential = ""
  /// APNs: the environment of its current (or last) attempt; nil until the client picks one.
  var apnsEnvironment: APNsEnvironment?
  /// APNs: already sent to the other environment after `BadDeviceToken`.
  var triedOtherEnvironment = false

  /// APNs: the environment to remember for the device after `decision` (`APNsRoute.remember`).
  func environmentToRemember(after decision: PushDecision) -> APNsEnvironment? {
    guard decision == .delivered, let apnsEnvironment else { return nil }
    return APNsRoute.remember(stored: device.apnsEnvironment, accepted: apnsEnvironment)
  }
}

/// The result of one job.
struct JobOutcome {
  var job: SendJob
  var decision: PushDecision
  /// The provider's answer, nil when the job never reached the provider.
  var response: ProviderResponse?
}

/// A provider's sending side, driven by one thread: a FIFO of jobs, at most `maxInFlight` of
/// them on the wire (one HTTP/2 connection carries about 100 streams), credentials kept fresh.
protocol ProviderClient: AnyObject {
  var platform: DevicePlatform { get }
  var state: ProviderState { get }
  /// Jobs queued or on the wire.
  var pendingCount: Int { get }
  /// When the client wants to run again without network activity (a credential retry).
  var nextTimerAt: Int64? { get }
  /// Queues a job.
  func enqueue(_ job: SendJob)
  /// Refreshes credentials and starts queued jobs; returns the jobs that ended without an answer.
  func pump(now: Int64, http: CurlMulti, tags: inout Int) -> [JobOutcome]
  /// Takes the answer to one of its transfers (nil when `tag` is not its own); returns the jobs
  /// that ended (a job resent with fresh credentials, or to the other APNs environment, does not end).
  func handle(tag: Int, response: ProviderResponse, now: Int64) -> [JobOutcome]?
  /// Stops the provider (a configuration fault): every waiting job ends with the reason (returned).
  func stop(_ reason: String) -> [JobOutcome]
  /// A misconfiguration the provider sends despite (shown in `/health`), nil when none.
  var warning: String? { get }
}

/// The queue and in-flight bookkeeping both clients share.
struct JobQueue {
  private var items: [SendJob] = []
  private var head = 0
  /// Jobs on the wire, by transfer tag.
  var inFlight: [Int: SendJob] = [:]

  var waiting: Int { items.count - head }
  var count: Int { waiting + inFlight.count }

  mutating func append(_ job: SendJob) { items.append(job) }

  /// Puts a job back at the front (a resend with fresh credentials goes first).
  mutating func pushFront(_ job: SendJob) {
    if head > 0 {
      head -= 1
      items[head] = job
    } else {
      items.insert(job, at: 0)
    }
  }

  mutating func popFirst() -> SendJob? {
    guard head < items.count else { return nil }
    let job = items[head]
    head += 1
    if head > 1024, head * 2 > items.count {
      items.removeFirst(head)
      head = 0
    }
    return job
  }

  /// Puts `job`'s request on the wire under `tag`; a request curl refuses to start ends the job
  /// with a retry after the minimum backoff (returned).
  mutating func start(
    _ job: SendJob, _ request: HTTPRequest, http: CurlMulti, tag: Int, now: Int64
  ) -> JobOutcome? {
    do throws(PushError) {
      try http.start(request, tag: tag)
      inFlight[tag] = job
      return nil
    } catch {
      return JobOutcome(
        job: job, decision: .retry(at: now + RetryPolicy.minimumBackoffMs, reason: error.description))
    }
  }

  /// Every waiting job, removed and ended with `.stopProvider(reason:)`.
  mutating func stopWaiting(reason: String) -> [JobOutcome] {
    drainWaiting().map { JobOutcome(job: $0, decision: .stopProvider(reason: reason)) }
  }

  /// Every waiting job, removed.
  mutating func drainWaiting() -> [SendJob] {
    let rest = Array(items[head...])
    items.removeAll(keepingCapacity: true)
    head = 0
    return rest
  }
}
