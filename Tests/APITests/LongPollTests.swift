import API
import Foundation
import JSON
import Store
import Testing

/// `/v1/sync` with `wait` (docs/protocol.md, "Long poll"), in the pure handler: it answers at once when
/// there is something, says to hold the request when there is not, and a held sync read again
/// answers its messages, holds on, or answers `messages:[]` once the wait is over.
@Suite struct LongPollTests {
  static func sync(_ fixture: APIFixture, since: Int64, wait: Any?, ssid: Int = 7) -> APIAnswer {
    var fields: [String: Any] = ["callsign": "N0CALL", "ssid": ssid, "since": since, "auth": "13023"]
    if let wait { fields["wait"] = wait }
    let data = try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
    return fixture.handler.answer(
      APIRequest(method: "POST", path: "/v1/sync", contentType: "application/json", body: Array(data)))
  }

  static func response(_ answer: APIAnswer) -> Reply? {
    if case .response(let response) = answer { return Reply(response) }
    return nil
  }

  static func park(_ answer: APIAnswer) -> SyncPark? {
    if case .park(let park) = answer { return park }
    return nil
  }

  @Test func waitOutsideZeroTo300OrNotAnIntegerIs400() throws {
    let fixture = try APIFixture()
    _ = fixture.post("/v1/register", registerBody())
    for (wait, message) in [
      (301 as Any, "wait must be between 0 and 300"), (-1, "wait must be between 0 and 300"),
      (1.5, "wait must be an integer between 0 and 300"), ("30", "wait must be an integer, not a string"),
    ] {
      let reply = try #require(Self.response(Self.sync(fixture, since: 0, wait: wait)))
      #expect(reply.status == 400 && reply.error == message, "\(wait): \(reply.text)")
    }
    #expect(Self.response(Self.sync(fixture, since: 0, wait: 300)) == nil)
    #expect(Self.response(Self.sync(fixture, since: 0, wait: NSNull()))?.status == 200)
  }

  @Test func somethingThereIsAnsweredAtOnceAsWithoutWait() throws {
    let fixture = try APIFixture()
    _ = fixture.post("/v1/register", registerBody())
    try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC-7", text: "hello")
    let reply = try #require(Self.response(Self.sync(fixture, since: 0, wait: 30)))
    #expect(reply.status == 200 && reply.messages.map { $0["text"]?.stringValue } == ["hello"])
    let plain = fixture.post("/v1/sync", ["callsign": "N0CALL", "ssid": 7, "since": 0, "auth": "13023"])
    #expect(reply.text == plain.text)
    // wait 0 is a plain sync.
    #expect(Self.response(Self.sync(fixture, since: reply.serverTime!, wait: 0))?.messages.isEmpty == true)
  }

  @Test func nothingThereHoldsTheRequestUntilTheStationHasNews() throws {
    let fixture = try APIFixture()
    _ = fixture.post("/v1/register", registerBody())
    _ = fixture.post("/v1/register", registerBody(["ssid": 8]))
    try fixture.deliver(to: "N0CALL-8", from: "W5AGO", text: "for someone else")
    let now = fixture.clock.now
    let park = try #require(Self.park(Self.sync(fixture, since: 0, wait: 25)))
    #expect(park == SyncPark(station: "N0CALL-7", since: 0, seen: now, deadline: now + 25_000))

    // Read again before anything came: hold on, with what this read saw.
    try fixture.deliver(to: "N0CALL-8", from: "W5AGO", text: "still not ours")
    let again = try #require(Self.park(fixture.handler.resumeSync(park, final: false)))
    #expect(again.seen == fixture.clock.now && again.since == 0 && again.deadline == park.deadline)

    // A message for the station: answered with it and the cursor.
    try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC-7", text: "news", msgno: "12")
    let woken = try #require(Self.response(fixture.handler.resumeSync(again, final: false)))
    #expect(woken.status == 200 && woken.messages.map { $0["text"]?.stringValue } == ["news"])
    #expect(woken.messages.first?["seqId"]?.stringValue == "12")
    #expect(woken.serverTime == fixture.clock.now)
  }

