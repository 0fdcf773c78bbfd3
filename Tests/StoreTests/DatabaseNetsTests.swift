import APRS
import TestSupport
import Testing

@testable import Store

/// `Database+Nets.swift`: a net subscription joins through the station's own send, a removal leaves, memberships are
/// renewed while the station is active, room posts keep the service's rule, and a room's pushes are a digest.
@Suite struct DatabaseNetsTests {
  static let t0: Int64 = 1_800_000_000_000
  static let limits = SendLimits(perMinute: 10, inFlight: 20, perAddressPerMinute: 20, globalPerMinute: 30)
  static let hotg = NetRoom(service: .ansrvr, group: "HOTG")

  private func net(_ service: NetService = .ansrvr, _ group: String = "HOTG", join: NetRule.Join = .silent)
    -> SubscriptionDraft
  {
    SubscriptionDraft(rule: .net(NetRule(service: service, group: group, join: join)))
  }

  /// Replaces the station's subscriptions and settles its nets, as `/v1/settings` does, in one transaction.
  private func change(
    _ database: Database, to drafts: [SubscriptionDraft], now: Int64, limits: SendLimits = Self.limits
  ) throws -> NetSettlement {
    try database.writeBatch { () throws(StoreError) -> NetSettlement in
      let before = try database.subscriptions(of: "N0CALL-7")
      let after = try database.replaceSubscriptions(of: "N0CALL-7", with: drafts, now: now) ?? []
      return try database.settleNets(
        "N0CALL-7", before: before, after: after, limits: limits, client: "192.0.2.1", now: now)
    }
  }

  private func sent(_ database: Database) throws -> [StoredMessage] {
    try database.sync(station: "N0CALL-7", since: 0, now: Self.t0, countsAsPull: false, wants: .rooms)
      .messages.filter { $0.direction == .sent }
  }

  @Test func aJoinIsTheStationsSendAndALeaveCancelsItAndSendsTheLeave() throws {
    let (database, directory) = try temporaryStore(registering: "N0CALL-7")
    defer { directory.remove() }
    #expect(try change(database, to: [net()], now: Self.t0) == .settled(joined: [Self.hotg], left: []))
    let join = try #require(try sent(database).first)
    #expect(join.peer == "ANSRVR" && join.text == "K HOTG" && join.state == .pending && join.msgno != nil)
    #expect(join.entry?.room == Self.hotg && join.entry?.kind == .net)
    let plain = try database.sync(station: "N0CALL-7", since: 0, now: Self.t0, countsAsPull: false)
    #expect(plain.messages.isEmpty, "the shipping app never sees a net's sends")
    #expect(try database.dueSends(now: Self.t0, canTransmit: true).map(\.text) == ["K HOTG"])
    let membership = try #require(try database.netMembership(of: "N0CALL-7", room: Self.hotg))
    #expect(membership.joinedAt == Self.t0)
    #expect(membership.renewAt == Self.t0 + 12 * 3_600_000 - Database.netRenewMarginMs)
    #expect(try database.netMemberCounts() == [.ansrvr: 1, .cqsrvr: 0])
    // Kept as it is: nothing sent.
    let kept = try database.subscriptions(of: "N0CALL-7").map { SubscriptionDraft(id: $0.id, rule: $0.rule) }
    #expect(try change(database, to: kept, now: Self.t0 + 1) == .settled(joined: [], left: []))
    #expect(try sent(database).count == 1)
    // Removed: the join still in flight is cancelled, and the leave goes.
    #expect(try change(database, to: [], now: Self.t0 + 2) == .settled(joined: [], left: [Self.hotg]))
    let sends = try sent(database)
    #expect(sends.map(\.text) == ["K HOTG", "U HOTG"])
    #expect(sends.map(\.state) == [.cancelled, .pending])
    #expect(try database.dueSends(now: Self.t0 + 2, canTransmit: true).map(\.text) == ["U HOTG"])
    #expect(try database.netMembership(of: "N0CALL-7", room: Self.hotg) == nil)
    #expect(try database.netMemberCounts() == [.ansrvr: 0, .cqsrvr: 0])
    let audit = try database.auditTrail(of: "N0CALL-7").filter { $0.action == .net }.map(\.detail)
    #expect(audit == ["ANSRVR/HOTG leave: U HOTG", "ANSRVR/HOTG join: K HOTG"])
  }

