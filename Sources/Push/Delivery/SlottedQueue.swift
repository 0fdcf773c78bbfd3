/// A channel's jobs when its endpoints are anyone's to name (Web Push, UnifiedPush, ntfy, webhooks, email): they
/// wait in a ``FairQueue`` and go on the wire only with a slot of the engine's shared ``SlotPool``, each with the
/// limit its ticket gives (docs/design.md "Fair delivery slots"). What is on the wire is kept by transfer tag with
/// its ticket, which goes back to the pool however the job ends.
struct SlottedQueue {
  private let pool: SlotPool
  private var waiting = FairQueue<DeliveryJob>()
  /// Jobs on the wire with their slots, by transfer tag.
  private var inFlight: [Int: (job: DeliveryJob, ticket: SlotTicket)] = [:]

  init(pool: SlotPool) {
    self.pool = pool
  }

  /// Jobs waiting or on the wire.
  var count: Int { waiting.count + inFlight.count }

  /// Queues `job`, which will take a slot as `request`.
  mutating func append(_ job: DeliveryJob, as request: SlotRequest) {
    waiting.append(job, as: request)
  }

  /// The next job the fair order and the pool let start now, with its slot; nil when none may. Give the slot back
  /// through ``start(_:_:tag:http:now:)``, ``unsent(_:now:)`` or ``answered(tag:response:now:)``.
  mutating func next(now: Int64) -> (job: DeliveryJob, ticket: SlotTicket)? {
    waiting.next(from: &pool.slots, now: now)
  }

  /// Puts `job` on the wire under `tag` with its ticket's limit (`start` starts it); a transfer curl refuses ends
  /// the job with a retry after the minimum backoff (returned), its slot given back.
  mutating func start(
    _ job: DeliveryJob, _ ticket: SlotTicket, tag: Int, now: Int64, _ start: () throws(PushError) -> Void
  ) -> DeliveryOutcome? {
    do throws(PushError) {
      try start()
      inFlight[tag] = (job, ticket)
      return nil
    } catch {
      unsent(ticket, now: now)
      return DeliveryOutcome(
        job: job, decision: .retry(at: now + RetryPolicy.minimumBackoffMs, reason: error.description))
    }
  }

  /// Gives back the slot of a job that never reached the network: nothing is learned of its endpoint.
  mutating func unsent(_ ticket: SlotTicket, now: Int64) {
    pool.slots.release(ticket, outcome: .notSent, now: now)
  }

  /// The job on the wire under `tag` (nil when it is not this queue's), its slot given back: an answer, whatever
  /// its status, tells the endpoint's history how fast it was; no answer (a timeout, a refused connection) demotes
  /// it.
  mutating func answered(tag: Int, response: ProviderResponse, now: Int64) -> DeliveryJob? {
    guard let (job, ticket) = inFlight.removeValue(forKey: tag) else { return nil }
    pool.slots.release(ticket, outcome: response.transportError == nil ? .answered : .noAnswer, now: now)
    return job
  }

  /// Removes the waiting jobs `matches` picks and returns them, oldest first.
  mutating func remove(where matches: (DeliveryJob) -> Bool) -> [DeliveryJob] {
    waiting.removeAll(where: matches)
  }

  /// Every waiting job, removed and ended with `.stopProvider(reason:)`.
  mutating func stopWaiting(reason: String) -> [DeliveryOutcome] {
    remove { _ in true }.map { DeliveryOutcome(job: $0, decision: .stopProvider(reason: reason)) }
  }
}
