import Foundation
import JSON
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Sending messages end to end (docs/protocol.md "Sending messages"): a phone's `/v1/send` through nginx and the
/// responder, the real `aprs-listener` transmitting it on the APRS-IS fake (which passes a verified client's
/// packets for other source calls with `qAS`, as aprsc does) and stopping on the answers the fake carries back.
/// The 31 s spacing of the schedule is tested with an injected clock (`SendSchedulerTests`,
/// `OutboundSenderTests`); here only what needs no waiting: the first copy, the answers, expiry with a
/// one-copy schedule, and a restart.
@Suite(.serialized) struct SendEndToEndTests {
  static let station = "OH7LZB-9"
  static let line = "OH7LZB-9>APRS,TCPIP*::KJ7ABC-7 :Hello from the phone{1"

  @Test func theFirstCopyGoesAtOnceByteExactAReplaySendsNothingAndAnAckStopsIt() throws {
    let rig = try SendRig()
    defer { rig.stop() }
    let sent = try rig.send(["to": "kj7abc-7", "text": "Hello from the phone", "clientId": "phone-1"])
    #expect(sent.status == 200, "\(sent.text)")
    let message = try #require(sent.jsonObject?.object("message"), "\(sent.text)")
    #expect(message.string("state") == "pending" && message.string("seqId") == "1")
    #expect(message.string("peer") == "KJ7ABC-7" && message.string("clientId") == "phone-1")

    #expect(try rig.aprsis.wait("transmitted", count: 1, timeout: 5), "no copy:\n\(rig.listener.log)")
    let record = try #require(try rig.aprsis.transmitted().first)
    #expect(record.string("line") == Self.line)
    #expect(record.string("line_hex") == Data(Self.line.utf8).map { String(format: "%02x", $0) }.joined())
    #expect(record.string("dropped") == nil)
    #expect(
      record.string("forwarded") == "OH7LZB-9>APRS,TCPIP*,qAS,TESTING::KJ7ABC-7 :Hello from the phone{1")

    // The same clientId again: the first message, nothing new on the air.
    let replay = try rig.send(["to": "kj7abc-7", "text": "Hello from the phone", "clientId": "phone-1"])
    #expect(replay.status == 200 && replay.jsonObject?.object("message") == message, "\(replay.text)")
    #expect(try rig.aprsis.wait("transmitted", count: 2, timeout: 1.5) == false, "a replay was sent")

