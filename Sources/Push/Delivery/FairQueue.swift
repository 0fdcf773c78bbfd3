/// The jobs waiting for a slot of ``DeliverySlots``, and the order they get one in (docs/design.md "Fair
/// delivery slots"). Only jobs that are due belong here (a retry waits for its time elsewhere).
///
/// ``next(from:now:)`` starts, among the waiting jobs every bound admits now, the one whose station (in its
/// lane) has the fewest requests on the wire; among those, the one whose station was served longest ago (a
/// station that has just started waiting counts as never served); among those, the one queued first. A job its
/// recipient's, station's or group's cap holds back is skipped, never blocking the jobs behind it. One
/// station's jobs keep their order (FIFO per station, so per recipient: a forward target gets its messages in
/// order).
///
/// Why not plain FIFO: stations whose slow targets keep them at their cap would, with FIFO, take every slot as
/// it frees (their next jobs are older than a newcomer's), and many of them whose requests time out together
/// would take all the freed slots again. Served round-robin by station, a station that starts waiting is
/// served at the first free slot, ahead of every station that has been served. Nothing starves: each slot is
/// released within its timeout, and among stations holding as few, the one waiting longest since its last
/// start goes next.
///
/// Cost of one pick: one look at each station with waiting jobs in the lanes that have room, and at that
/// station's jobs up to its first admissible one.
struct FairQueue<Job> {
  private struct Waiting {
    var seq: UInt64
    var request: SlotRequest
    var job: Job
  }

  private struct StationKey: Hashable {
    var lane: DeliveryLane
    var station: DeliveryStation
  }

  private struct StationQueue {
    /// Oldest first.
    var waiting: [Waiting]
    /// When (in picks) the station last got a slot while waiting; 0 for not since it started waiting.
    var servedAt: UInt64 = 0
  }

  /// Each station's waiting jobs.
  private var queues: [StationKey: StationQueue] = [:]
  private var nextSeq: UInt64 = 0
  private var picks: UInt64 = 0
  private(set) var count = 0

  init() {}

  var isEmpty: Bool { count == 0 }

  /// Queues `job`, which will take a slot as `request`.
  mutating func append(_ job: Job, as request: SlotRequest) {
    queues[StationKey(lane: request.lane, station: request.station), default: StationQueue(waiting: [])]
      .waiting.append(Waiting(seq: nextSeq, request: request, job: job))
    nextSeq += 1
    count += 1
  }

  /// Takes a slot in `slots` for the next job in the fair order and removes it from the queue; nil when no
  /// waiting job may start now. Call it until nil after every release and every append.
  mutating func next(from slots: inout DeliverySlots, now: Int64) -> (job: Job, ticket: SlotTicket)? {
    typealias Rank = (held: Int, servedAt: UInt64, seq: UInt64)
    func precedes(_ left: Rank, _ right: Rank) -> Bool {
      (left.held, left.servedAt, left.seq) < (right.held, right.servedAt, right.seq)
    }
    var best: (key: StationKey, index: Int, rank: Rank)?
    for (key, queue) in queues {
      let lane = slots.limits[key.lane]
      guard slots.inFlight(key.lane) < lane.total else { continue }
      let held = slots.stationInFlight(key.station, lane: key.lane)
      guard held < lane.perStation else { continue }
      // No job of this station can rank before the best one found.
      if let best, !precedes((held, queue.servedAt, queue.waiting[0].seq), best.rank) { continue }
      guard let index = queue.waiting.firstIndex(where: { slots.blocker($0.request, now: now) == nil }) else {
        continue
      }
      let rank = (held: held, servedAt: queue.servedAt, seq: queue.waiting[index].seq)
      if let best, !precedes(rank, best.rank) { continue }
      best = (key, index, rank)
    }
    guard let best, var queue = queues[best.key] else { return nil }
    let chosen = queue.waiting.remove(at: best.index)
    guard case .start(let ticket) = slots.admit(chosen.request, now: now) else {
      preconditionFailure("a job every bound admitted was refused")
    }
    picks += 1
    queue.servedAt = picks
    queues[best.key] = queue.waiting.isEmpty ? nil : queue
    count -= 1
    return (chosen.job, ticket)
  }

  /// Removes the waiting jobs `shouldRemove` picks (a coalesced push, a deleted target) and returns them,
  /// oldest first.
  mutating func removeAll(where shouldRemove: (Job) -> Bool) -> [Job] {
    var removed: [(UInt64, Job)] = []
    for (key, var queue) in queues {
      var kept: [Waiting] = []
      for entry in queue.waiting {
        if shouldRemove(entry.job) { removed.append((entry.seq, entry.job)) } else { kept.append(entry) }
      }
      queue.waiting = kept
      queues[key] = kept.isEmpty ? nil : queue
    }
    count -= removed.count
    return removed.sorted { $0.0 < $1.0 }.map(\.1)
  }

  /// The waiting jobs, oldest first.
  var jobs: [Job] {
    queues.values.flatMap(\.waiting).sorted { $0.seq < $1.seq }.map(\.job)
  }
}