  @Test func theWaitRunsOutWithNoMessagesAndTheUsualServerTime() throws {
    let fixture = try APIFixture()
    _ = fixture.post("/v1/register", registerBody())
    try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC-7", text: "old")
    let cursor = fixture.clock.now
    let park = try #require(Self.park(Self.sync(fixture, since: cursor, wait: 2)))
    fixture.clock.advance(ms: 2_000)
    let timedOut = try #require(Self.response(fixture.handler.resumeSync(park, final: false)))
    #expect(timedOut.status == 200 && timedOut.messages.isEmpty && timedOut.serverTime == cursor)
    #expect(timedOut.text == #"{"messages":[],"serverTime":\#(cursor),"avatars":{}}"#)
    // A stop (final) answers before the deadline too; a cursor ahead of the database is kept.
    let ahead = try #require(Self.park(Self.sync(fixture, since: cursor + 50_000, wait: 60)))
    let stopped = try #require(Self.response(fixture.handler.resumeSync(ahead, final: true)))
    #expect(stopped.messages.isEmpty && stopped.serverTime == cursor + 50_000)
  }

  /// Only what the answer would show counts: with sent messages left out, a sent one does not end
  /// the wait.
  @Test func aMessageTheAnswerWouldNotShowKeepsItHeld() throws {
    var config = APIConfig()
    config.includeSent = false
    let fixture = try APIFixture(config: config)
    _ = fixture.post("/v1/register", registerBody())
    let park = try #require(Self.park(Self.sync(fixture, since: 0, wait: 30)))
    fixture.clock.advance(ms: 1)
    _ = try fixture.database.storeMessages(
      [
        IncomingMessage(
          station: "N0CALL-7", direction: .sent, peer: "W5AGO", text: "mine", msgno: nil, dedupKey: "sent-1",
          dedupWindowMs: 1000)
      ], now: fixture.clock.now)
    #expect(Self.park(fixture.handler.resumeSync(park, final: false)) != nil)
  }

  /// `handle` (a shell that cannot hold requests) answers a wait at once, as if it had run out.
  @Test func handleAnswersAWaitAtOnce() throws {
    let fixture = try APIFixture()
    _ = fixture.post("/v1/register", registerBody())
    let reply = fixture.post(
      "/v1/sync", ["callsign": "N0CALL", "ssid": 7, "since": 0, "auth": "13023", "wait": 300])
    #expect(reply.status == 200 && reply.messages.isEmpty && reply.serverTime == 0)
    // An unregistered station waits like any other (it may register meanwhile).
    #expect(Self.park(Self.sync(fixture, since: 0, wait: 5, ssid: 9))?.station == "N0CALL-9")
    // Failures are answered, never held.
    let wrong = fixture.post(
      "/v1/sync", ["callsign": "N0CALL", "ssid": 7, "since": 0, "auth": "1", "wait": 30])
    #expect(wrong.status == 401)
  }
}

/// `SyncWatch`: what wakes held syncs, read through a connection of its own.
@Suite struct SyncWatchTests {
  @Test func reportsTheStationsWithNewMessagesOnceAndAgainOnARecheck() throws {
    let fixture = try APIFixture()
    _ = fixture.post("/v1/register", registerBody())
    _ = fixture.post("/v1/register", registerBody(["ssid": 8]))
    try fixture.deliver(to: "N0CALL-7", from: "W5AGO", text: "before the watch")
    let before = fixture.clock.now
    let watch = try SyncWatch(database: try Database(path: fixture.path))
    defer { watch.close() }
    #expect(watch.changes(recheckFrom: nil).isEmpty, "what was there before is not news")

    try fixture.deliver(to: "N0CALL-8", from: "W5AGO", text: "one")
    try fixture.deliver(to: "N0CALL-8", from: "W5AGO", text: "two")
    #expect(watch.changes(recheckFrom: nil) == ["N0CALL-8": fixture.clock.now])
    #expect(watch.changes(recheckFrom: nil).isEmpty, "reported once")

    // A sync that read before the watch's last look parks now: the messages after its read are
    // looked at again (here the one of N0CALL-7, before the watch started).
    let recheck = watch.changes(recheckFrom: before - 1)
    #expect(recheck["N0CALL-7"] == before && recheck["N0CALL-8"] == fixture.clock.now)
    // A commit that is not a message changes nothing to report.
    _ = fixture.post("/v1/register", registerBody(["ssid": 9]))
    #expect(watch.changes(recheckFrom: nil).isEmpty)
  }
}