    // The phone's cursor, then the addressee's ack: the schedule stops, the message comes out again as acked.
    let cursor = try #require(try rig.sync(since: 0).int("serverTime"))
    try rig.aprsis.inject(["KJ7ABC-7>APDR16,TCPIP*,qAC,T2TEST::OH7LZB-9 :ack1"])
    #expect(
      try rig.database.waitUntil { try $0.run("SELECT state, next_at IS NULL FROM sends") == "acked|1\n" },
      "\(rig.listener.log)")
    let after = try rig.sync(since: cursor)
    let entries = after.objects("messages")
    #expect(entries.count == 1 && entries.first?.string("state") == "acked", "\(after)")
    #expect((entries.first?.int("timestamp") ?? 0) > cursor)
    #expect(try rig.aprsis.transmitted().count == 1)

    // Invalid fields through nginx: a 400 naming each, nothing stored.
    for (fields, name) in [
      (["to": "not a call", "text": "x"], "to"), (["to": "KJ7ABC-7", "text": "a{b"], "text"),
      (["to": "KJ7ABC-7", "text": "x", "clientId": String(repeating: "c", count: 65)], "clientId"),
    ] {
      let bad = try rig.send(fields)
      #expect(bad.status == 400 && bad.errorMessage?.hasPrefix(name) == true, "\(bad.text)")
    }
    #expect(try rig.database.int("SELECT count(*) FROM sends") == 1)
  }

  @Test func aRejAndAReplyAckStopTheirMessagesAndARejectionQueuesAPush() throws {
    let rig = try SendRig()
    defer { rig.stop() }
    #expect(try rig.send(["to": "KJ7ABC-7", "text": "First"]).status == 200)
    #expect(try rig.send(["to": "KJ7ABC-7", "text": "Second"]).status == 200)
    #expect(try rig.aprsis.wait("transmitted", count: 2, timeout: 5), "\(rig.listener.log)")
    try rig.aprsis.inject([
      "KJ7ABC-7>APDR16,TCPIP*,qAC,T2TEST::OH7LZB-9 :rej1",
      "KJ7ABC-7>APDR16,TCPIP*,qAC,T2TEST::OH7LZB-9 :Got your second{AB}2",
    ])
    #expect(
      try rig.database.waitUntil {
        try $0.run("SELECT msgno, state FROM sends ORDER BY msgno") == "1|rejected\n2|acked\n"
      }, "\(rig.listener.log)")
    let sentPushes = try rig.database.int(
      "SELECT count(*) FROM outbox JOIN messages ON messages.id = outbox.message_id WHERE direction = 'sent'")
    #expect(sentPushes == 1, "one sendFailed push, for the rejection")
    let states = try rig.sync(since: 0).objects("messages").map {
      "\($0.string("text") ?? ""):\($0.string("state") ?? "-")"
    }
    #expect(states.sorted() == ["First:rejected", "Got your second:-", "Second:acked"])
  }

  @Test func aMessageNobodyAnswersExpiresAfterTheLastCopy() throws {
    let rig = try SendRig(schedule: "0", ackWait: "1s")
    defer { rig.stop() }
    let sent = try rig.send(["to": "KJ7ABC-7", "text": "Anyone?"])
    #expect(sent.status == 200, "\(sent.text)")
    #expect(try rig.aprsis.wait("transmitted", count: 1, timeout: 5))
    #expect(
      try rig.database.waitUntil(timeout: 10) { try $0.run("SELECT state FROM sends") == "expired\n" },
      "\(rig.listener.log)")
    #expect(try rig.sync(since: 0).objects("messages").first?.string("state") == "expired")
    #expect(try rig.database.int("SELECT count(*) FROM outbox") == 1, "the sendFailed push")
    #expect(try rig.aprsis.transmitted().count == 1)
    let metrics = try rig.stack.metrics().text
    for line in [
      #"aprs_cloud_sends_total{outcome="accepted"} 1"#, #"aprs_cloud_sends_total{outcome="expired"} 1"#,
      "aprs_cloud_send_transmissions_total 1", "aprs_cloud_sends_in_flight 0",
    ] {
      #expect(metrics.contains(line + "\n"), "\(line)")
    }
    let shown = try runCLI(["messages", "OH7LZB-9", "--db", rig.stack.databasePath])
    #expect(shown.stdoutText.contains("to KJ7ABC-7  {1}  [expired]  Anyone?"), "\(shown.stdoutText)")
  }

  /// `kill -9` after the first copy: the next listener sends nothing until the second copy is due. Killed again
  /// and the message moved five minutes into the past (as if the listener had been down that long): the copies
  /// due at 31, 62, 124 and 248 s become one, and the next is due at 496 s.
  @Test func aKilledListenerResumesTheScheduleWithoutABurst() throws {
    let rig = try SendRig(schedule: "0, 31, 62, 124, 248, 496, 992, 1984", ackWait: "60s")
    defer { rig.stop() }
    #expect(try rig.send(["to": "KJ7ABC-7", "text": "Hello from the phone"]).status == 200)
    #expect(try rig.aprsis.wait("transmitted", count: 1, timeout: 5))
    #expect(try rig.database.run("SELECT transmissions FROM sends") == "1\n")

    rig.listener.killHard()
    try rig.startListener(logins: 2)
    #expect(
      try rig.aprsis.wait("transmitted", count: 2, timeout: 2) == false, "a copy right after the restart")

    rig.listener.killHard()
    try rig.database.run(
      """
      UPDATE sends SET created_at = created_at - 300000, last_sent_at = last_sent_at - 300000,
        next_at = next_at - 300000, expires_at = expires_at - 300000;
      """)
    try rig.startListener(logins: 3)
    #expect(try rig.aprsis.wait("transmitted", count: 2, timeout: 5), "\(rig.listener.log)")
    #expect(try rig.aprsis.wait("transmitted", count: 3, timeout: 2) == false, "a burst after the restart")
    #expect(try rig.aprsis.transmitted().map { $0.string("line") } == [Self.line, Self.line])
    #expect(
      try rig.database.run("SELECT transmissions, next_at - created_at FROM sends") == "2|496000\n",
      "\(rig.listener.log)")
  }

  @Test func aReceiveOnlyOrUnverifiedLoginAnswers503() throws {
    for (login, passcode) in [(nil, nil), ("TESTING", 12345)] as [(String?, Int?)] {
      let rig = try SendRig(login: login, passcode: passcode)
      defer { rig.stop() }
      let reply = try rig.send(["to": "KJ7ABC-7", "text": "Hello"])
      #expect(reply.status == 503, "\(reply.text)")
      #expect(reply.errorMessage?.contains("receive-only or unverified") == true, "\(reply.text)")
      #expect(try rig.database.int("SELECT count(*) FROM sends") == 0)
    }
  }
}

