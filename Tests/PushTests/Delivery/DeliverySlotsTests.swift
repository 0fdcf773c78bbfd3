import Testing

@testable import Push

/// `DeliverySlots`, `FairQueue`, `EndpointHistory` and `EndpointGroup`: the attacks that delayed an
/// unrelated station's deliveries, as pure simulations, and each rule on its own.
@Suite struct DeliverySlotsTests {
  /// One delivery in the simulation: where it goes and how long its endpoint takes to answer.
  struct Job: Hashable {
    var id: Int
    var request: SlotRequest
    /// The endpoint answers this many ms after the request starts (past the ticket's timeout: no answer).
    var answerMs: Int64
  }

  /// A discrete-time engine: each round ends the requests whose answer or timeout is due, then starts every
  /// job the queue admits. Bounded by the caller's round count.
  struct Simulation {
    var slots: DeliverySlots
    var queue = FairQueue<Job>()
    var now: Int64 = 0
    var stepMs: Int64 = 100
    private var nextID = 0
    private(set) var onTheWire: [(ticket: SlotTicket, job: Job, endsAt: Int64, answered: Bool)] = []
    /// When each job started, by id.
    private(set) var startedAt: [Int: Int64] = [:]
    /// The order jobs started in (ids).
    private(set) var startOrder: [Int] = []
    /// When each job's answer came (ids of answered jobs only).
    private(set) var answeredAt: [Int: Int64] = [:]
    private(set) var tickets: [Int: SlotTicket] = [:]
    /// The jobs started, by id.
    private(set) var startedJobs: [Int: Job] = [:]

    init(slots: DeliverySlots = DeliverySlots()) { self.slots = slots }

    @discardableResult
    mutating func enqueue(_ request: SlotRequest, answerMs: Int64) -> Int {
      nextID += 1
      queue.append(Job(id: nextID, request: request, answerMs: answerMs), as: request)
      return nextID
    }

    /// Ends what is due, then starts what may start; returns the ids started.
    @discardableResult
    mutating func round() -> [Int] {
      let due = onTheWire.filter { $0.endsAt <= now }
      onTheWire.removeAll { $0.endsAt <= now }
      for entry in due {
        slots.release(entry.ticket, outcome: entry.answered ? .answered : .noAnswer, now: entry.endsAt)
        if entry.answered { answeredAt[entry.job.id] = entry.endsAt }
      }
      var started: [Int] = []
      for _ in 0..<10_000 {
        guard let (job, ticket) = queue.next(from: &slots, now: now) else { break }
        let answered = job.answerMs <= Int64(ticket.timeoutMs)
        let endsAt = now + (answered ? job.answerMs : Int64(ticket.timeoutMs))
        onTheWire.append((ticket, job, endsAt, answered))
        startedAt[job.id] = now
        startOrder.append(job.id)
        tickets[job.id] = ticket
        startedJobs[job.id] = job
        started.append(job.id)
      }
      return started
    }

    /// Runs rounds `stepMs` apart until `untilMs` (at most 100,000 rounds).
    mutating func run(untilMs: Int64) {
      for _ in 0..<100_000 {
        round()
        guard now + stepMs <= untilMs else { return }
        now += stepMs
      }
    }

    /// Runs rounds until `id` has an answer or `limitMs` passed; its answer time.
    mutating func runUntilAnswered(_ id: Int, limitMs: Int64) -> Int64? {
      for _ in 0..<100_000 {
        round()
        if let at = answeredAt[id] { return at }
        guard now + stepMs <= limitMs else { return nil }
        now += stepMs
      }
      return nil
    }
  }

  static func forward(_ station: String, target: String, url: String, trusted: Bool = false) -> SlotRequest {
    SlotRequest(
      lane: .forward, station: DeliveryStation(station),
      recipient: SlotRecipient("forward:\(station)/\(target)"),
      group: EndpointGroup(url: url), trusted: trusted)
  }