  @Test func aJoinTheLimitsRefuseChangesNothing() throws {
    let (database, directory) = try temporaryStore(registering: "N0CALL-7")
    defer { directory.remove() }
    let none = SendLimits(perMinute: 10, inFlight: 0, perAddressPerMinute: 20, globalPerMinute: 30)
    do {
      _ = try database.writeBatch { () throws(StoreError) -> Void in
        let after = try database.replaceSubscriptions(of: "N0CALL-7", with: [net()], now: Self.t0) ?? []
        let settled = try database.settleNets(
          "N0CALL-7", before: [], after: after, limits: none, client: "x", now: Self.t0)
        #expect(settled == .refused(room: Self.hotg, .tooManyInFlight))
        throw .invalidArgument("refused")
      }
    } catch {}
    #expect(try database.subscriptions(of: "N0CALL-7").isEmpty)
    #expect(try sent(database).isEmpty)
  }

  @Test func aPostJoinPostsAndCQSRVRKeepsItsThirtyMinutes() throws {
    let (database, directory) = try temporaryStore(registering: "N0CALL-7")
    defer { directory.remove() }
    let room = NetRoom(service: .cqsrvr, group: "MYTEST")
    _ = try change(database, to: [net(.cqsrvr, "MYTEST", join: .post)], now: Self.t0)
    #expect(try sent(database).map(\.text) == ["CQ MYTEST QRV"])
    #expect(try database.netMembership(of: "N0CALL-7", room: room)?.renewAt == nil, "CQSRVR never lapses")
    let post = NewSend(station: "N0CALL-7", addressee: "CQSRVR", text: "CQ MYTEST hello", clientId: "p1")
    #expect(
      try database.createRoomPost(post, room: room, limits: Self.limits, client: "x", now: Self.t0 + 60_000)
        == .tooSoon(retryAfterMs: 29 * 60_000), "the join posted a minute ago")
    guard
      case .sent(.created(let message, _)) = try database.createRoomPost(
        post, room: room, limits: Self.limits, client: "x", now: Self.t0 + 30 * 60_000)
    else {
      Issue.record("the post after 30 minutes is sent")
      return
    }
    #expect(message.entry?.room == room && message.peer == "CQSRVR")
    guard
      case .sent(.replayed) = try database.createRoomPost(
        post, room: room, limits: Self.limits, client: "x", now: Self.t0 + 31 * 60_000)
    else {
      Issue.record("the same clientId is its replay, not a refusal")
      return
    }
    #expect(
      try database.createRoomPost(post, room: Self.hotg, limits: Self.limits, client: "x", now: Self.t0)
        == .notMember)
    // A leave and a rejoin by post cannot skip the 30 minutes since the last post.
    _ = try change(database, to: [], now: Self.t0 + 40 * 60_000)
    #expect(
      try change(database, to: [net(.cqsrvr, "MYTEST", join: .post)], now: Self.t0 + 41 * 60_000)
        == .tooSoon(room: room, retryAfterMs: 19 * 60_000))
  }

  @Test func aMembershipIsRenewedOnlyWhileTheStationIsActiveAndClaimed() throws {
    let (database, directory) = try temporaryStore(registering: "N0CALL-7")
    defer { directory.remove() }
    _ = try change(database, to: [net()], now: Self.t0)
    let due = Self.t0 + 11 * 3_600_000
    #expect(
      try database.dueNetRenewals(now: due, activeSince: 0).isEmpty, "nobody holds a key: nothing renews")
    #expect(try database.nextNetRenewal() == nil)
    _ = try database.claimStation(
      "N0CALL-7", keyHash: String(repeating: "a", count: 64), client: "x", now: Self.t0)
    #expect(try database.nextNetRenewal() == due)
    #expect(try database.dueNetRenewals(now: due - 1, activeSince: 0).isEmpty)
    #expect(try database.dueNetRenewals(now: due, activeSince: due).isEmpty, "not active in the last day")
    let renewal = try #require(try database.dueNetRenewals(now: due, activeSince: 0).first)
    guard case .created = try database.renewNet(renewal, limits: Self.limits, now: due) else {
      Issue.record("the renewal is sent")
      return
    }
    #expect(try sent(database).map(\.text) == ["K HOTG", "K HOTG"])
    #expect(try database.nextNetRenewal() == due + 11 * 3_600_000)
    #expect(try database.auditTrail(of: "N0CALL-7").first?.detail == "ANSRVR/HOTG renew: K HOTG")
    // A renewal read before a leave committed sends nothing and brings nothing back.
    let later = try #require(try database.dueNetRenewals(now: due + 11 * 3_600_000, activeSince: 0).first)
    _ = try change(database, to: [], now: due + 11 * 3_600_000)
    #expect(try database.renewNet(later, limits: Self.limits, now: due + 11 * 3_600_000) == nil)
    #expect(try sent(database).map(\.text) == ["K HOTG", "K HOTG", "U HOTG"])
    #expect(try database.netMembership(of: "N0CALL-7", room: Self.hotg) == nil)
    #expect(try database.nextNetRenewal() == nil)
    // The room left lately is still read as a room (its service's answer to the leave).
    #expect(try database.recentlyLeftNets(since: due).map(\.station) == ["N0CALL-7"])
    #expect(try database.recentlyLeftNets(since: due + 12 * 3_600_000).isEmpty)
  }

  @Test func aRoomPushesOneDigestPerWindow() throws {
    let (database, directory) = try temporaryStore(registering: "N0CALL-7")
    defer { directory.remove() }
    _ = try change(database, to: [net()], now: Self.t0)
    let id = try #require(try database.subscriptions(of: "N0CALL-7").first?.id)
    func post(_ n: Int, at: Int64) throws {
      _ = try database.storeMessages(
        [
          IncomingMessage(
            station: "N0CALL-7", peer: "K\(n)ABC", text: "hi \(n)", msgno: "\(n)", dedupKey: "k\(n)",
            dedupWindowMs: 3_600_000, entry: .room(Self.hotg, subscription: id))
        ], now: at)
    }
    try post(1, at: Self.t0)
    try post(2, at: Self.t0 + 100_000)
    try post(3, at: Self.t0 + 600_000)
    try post(4, at: Self.t0 + 600_001)
    #expect(try database.dueOutbox(now: Self.t0 + 599_999).isEmpty, "the first entry opens the window")
    #expect(
      try database.dueOutbox(now: Self.t0 + 600_000).allSatisfy { $0.createdAt == Self.t0 + 600_000 },
      "a held push counts as queued when its window ends ([messaging] maxAge runs from then)")
    #expect(try database.dueOutbox(now: Self.t0 + 600_000).map(\.message.text) == ["hi 1", "hi 2", "hi 3"])
    #expect(try database.dueOutbox(now: Self.t0 + 1_200_000).count == 3, "the fourth opened the next window")
    #expect(try database.dueOutbox(now: Self.t0 + 1_200_001).count == 4)
    let rooms = try database.sync(
      station: "N0CALL-7", since: 0, now: Self.t0, countsAsPull: false, wants: .rooms)
    #expect(
      rooms.messages.filter { $0.direction == .received }.map(\.peer) == ["K1ABC", "K2ABC", "K3ABC", "K4ABC"])
    let subscriptions = try database.sync(
      station: "N0CALL-7", since: 0, now: Self.t0, countsAsPull: false, wants: .subscriptions)
    #expect(subscriptions.messages.isEmpty, "room entries are for want rooms only")
  }

  @Test func roomEntriesHaveARingOfTheirOwnFourTimesTheSize() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database, options: StoreOptions(ringSize: 3))
    defer { database.close() }
    try register(database, "N0CALL-7")
    _ = try change(database, to: [net(), SubscriptionDraft(rule: .group(call: "SLCARES"))], now: Self.t0)
    let id = try #require(try database.subscriptions(of: "N0CALL-7").first?.id)
    _ = try database.storeMessages(
      [
        IncomingMessage(
          station: "N0CALL-7", peer: "K1ABC", text: "group", msgno: nil, dedupKey: "g", dedupWindowMs: 60_000,
          to: "SLCARES", entry: SubscriptionEntry(kind: .group, subscription: "s2"))
      ], now: Self.t0)
    for n in 1...20 {
      _ = try database.storeMessages(
        [
          IncomingMessage(
            station: "N0CALL-7", peer: "K\(n)ABC", text: "post \(n)", msgno: "\(n)", dedupKey: "k\(n)",
            dedupWindowMs: 3_600_000, entry: .room(Self.hotg, subscription: id))
        ], now: Self.t0 + Int64(n))
    }
    let rooms = try database.sync(
      station: "N0CALL-7", since: 0, now: Self.t0, countsAsPull: false, wants: .rooms
    ).messages.filter { $0.direction == .received }
    #expect(rooms.count == 3 * Database.roomRingFactor && rooms.last?.text == "post 20")
    let subscriptions = try database.sync(
      station: "N0CALL-7", since: 0, now: Self.t0, countsAsPull: false, wants: .subscriptions)
    #expect(subscriptions.messages.map(\.text) == ["group"], "a net's traffic never pushes out other entries")
  }
}