/// nginx + responder with OH7LZB-9 registered (sync-only), the APRS-IS fake, and a listener logged in with
/// `[send]` set; `stop()` ends them all.
final class SendRig {
  let stack: TestStack
  let aprsis: FakeAPRSIS
  let database: SQLiteFile
  private(set) var listener: ListenerProcess
  private let config: String
  private let verified: Bool
  /// The key of OH7LZB-9's claim: `/v1/send` needs it.
  private(set) var stationKey = ""

  init(
    login: String? = "TESTING", passcode: Int? = 31421, schedule: String = "0, 31", ackWait: String = "60s"
  ) throws {
    let stack = try TestStack(.real())
    let aprsis: FakeAPRSIS
    do {
      aprsis = try FakeAPRSIS()
    } catch {
      stack.stop()
      throw error
    }
    self.stack = stack
    self.aprsis = aprsis
    database = SQLiteFile(path: stack.databasePath)
    verified = login != nil && passcode == 31421
    config =
      ListenerProcess.config(fake: aprsis, login: login, passcode: passcode)
      + "\n[send]\nschedule = \(schedule)\nackWait = \(ackWait)\npoll = 50ms\n"
    let registered = try stack.post(
      "/v1/register",
      json: #"{"callsign":"OH7LZB","ssid":9,"wantHistory":false,"since":0,"auth":"20900"}"#)
    let claim = try stack.post("/v1/claim", json: #"{"callsign":"OH7LZB","ssid":9,"auth":"20900"}"#)
    stationKey = claim.jsonObject?.string("stationKey") ?? ""
    do {
      listener = try ListenerProcess(database: stack.databasePath, config: config)
    } catch {
      aprsis.stop()
      stack.stop()
      throw error
    }
    do {
      #expect(registered.status == 200, "\(registered.text)")
      try waitForListener(logins: 1)
    } catch {
      stop()
      throw error
    }
  }

  /// Starts a new listener on the same database and waits for its login (the fake's `logins`-th).
  func startListener(logins: Int) throws {
    listener = try ListenerProcess(database: stack.databasePath, config: config)
    try waitForListener(logins: logins)
  }

  /// Waits for the login and for the listener's status to show it (what `/v1/send` reads).
  private func waitForListener(logins: Int) throws {
    try #require(try aprsis.wait("login", count: logins), "no login:\n\(listener.log)")
    let expected = verified ? "0" : "1"
    try #require(
      try database.waitUntil { try $0.meta("connected") == "1" && $0.meta("receiveOnly") == expected },
      "the listener did not publish its login:\n\(listener.log)")
  }

  func send(_ fields: [String: String]) throws -> HTTPResponse {
    var body: [String: Any] = ["callsign": "OH7LZB", "ssid": 9, "auth": "20900"]
    for (key, value) in fields { body[key] = value }
    let data = try JSONSerialization.data(withJSONObject: body)
    return try stack.post(
      "/v1/send", json: String(decoding: data, as: UTF8.self),
      headers: ["Authorization: Bearer \(stationKey)"])
  }

  func sync(since: Int) throws -> JSONObject {
    let response = try stack.post(
      "/v1/sync", json: #"{"callsign":"OH7LZB","ssid":9,"auth":"20900","since":\#(since)}"#)
    return try #require(response.jsonObject, "sync answered \(response.status) \(response.text)")
  }

  func stop() {
    listener.stop()
    aprsis.stop()
    stack.stop()
  }
}

extension JSONObject {
  fileprivate func object(_ key: String) -> JSONObject? {
    if case .object(let object)? = self[key] { return object }
    return nil
  }
}