  static func push(_ station: String, device: String, url: String, trusted: Bool = false) -> SlotRequest {
    SlotRequest(
      lane: .push, station: DeliveryStation(station), recipient: SlotRecipient(device),
      group: EndpointGroup(url: url), trusted: trusted)
  }

  static let fcm = "https://fcm.googleapis.com/v1/projects/aprs-cloud/messages:send"

  /// Seven stations, each with five webhooks on its own domain that take 20 s, flooding: 20 messages per target.
  static func floodWithSlowWebhooks(_ sim: inout Simulation, stations: Int = 7) {
    for station in 1...stations {
      for target in 1...5 {
        for _ in 0..<20 {
          sim.enqueue(
            forward(
              "EVIL\(station)-1", target: "t\(target)", url: "https://h\(target).evil\(station).example/hook"),
            answerMs: 20_000)
        }
      }
    }
  }

  // MARK: - (a) slow webhooks

  @Test func anUnrelatedForwardStartsAtOnceWhileSevenStationsFloodSlowWebhooks() {
    var sim = Simulation()
    // The unrelated station's target answered fast before the attack.
    let warmUp = sim.enqueue(
      Self.forward("N0CALL-7", target: "home", url: "https://hooks.good.example/in"), answerMs: 200)
    sim.run(untilMs: 1_000)
    #expect(sim.answeredAt[warmUp] != nil)

    Self.floodWithSlowWebhooks(&sim)
    sim.run(untilMs: 11_000)
    #expect(sim.slots.inFlight(.forward) == 21)
    let attackers = sim.onTheWire.map(\.ticket)
    #expect(attackers.allSatisfy { $0.timeoutMs == 3_000 && !$0.privileged })

    let enqueuedAt = sim.now
    let unrelated = sim.enqueue(
      Self.forward("N0CALL-7", target: "home", url: "https://hooks.good.example/in"), answerMs: 200)
    let newcomer = sim.enqueue(
      Self.forward("W1AW-9", target: "new", url: "https://ntfy.other.example/topic"), answerMs: 200)
    let started = sim.round()
    #expect(started.contains(unrelated) && started.contains(newcomer))
    #expect(sim.tickets[unrelated]?.timeoutMs == 30_000)
    #expect(sim.tickets[newcomer]?.timeoutMs == 3_000)
    let arrived = sim.runUntilAnswered(unrelated, limitMs: enqueuedAt + 3_000)
    #expect(arrived.map { $0 - enqueuedAt } == 200)
    #expect(sim.answeredAt[newcomer].map { $0 - enqueuedAt } == 200)
  }

  @Test func withFortyFloodingStationsAFastTargetUsesTheReserveAndANewOneTheFirstFreeSlot() {
    var sim = Simulation()
    let warmUp = sim.enqueue(
      Self.forward("N0CALL-7", target: "home", url: "https://hooks.good.example/in"), answerMs: 200)
    sim.run(untilMs: 1_000)
    #expect(sim.answeredAt[warmUp] != nil)
    Self.floodWithSlowWebhooks(&sim, stations: 40)
    sim.run(untilMs: 10_500)
    #expect(sim.slots.unprivilegedInFlight(.forward) == 24)

    let enqueuedAt = sim.now
    let unrelated = sim.enqueue(
      Self.forward("N0CALL-7", target: "home", url: "https://hooks.good.example/in"), answerMs: 200)
    let newcomer = sim.enqueue(
      Self.forward("W1AW-9", target: "new", url: "https://ntfy.other.example/topic"), answerMs: 200)
    let first = sim.round()
    #expect(first.contains(unrelated))
    #expect(!first.contains(newcomer))
    let firstStartAfter = sim.startOrder.count
    let arrived = sim.runUntilAnswered(unrelated, limitMs: enqueuedAt + 3_000)
    #expect(arrived.map { $0 - enqueuedAt } == 200)
    _ = sim.runUntilAnswered(newcomer, limitMs: enqueuedAt + 4_000)
    // Ahead of every older job of the flooding stations, within one short timeout.
    #expect(sim.startOrder.dropFirst(firstStartAfter).first == newcomer)
    let waited = sim.startedAt[newcomer].map { $0 - enqueuedAt }
    #expect(waited.map { $0 <= 3_000 } == true)
  }

