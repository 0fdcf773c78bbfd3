/// A channel's jobs: a FIFO of those waiting and those on the wire by transfer tag.
struct DeliveryQueue {
  private var items: [DeliveryJob] = []
  private var head = 0
  /// Jobs on the wire, by transfer tag.
  var inFlight: [Int: DeliveryJob] = [:]

  /// Jobs waiting to start.
  var waiting: Int { items.count - head }
  /// Jobs waiting or on the wire.
  var count: Int { waiting + inFlight.count }

  mutating func append(_ job: DeliveryJob) { items.append(job) }

  /// Puts a job back at the front (a resend with fresh credentials goes first).
  mutating func pushFront(_ job: DeliveryJob) {
    if head > 0 {
      head -= 1
      items[head] = job
    } else {
      items.insert(job, at: 0)
    }
  }

  mutating func popFirst() -> DeliveryJob? {
    guard head < items.count else { return nil }
    let job = items[head]
    head += 1
    if head > 1024, head * 2 > items.count {
      items.removeFirst(head)
      head = 0
    }
    return job
  }

  /// Puts jobs that could not start yet back at the front, in their order.
  mutating func putBack(_ held: [DeliveryJob]) {
    for job in held.reversed() { pushFront(job) }
  }

  /// Puts `job`'s request on the wire under `tag`; a request curl refuses to start ends the job with a retry after
  /// the minimum backoff (returned).
  mutating func start(_ job: DeliveryJob, _ request: HTTPRequest, http: CurlMulti, tag: Int, now: Int64)
    -> DeliveryOutcome?
  {
    do throws(PushError) {
      try http.start(request, tag: tag)
      inFlight[tag] = job
      return nil
    } catch {
      return DeliveryOutcome(
        job: job, decision: .retry(at: now + RetryPolicy.minimumBackoffMs, reason: error.description))
    }
  }

  /// Every waiting job, removed and ended with `.stopProvider(reason:)`.
  mutating func stopWaiting(reason: String) -> [DeliveryOutcome] {
    drainWaiting().map { DeliveryOutcome(job: $0, decision: .stopProvider(reason: reason)) }
  }

  /// Every waiting job, removed.
  mutating func drainWaiting() -> [DeliveryJob] {
    let rest = Array(items[head...])
    items.removeAll(keepingCapacity: true)
    head = 0
    return rest
  }

  /// Removes the waiting jobs for which `matches` holds and returns them; the rest keep their order.
  mutating func remove(where matches: (DeliveryJob) -> Bool) -> [DeliveryJob] {
    let rest = drainWaiting()
    var removed: [DeliveryJob] = []
    for job in rest {
      if matches(job) { removed.append(job) } else { items.append(job) }
    }
    return removed
  }
}