  @Test func withoutTheNewBoundsTheSameFloodHoldsTheUnrelatedForwardBack() {
    // The bounds before: 32 forwards for everyone, one per target, the full 30 s for every endpoint.
    var limits = DeliverySlotLimits()
    limits.forward = .init(total: 32, reserved: 0, perStation: 32, perGroup: 32, perRecipient: 1)
    limits.shortTimeoutMs = 30_000
    var sim = Simulation(slots: DeliverySlots(limits: limits))
    Self.floodWithSlowWebhooks(&sim)
    sim.run(untilMs: 10_000)
    #expect(sim.slots.inFlight(.forward) == 32)
    let enqueuedAt = sim.now
    let unrelated = sim.enqueue(
      Self.forward("N0CALL-7", target: "home", url: "https://hooks.good.example/in"), answerMs: 200)
    let arrived = sim.runUntilAnswered(unrelated, limitMs: enqueuedAt + 60_000)
    #expect(arrived.map { $0 - enqueuedAt > 3_000 } == true)
  }

  // MARK: - (b) slow UnifiedPush endpoints on seven ports of one host

  static func floodWithSlowUnifiedPush(_ sim: inout Simulation, host: String) {
    for station in 1...11 {
      for device in 1...13 {
        let port = 8_001 + (station * 13 + device) % 7
        sim.enqueue(
          push(
            "SQUAT\(station)", device: "up-\(station)-\(device)",
            url: "https://\(host):\(port)/up/\(station)/\(device)"),
          answerMs: 20_000)
      }
    }
  }

  @Test(arguments: ["up.evil.example", "198.51.100.7", "[2001:db8:5::1]"])
  func anUnrelatedPushStartsAtOnceWhileElevenStationsPointAtOneSlowHost(host: String) {
    var sim = Simulation()
    for _ in 0..<3 { Self.floodWithSlowUnifiedPush(&sim, host: host) }
    sim.run(untilMs: 10_000)
    #expect(sim.slots.inFlight(.push) == 16)

    let enqueuedAt = sim.now
    let viaFCM = sim.enqueue(
      Self.push("N0CALL-7", device: "fcm-1", url: Self.fcm, trusted: true), answerMs: 150)
    let viaWebPush = sim.enqueue(
      Self.push("N0CALL-7", device: "wp-1", url: "https://updates.push.services.mozilla.com/wpush/v2/abc"),
      answerMs: 300)
    let started = sim.round()
    #expect(started.contains(viaFCM) && started.contains(viaWebPush))
    #expect(sim.runUntilAnswered(viaWebPush, limitMs: enqueuedAt + 3_000).map { $0 - enqueuedAt } == 300)
    #expect(sim.answeredAt[viaFCM].map { $0 - enqueuedAt } == 150)
  }

  @Test func whenSlowEndpointsOnManyDomainsFillTheUnreservedShareTrustedAndFastPushesStillStart() {
    var sim = Simulation()
    let warmUp = sim.enqueue(
      Self.push("N0CALL-7", device: "wp-1", url: "https://web.push.apple.com/QAbc"), answerMs: 250)
    sim.run(untilMs: 1_000)
    #expect(sim.answeredAt[warmUp] != nil)
    for (station, _) in (1...20).flatMap({ station in (0..<3).map { (station, $0) } }) {
      for device in 1...13 {
        sim.enqueue(
          Self.push(
            "SQUAT\(station)", device: "d\(station)-\(device)",
            url: "https://s\(device).evil\(station).example/"),
          answerMs: 20_000)
      }
    }
    sim.run(untilMs: 5_000)
    #expect(sim.slots.unprivilegedInFlight(.push) == 150)

    let enqueuedAt = sim.now
    let viaFCM = sim.enqueue(
      Self.push("N0CALL-7", device: "fcm-1", url: Self.fcm, trusted: true), answerMs: 150)
    let viaWebPush = sim.enqueue(
      Self.push("N0CALL-7", device: "wp-1", url: "https://web.push.apple.com/QAbc"), answerMs: 250)
    let started = sim.round()
    #expect(started.contains(viaFCM) && started.contains(viaWebPush))
    #expect(sim.runUntilAnswered(viaWebPush, limitMs: enqueuedAt + 3_000).map { $0 - enqueuedAt } == 250)
  }

  // MARK: - (c) each rule

  @Test func oneStationHoldsAtMostItsCap() {
    var slots = DeliverySlots()
    for target in 1...3 {
      let decision = slots.admit(
        Self.forward("KJ7ABC-7", target: "t\(target)", url: "https://a\(target).example/"), now: 0)
      guard case .start = decision else {
        Issue.record("target \(target) refused: \(decision)")
        return
      }
    }
    let fourth = slots.admit(Self.forward("KJ7ABC-7", target: "t4", url: "https://a4.example/"), now: 0)
    #expect(fourth == .wait(.stationAtCap))
    guard
      case .start = slots.admit(Self.forward("KJ7ABD-7", target: "t4", url: "https://a4.example/"), now: 0)
    else {
      Issue.record("another station is not held by this one's cap")
      return
    }
  }

  @Test func aForwardTargetHasOneRequestOnTheWireAndItsNextStartsAfterTheRelease() {
    var slots = DeliverySlots()
    let request = Self.forward("KJ7ABC-7", target: "t1", url: "https://a.example/")
    guard case .start(let ticket) = slots.admit(request, now: 0) else {
      Issue.record("the first forward did not start")
      return
    }
    #expect(slots.admit(request, now: 10) == .wait(.recipientAtCap))
    let released = slots.release(ticket, outcome: .answered, now: 200)
    let releasedAgain = slots.release(ticket, outcome: .answered, now: 300)
    #expect(released && !releasedAgain)
    guard case .start = slots.admit(request, now: 300) else {
      Issue.record("the next forward did not start after the release")
      return
    }
  }

  @Test func oneGroupHoldsAtMostItsCapAndTrustedRequestsAreNotCounted() {
    var slots = DeliverySlots()
    for index in 1...16 {
      guard
        case .start = slots.admit(
          Self.push(
            "S\(index)", device: "d\(index)", url: "https://push\(index).evil.example:\(8000 + index)/"),
          now: 0)
      else {
        Issue.record("push \(index) refused")
        return
      }
    }
    #expect(slots.groupInFlight(.domain("evil.example"), lane: .push) == 16)
    #expect(
      slots.admit(Self.push("S17", device: "d17", url: "https://evil.example/"), now: 0) == .wait(.groupAtCap)
    )
    for index in 1...20 {
      guard
        case .start = slots.admit(
          Self.push("T\(index)", device: "t\(index)", url: "https://evil.example/", trusted: true), now: 0)
      else {
        Issue.record("trusted push \(index) refused")
        return
      }
    }
    #expect(slots.groupInFlight(.domain("evil.example"), lane: .push) == 16)
  }

  @Test func theReservedShareIsOnlyForTrustedAndFastGroups() {
    var slots = DeliverySlots()
    // A group with a fast answer.
    guard
      case .start(let warm) = slots.admit(
        Self.push("N0CALL", device: "w", url: "https://fast.example/"), now: 0)
    else {
      Issue.record("warm-up refused")
      return
    }
    slots.release(warm, outcome: .answered, now: 300)
    for index in 1...150 {
      guard
        case .start = slots.admit(
          Self.push("S\(index)", device: "d", url: "https://x\(index).example/"), now: 400)
      else {
        Issue.record("unprivileged push \(index) refused")
        return
      }
    }
    let unknown = Self.push("U", device: "u", url: "https://unknown.example/")
    #expect(slots.admit(unknown, now: 400) == .wait(.onlyReservedFree))
    for index in 1...50 {
      // The fast group's 16, then trusted pushes up to the lane's 200.
      let request =
        index <= 16
        ? Self.push("F\(index)", device: "f", url: "https://fast.example/")
        : Self.push("T\(index)", device: "t", url: Self.fcm, trusted: true)
      guard case .start(let ticket) = slots.admit(request, now: 400) else {
        Issue.record("privileged push \(index) refused")
        return
      }
      #expect(ticket.privileged && ticket.timeoutMs == 30_000)
    }
    #expect(slots.inFlight(.push) == 200)
    #expect(
      slots.admit(Self.push("T26", device: "t", url: Self.fcm, trusted: true), now: 400) == .wait(.laneFull))
    // The forward lane is its own pool.
    guard case .start = slots.admit(Self.forward("U", target: "t", url: "https://unknown.example/"), now: 400)
    else {
      Issue.record("a forward was held by the push lane")
      return
    }
  }

  @Test func aGroupIsPromotedByAFastAnswerAndDemotedByASlowOneOrNone() {
    var slots = DeliverySlots()
    let request = Self.push("N0CALL", device: "d", url: "https://up.example.net:8443/up/1")
    func start(_ now: Int64) -> SlotTicket? {
      guard case .start(let ticket) = slots.admit(request, now: now) else { return nil }
      return ticket
    }
    guard let first = start(0) else { return #expect(Bool(false)) }
    #expect(first.timeoutMs == 3_000 && !first.privileged)
    slots.release(first, outcome: .answered, now: 1_500)  // 1.5 s on a short timeout: served, not fast
    guard let second = start(2_000) else { return #expect(Bool(false)) }
    #expect(second.timeoutMs == 3_000 && !second.privileged)
    slots.release(second, outcome: .answered, now: 2_400)  // fast: promoted
    guard let third = start(3_000) else { return #expect(Bool(false)) }
    #expect(third.timeoutMs == 30_000 && third.privileged)
    slots.release(third, outcome: .notSent, now: 6_000)  // nothing learned: still fast
    guard let fourth = start(6_000) else { return #expect(Bool(false)) }
    #expect(fourth.privileged)
    // Another port and path of the same domain shares the history.
    let otherPort = Self.push("N0CALL", device: "e", url: "https://other.example.net:9000/x")
    #expect(slots.isPrivileged(otherPort, now: 6_500))
    // A request on the wire past the fast threshold takes the privilege away before its timeout ends.
    #expect(!slots.isPrivileged(otherPort, now: 7_001))
    let timedOut = slots.release(fourth, outcome: .noAnswer, now: 36_000)
    #expect(timedOut)
    #expect(!slots.isPrivileged(otherPort, now: 36_001))
  }

  @Test func aGroupTrustedWithARequestItAnsweredSlowlyOrNotAtAllIsHeldBackForAnHour() {
    for outcome in [SlotOutcome.answered, .noAnswer] {
      var slots = DeliverySlots()
      let request = Self.forward("N0CALL", target: "t", url: "https://hook.example.org/x")
      guard case .start(let warmUp) = slots.admit(request, now: 0) else { return #expect(Bool(false)) }
      slots.release(warmUp, outcome: .answered, now: 200)
      guard case .start(let trusted) = slots.admit(request, now: 1_000) else { return #expect(Bool(false)) }
      #expect(trusted.privileged)
      slots.release(trusted, outcome: outcome, now: 25_000)  // 24 s, or no answer
      for at in [Int64(26_000), 3_624_000] {
        guard case .start(let next) = slots.admit(request, now: at) else { return #expect(Bool(false)) }
        #expect(!next.privileged && next.timeoutMs == 3_000)
        slots.release(next, outcome: .answered, now: at + 100)  // fast again, yet held back
      }
      guard case .start(let later) = slots.admit(request, now: 3_626_000) else { return #expect(Bool(false)) }
      slots.release(later, outcome: .answered, now: 3_626_100)
      #expect(slots.isPrivileged(request, now: 3_627_000))
    }
  }

  @Test func anEndpointThatAnswersFastToBeTrustedThenStallsHoldsTheReserveOnceAnHour() {
    var sim = Simulation()
    // Three stations, five targets each on one domain: each target answers fast the first time, then takes 20 s.
    var warmed = Set<String>()
    for round in 0..<40 {
      for station in 1...3 {
        for target in 1...5 {
          let key = "\(station)-\(target)"
          let answerMs: Int64 = warmed.insert(key).inserted ? 100 : 20_000
          sim.enqueue(
            Self.forward(
              "EVIL\(station)", target: "t\(target)", url: "https://t\(target).evil.example/\(round)"),
            answerMs: answerMs)
        }
      }
    }
    sim.run(untilMs: 600_000)
    let stalledWithTrust = sim.tickets.filter {
      $0.value.privileged && sim.startedJobs[$0.key]!.answerMs > 1_000
    }
    #expect((1...8).contains(stalledWithTrust.count))
    #expect(sim.startedJobs.count > 100)
    #expect(sim.tickets.values.filter { !$0.privileged }.allSatisfy { $0.timeoutMs == 3_000 })
  }

  @Test func unknownEndpointsGetTheShortTimeoutAndTrustedOnesTheirTransportsNormalOne() {
    var slots = DeliverySlots()
    guard
      case .start(let unknown) = slots.admit(Self.push("A", device: "a", url: "https://new.example/"), now: 0),
      case .start(let fcm) = slots.admit(Self.push("A", device: "b", url: Self.fcm, trusted: true), now: 0),
      case .start(let mail) = slots.admit(
        SlotRequest(
          lane: .forward, station: DeliveryStation("A"), recipient: SlotRecipient("forward:A/mail"),
          group: EndpointGroup(url: "smtps://mail.operator.example:465"), transport: .smtp, trusted: true),
        now: 0)
    else { return #expect(Bool(false)) }
    #expect(unknown.timeoutMs == 3_000)
    #expect(fcm.timeoutMs == 30_000)
    #expect(mail.timeoutMs == 60_000)
  }

  @Test func theHistoryForgetsAfterADayAndStaysWithinItsCapacity() {
    var history = EndpointHistory(capacity: 100)
    history.recordAnswer(.domain("a.example"), elapsedMs: 100, now: 0)
    #expect(history.isFast(.domain("a.example"), now: 86_400_000))
    #expect(!history.isFast(.domain("a.example"), now: 86_400_001))
    for index in 0..<1_000 {
      history.recordAnswer(.domain("d\(index).example"), elapsedMs: 100, now: Int64(index))
      #expect(history.count <= 100)
    }
    #expect(history.isFast(.domain("d999.example"), now: 1_000))
    #expect(!history.isFast(.domain("d0.example"), now: 1_000))
  }

  @Test func aJobHeldByItsCapDoesNotBlockTheJobsBehindItAndOneTargetKeepsItsOrder() {
    var sim = Simulation()
    let a1 = sim.enqueue(Self.forward("KJ7ABC-7", target: "a", url: "https://a.example/"), answerMs: 500)
    let a2 = sim.enqueue(Self.forward("KJ7ABC-7", target: "a", url: "https://a.example/"), answerMs: 500)
    let a3 = sim.enqueue(Self.forward("KJ7ABC-7", target: "a", url: "https://a.example/"), answerMs: 500)
    let b1 = sim.enqueue(Self.forward("KJ7ABC-7", target: "b", url: "https://b.example/"), answerMs: 500)
    let c1 = sim.enqueue(Self.forward("W1AW", target: "c", url: "https://c.example/"), answerMs: 500)
    #expect(Set(sim.round()) == [a1, b1, c1])
    sim.run(untilMs: 3_000)
    #expect(sim.queue.isEmpty)
    #expect(sim.startOrder.filter { [a1, a2, a3].contains($0) } == [a1, a2, a3])
    #expect(sim.startedAt[a2] == 500 && sim.startedAt[a3] == 1_000)
  }

  @Test func aStationWithLessOnTheWireGoesFirstAndEveryStationIsServed() {
    var limits = DeliverySlotLimits()
    limits.push = .init(total: 4, reserved: 0, perStation: 4, perGroup: 4, perRecipient: nil)
    var sim = Simulation(slots: DeliverySlots(limits: limits))
    var heavy: [Int] = []
    for index in 0..<40 {
      heavy.append(
        sim.enqueue(
          Self.push("HEAVY", device: "h\(index)", url: "https://h\(index % 8).example/"),
          answerMs: index == 0 ? 500 : 2_000))
    }
    sim.round()
    #expect(sim.slots.stationInFlight(DeliveryStation("HEAVY"), lane: .push) == 4)
    let light = sim.enqueue(Self.push("LIGHT", device: "l", url: "https://l.example/"), answerMs: 200)
    sim.now += 500
    // One slot frees; the light station holds none, so it goes before the heavy station's older jobs.
    #expect(sim.round() == [light])
    sim.run(untilMs: 60_000)
    #expect(sim.queue.isEmpty)
    #expect(heavy.allSatisfy { sim.answeredAt[$0] != nil })
    #expect(sim.startOrder.filter { heavy.contains($0) } == heavy)
  }

  @Test func removedJobsLeaveTheQueueInTheirOrder() {
    var queue = FairQueue<Int>()
    for index in 0..<10 {
      queue.append(index, as: Self.push("S\(index % 3)", device: "d\(index)", url: "https://x.example/"))
    }
    let removed = queue.removeAll { $0 % 2 == 0 }
    #expect(removed == [0, 2, 4, 6, 8])
    #expect(queue.count == 5)
    #expect(queue.jobs == [1, 3, 5, 7, 9])
  }

  // MARK: - Endpoint groups

  @Test(arguments: [
    ("https://203.0.113.7/wpush", "203.0.113.0/24"),
    ("https://203.0.113.200:8443/x", "203.0.113.0/24"),
    ("http://203.0.114.1", "203.0.114.0/24"),
    ("https://127.1/", "127.0.0.0/24"),
    ("https://0x7f000001:8080/", "127.0.0.0/24"),
    ("https://[2001:db8:1:2::5]/x", "2001:db8:1::/48"),
    ("https://[2001:DB8:1:ffff::9]:8443/", "2001:db8:1::/48"),
    ("https://[2001:db8:2::1]/", "2001:db8:2::/48"),
    ("https://[::ffff:198.51.100.9]/", "198.51.100.0/24"),
    ("https://[64:ff9b::198.51.100.9]/", "198.51.100.0/24"),
    ("https://up.Push.Example.COM:8001/up/1", "example.com"),
    ("https://example.com./", "example.com"),
    ("https://user:pw@hooks.example.org/x", "example.org"),
    ("https://push.example.co.uk/x?y=1", "example.co.uk"),
    ("https://a.b.example.com.au/", "example.com.au"),
    ("https://example.co.uk", "example.co.uk"),
    ("https://www.example.de/", "example.de"),
    ("https://a.co.example.com/", "example.com"),
    ("https://localhost:8080/", "localhost"),
    ("smtps://mail.operator.example:465", "operator.example"),
  ])
  func anEndpointIsGroupedByItsNetworkOrDomain(url: String, group: String) {
    #expect(EndpointGroup(url: url).description == group)
  }

  @Test(arguments: [
    "", "not a url", "https://", "https:///path", "://host/", "//host/", "https://[::1", "https://[::1]x/",
    "https://host:abc/", "https://host:123456/", "https://ex ample.com/", "https://a..b/",
    "https://.example/",
    "https://[fe80::1%25eth0]/", "https://[1.2.3.4]/", "https://1.2.3.999/", "https://h\u{e9}.example/",
    "https://exa%41mple.com/",
  ])
  func junkIsOneUnparsableGroup(url: String) {
    #expect(EndpointGroup(url: url) == .unparsable)
  }

  @Test func portsPathsAndSubdomainsOfOneHostAreOneGroup() {
    let groups = Set(
      (8_001...8_007).map { EndpointGroup(url: "https://up\($0).evil.example:\($0)/up/\($0)") })
    #expect(groups == [.domain("evil.example")])
  }
}
