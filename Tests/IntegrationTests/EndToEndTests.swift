import Foundation
import JSON
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The whole path, end to end (issue 5): a phone registers through nginx and the responder, a message line from
/// the APRS-IS fake reaches the real `aprs-listener` (which stores it, ACKs it on air and runs the push sender
/// in-process), the push fake receives exactly one provider request, and `/v1/sync` returns the message.
@Suite(.serialized) struct EndToEndTests {
  /// A verified service login for the listener (31421 is the APRS-IS passcode of TESTING).
  static let login = "TESTING"
  static let passcode = 31421
  static let fcmToken = "e2e-fcm:APA91bE2E_token-0123456789"
  static let apnsToken = String(repeating: "cd", count: 32)

  /// Android, one message, no coalescing: one FCM request with the data keys, one ACK on air, and the message
  /// served by `/v1/sync` with `serverTime` equal to its timestamp.
  @Test func androidMessageIsStoredAckedPushedOnceAndSynced() throws {
    let rig = try EndToEndRig(
      ssid: 7, platform: "android", token: Self.fcmToken, coalesceWindow: "0")
    defer { rig.stop() }
    let (stack, push, aprsis, database, listener) = (
      rig.stack, rig.push, rig.aprsis, rig.database, rig.listener
    )

    #expect(try aprsis.inject(["KJ7ABC-7>APRS,TCPIP*::N0CALL-7 :Hello from the radio{42"]) == 1)

    // The push: exactly one FCM request, answered 200, then nothing left in the outbox.
    #expect(
      try push.endToEndWait("fcm", count: 1), "no FCM request:\n\(listener.log)")
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM outbox") == 0 }, "\(listener.log)")
    #expect(try push.endToEndWait("fcm", count: 2, timeoutMs: 1000) == false)
    let requests = try push.endToEndRequests("fcm")
    #expect(requests.count == 1)
    let request = try #require(requests.first)
    #expect(request.int("status") == 200)
    let message = try #require(endToEndObject(request, "body", "message"), "\(request)")
    #expect(message.string("token") == Self.fcmToken)
    let data = try #require(endToEndObject(message, "data"), "\(message)")
    #expect(data.string("fromCall") == "KJ7ABC-7")
    #expect(data.string("to") == "N0CALL-7")
    #expect(data.string("seqId") == "42")
    #expect(data.string("count") == "1")
    #expect(
      data.members.allSatisfy { if case .string = $0.value { true } else { false } },
      "data values that are not strings: \(data)")
    let android = try #require(endToEndObject(message, "android"), "\(message)")
    #expect(android.string("collapse_key")?.isEmpty == false, "\(android)")

    // The ACK on air, from the station's own call, accepted by APRS-IS.
    #expect(try aprsis.wait("transmitted", count: 1), "no ACK:\n\(listener.log)")
    let transmitted = try aprsis.transmitted()
    #expect(transmitted.map { $0.string("line") } == ["N0CALL-7>APZACL,TCPIP*::KJ7ABC-7 :ack42"])
    #expect(transmitted.allSatisfy { $0.bool("duplicate") == false && $0.string("dropped") == nil })

    // The phone's sync.
    let sync = try endToEndSync(stack, ssid: 7)
    let messages = sync.objects("messages")
    #expect(messages.count == 1, "\(sync)")
    let stored = try #require(messages.first)
    #expect(stored.string("peer") == "KJ7ABC-7")
    #expect(stored.string("text") == "Hello from the radio")
    #expect(stored["seqId"] == .string("42"))
    let timestamp = try #require(endToEndInteger(stored["timestamp"]), "timestamp: \(stored)")
    #expect(endToEndInteger(sync["serverTime"]) == timestamp)

    #expect(listener.terminate() == 0)

    // What the listener and its push sender counted (published at the latest when it stopped) reaches
    // /metrics, which nginx serves on its private loopback listener only.
    let metrics = try stack.metrics().text
    #expect(
      metrics.contains(#"aprs_cloud_pushes_total{provider="android",outcome="accepted"} 1"#), "\(metrics)")
    #expect(metrics.contains("aprs_cloud_push_messages_total 1"), "\(metrics)")
    #expect(metrics.contains("aprs_cloud_listener_acks_sent_total 1"), "\(metrics)")
  }

  /// iOS, three messages within the 2 s coalescing window: one APNs request naming the newest sender with
  /// `count` "3", and all three messages synced in order.
  @Test func iosBurstIsCoalescedIntoOneAPNsRequest() throws {
    let rig = try EndToEndRig(
      ssid: 8, platform: "ios", token: Self.apnsToken, coalesceWindow: "2s")
    defer { rig.stop() }
    let (stack, push, aprsis, database, listener) = (
      rig.stack, rig.push, rig.aprsis, rig.database, rig.listener
    )

    let burst = [
      ("KJ7ABC-7", "first", "1"), ("W1AW", "second", "2"), ("OH7AA-1", "third", "3"),
    ]
    #expect(
      try aprsis.inject(burst.map { messageLine(from: $0.0, to: "N0CALL-8", text: $0.1, msgno: $0.2) }) == 3)

    #expect(try push.endToEndWait("apns", count: 1), "no APNs request:\n\(listener.log)")
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM outbox") == 0 }, "\(listener.log)")
    #expect(try push.endToEndWait("apns", count: 2, timeoutMs: 1000) == false)
    let requests = try push.endToEndRequests("apns")
    #expect(requests.count == 1)
    let request = try #require(requests.first)
    #expect(request.int("status") == 200)
    #expect(request.string("deviceToken")?.lowercased() == Self.apnsToken)
    let headers = try #require(endToEndObject(request, "headers"), "\(request)")
    #expect(headers.string("apns-collapse-id")?.isEmpty == false, "\(headers)")
    let payload = try #require(endToEndObject(request, "body"), "\(request)")
    #expect(payload.string("count") == "3", "\(payload)")
    #expect(payload.string("fromCall") == "OH7AA-1", "\(payload)")
    #expect(payload.string("to") == "N0CALL-8", "\(payload)")
    // FlutterFire hands an iOS notification to the app's tap and launch handlers only with this key.
    #expect(payload.string("gcm.message_id")?.isEmpty == false, "\(payload)")
    #expect(try push.count("fcm") == 0)

    let sync = try endToEndSync(stack, ssid: 8)
    let messages = sync.objects("messages")
    #expect(messages.map { $0.string("peer") } == burst.map { Optional($0.0) }, "\(sync)")
    #expect(messages.map { $0.string("text") } == burst.map { Optional($0.1) })
    #expect(messages.map { $0["seqId"] } == burst.map { Optional(JSONValue.string($0.2)) })
    let timestamps = messages.compactMap { endToEndInteger($0["timestamp"]) }
    #expect(timestamps.count == 3 && timestamps == timestamps.sorted() && Set(timestamps).count == 3)
    #expect(endToEndInteger(sync["serverTime"]) == timestamps.last)
    #expect(listener.terminate() == 0)
  }

  /// The app sends its APNs token in upper case; a curl user or an older build may send it in lower case:
  /// registered both ways through nginx and the responder, it is one device and gets one push.
  @Test func upperAndLowerCaseRegistrationsOfOneTokenAreOneDeviceAndOnePush() throws {
    let rig = try EndToEndRig(
      ssid: 8, platform: "ios", token: Self.apnsToken.uppercased(), coalesceWindow: "0",
      moreTokens: [Self.apnsToken])
    defer { rig.stop() }
    let (push, aprsis, database, listener) = (rig.push, rig.aprsis, rig.database, rig.listener)
    #expect(try database.int("SELECT count(*) FROM devices") == 1)
    #expect(try aprsis.inject([messageLine(from: "KJ7ABC-7", to: "N0CALL-8", text: "once", msgno: "1")]) == 1)
    #expect(try push.endToEndWait("apns", count: 1), "no APNs request:\n\(listener.log)")
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM outbox") == 0 }, "\(listener.log)")
    #expect(try push.endToEndWait("apns", count: 2, timeoutMs: 1000) == false)
    let requests = try push.endToEndRequests("apns")
    #expect(requests.map { $0.string("deviceToken") } == [Self.apnsToken])
    #expect(listener.terminate() == 0)
  }

  /// A development build's (sandbox) token under `production = true`: refused by production, delivered
  /// through the sandbox, kept, and its environment remembered.
  @Test func aSandboxTokenUnderProductionIsDeliveredThroughTheSandboxAndKept() throws {
    let rig = try EndToEndRig(
      ssid: 8, platform: "ios", token: Self.apnsToken, coalesceWindow: "0", sandboxTokens: [Self.apnsToken])
    defer { rig.stop() }
    let (push, aprsis, database, listener) = (rig.push, rig.aprsis, rig.database, rig.listener)
    #expect(try aprsis.inject([messageLine(from: "KJ7ABC-7", to: "N0CALL-8", text: "hi", msgno: "1")]) == 1)
    #expect(try push.endToEndWait("apns", count: 1), "nothing delivered:\n\(listener.log)")
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM outbox") == 0 }, "\(listener.log)")
    let requests = try push.endToEndRequests("apns")
    #expect(requests.map { $0.string("environment") } == ["production", "sandbox"], "\(requests)")
    #expect(requests.map { $0.int("status") } == [400, 200])
    #expect(try database.int("SELECT count(*) FROM devices") == 1)
    #expect(
      try database.waitUntil {
        try $0.int("SELECT count(*) FROM devices WHERE apns_environment = 'sandbox'") == 1
      })
    #expect(listener.terminate() == 0)
  }

  /// `production = true` while every device has a sandbox token (the operator's mistake): every push still
  /// arrives, no device is deleted, and `/health` says what is wrong, naming both environments.
  @Test func aMisconfiguredProductionSettingDeletesNothingAndHealthSaysSo() throws {
    let tokens = [Self.apnsToken, String(repeating: "ef", count: 32)]
    let rig = try EndToEndRig(
      ssid: 8, platform: "ios", token: tokens[0], coalesceWindow: "0", moreTokens: [tokens[1]],
      sandboxTokens: tokens)
    defer { rig.stop() }
    let (stack, push, aprsis, database, listener) = (
      rig.stack, rig.push, rig.aprsis, rig.database, rig.listener
    )
    #expect(try aprsis.inject([messageLine(from: "KJ7ABC-7", to: "N0CALL-8", text: "hi", msgno: "1")]) == 1)
    #expect(try push.endToEndWait("apns", count: 2), "nothing delivered:\n\(listener.log)")
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM outbox") == 0 }, "\(listener.log)")
    #expect(try database.int("SELECT count(*) FROM devices") == 2)
    // The listener's own reasons may show while its status catches up; the push one must come and stay alone.
    var reasons: [String] = []
    let degraded = waitUntil(timeout: 10, interval: 0.1) {
      guard case .array(let items)? = (try? stack.get("/health"))?.jsonObject?["degraded"] else {
        return false
      }
      reasons = items.compactMap {
        if case .string(let text) = $0 { text.hasPrefix("push") ? text : nil } else { nil }
      }
      return !reasons.isEmpty
    }
    #expect(degraded, "\(listener.log)")
    #expect(reasons.count == 1, "\(reasons)")
    let reason = reasons.first ?? ""
    #expect(reason.hasPrefix("push for ios: ") && reason.contains("production") && reason.contains("sandbox"))
    #expect(listener.log.contains("the production setting contradicts the devices"))
    #expect(listener.terminate() == 0)
    #expect(try database.int("SELECT count(*) FROM devices") == 2)
  }

  /// A sender's retransmission, let through by APRS-IS (its clock moved past the 30 s duplicate window): stored
  /// once, pushed once, ACKed twice (`ackInterval` shortened so the second copy is due an ACK).
  @Test func retransmissionIsStoredAndPushedOnceButAckedTwice() throws {
    let ackIntervalMs: Int64 = 200
    let rig = try EndToEndRig(
      ssid: 7, platform: "android", token: Self.fcmToken, coalesceWindow: "0",
      extraListener: "ackInterval = \(ackIntervalMs)ms\n")
    defer { rig.stop() }
    let (stack, push, aprsis, database, listener) = (
      rig.stack, rig.push, rig.aprsis, rig.database, rig.listener
    )

    let copy = "KJ7ABC-7>APRS,TCPIP*::N0CALL-7 :Hello from the radio{42"
    let ack = "N0CALL-7>APZACL,TCPIP*::KJ7ABC-7 :ack42"
    #expect(try aprsis.inject([copy]) == 1)
    #expect(try aprsis.wait("transmitted", count: 1), "no first ACK:\n\(listener.log)")
    #expect(try push.endToEndWait("fcm", count: 1), "no FCM request:\n\(listener.log)")
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM outbox") == 0 }, "\(listener.log)")

    // The ACK rule is about the listener's own clock: the second copy must come at least ackInterval after the
    // first ACK it recorded (usually long past by now; a bounded wait on the recorded time otherwise).
    let firstAckAt = Int64(try database.int("SELECT max(last_sent_at) FROM ack_state"))
    #expect(firstAckAt > 0)
    #expect(
      waitUntil(timeout: 5) { Int64(Date().timeIntervalSince1970 * 1000) - firstAckAt > ackIntervalMs + 50 })
    try aprsis.advance(31)
    #expect(try aprsis.inject([copy]) == 1, "APRS-IS did not forward the retransmission")
    #expect(try database.waitUntil { try $0.meta("duplicates") == "1" }, "\(listener.log)")
    #expect(try aprsis.wait("transmitted", count: 2), "no second ACK:\n\(listener.log)")
    #expect(try aprsis.ackLines() == [ack, ack])
    #expect(
      try aprsis.transmitted().allSatisfy { $0.bool("duplicate") == false && $0.string("dropped") == nil })

    // Stored once, pushed once.
    #expect(try database.int("SELECT count(*) FROM messages") == 1)
    #expect(try database.int("SELECT count(*) FROM outbox") == 0)
    #expect(try push.endToEndWait("fcm", count: 2, timeoutMs: 1000) == false)
    #expect(try push.endToEndRequests("fcm").count == 1)
    #expect(try database.waitUntil { try $0.meta("acksSent") == "2" })

    let sync = try endToEndSync(stack, ssid: 7)
    let messages = sync.objects("messages")
    #expect(messages.count == 1, "\(sync)")
    #expect(messages.first?.string("peer") == "KJ7ABC-7" && messages.first?["seqId"] == .string("42"))
    #expect(messages.first?.string("text") == "Hello from the radio")
    #expect(listener.terminate() == 0)
  }
}

// MARK: Helpers the end-to-end suites share (the push fake's wait and request list, nested JSON members), and this
// suite's combined config

extension PushProviderFake {
  /// `POST /control/wait`: true once `count` requests of `role` were answered 200 (bounded by `timeoutMs`).
  func endToEndWait(_ role: String, count: Int, timeoutMs: Int = 10_000) throws -> Bool {
    let answer = try control(
      "POST", "/control/wait",
      #"{"role":"\#(role)","count":\#(count),"timeoutMs":\#(timeoutMs),"answered":true,"status":200}"#)
    return answer.bool("ok") == true
  }

  /// `GET /control/requests?role=…`: the recorded requests, oldest first.
  func endToEndRequests(_ role: String) throws -> [JSONObject] {
    try control("GET", "/control/requests?role=\(role)").objects("requests")
  }
}

/// The object at `path` below `object`, or nil.
func endToEndObject(_ object: JSONObject, _ path: String...) -> JSONObject? {
  var current = object
  for key in path {
    guard case .object(let next)? = current[key] else { return nil }
    current = next
  }
  return current
}

/// An integer JSON number (no fraction, no exponent), or nil.
private func endToEndInteger(_ value: JSONValue?) -> Int64? {
  guard case .number(let number)? = value, !number.literal.contains(where: { ".eE".contains($0) }) else {
    return nil
  }
  return number.int64
}

/// Everything one end-to-end test runs: nginx + responder, the push fake, the APRS-IS fake, N0CALL-`ssid`
/// registered with one device and `ackMessages`, and a listener logged in (verified) with its filter.
private final class EndToEndRig {
  let stack: TestStack
  let push: PushProviderFake
  let aprsis: FakeAPRSIS
  let database: SQLiteFile
  let listener: ListenerProcess

  /// `moreTokens`: more devices of the same platform registered for the station; `sandboxTokens`: APNs tokens
  /// the fake's production refuses and its sandbox accepts (a development build's).
  init(
    ssid: Int, platform: String, token: String, coalesceWindow: String, extraListener: String = "",
    moreTokens: [String] = [], sandboxTokens: [String] = []
  ) throws {
    // What started so far, stopped in reverse when a later step fails.
    var started: [() -> Void] = []
    do {
      let stack = try TestStack(.real())
      started.append { stack.stop() }
      let push = try PushProviderFake()
      started.append { push.stop() }
      let aprsis = try FakeAPRSIS()
      started.append { aprsis.stop() }
      try endToEndRegister(stack, ssid: ssid, platform: platform, token: token, ackMessages: true)
      for more in moreTokens {
        try endToEndRegister(stack, ssid: ssid, platform: platform, token: more, ackMessages: true)
      }
      if !sandboxTokens.isEmpty {
        let list = sandboxTokens.map { "\"\($0)\"" }.joined(separator: ",")
        try push.control("POST", "/control/tokens", #"{"sandbox":[\#(list)]}"#)
      }
      let listener = try ListenerProcess(
        database: stack.databasePath,
        config: endToEndConfig(
          aprsis: aprsis, push: push, coalesceWindow: coalesceWindow, extraListener: extraListener))
      started.append { listener.stop() }
      try endToEndWaitForLogin(aprsis, listener: listener, filter: "g/N0CALL-\(ssid)")
      (self.stack, self.push, self.aprsis, self.listener) = (stack, push, aprsis, listener)
      database = SQLiteFile(path: stack.databasePath)
    } catch {
      for stop in started.reversed() { stop() }
      throw error
    }
  }

  /// Stops everything, the listener first.
  func stop() {
    listener.stop()
    aprsis.stop()
    push.stop()
    stack.stop()
  }
}

/// `POST /v1/register` for N0CALL-`ssid` with a device.
private func endToEndRegister(
  _ stack: TestStack, ssid: Int, platform: String, token: String, ackMessages: Bool
) throws {
  let response = try stack.post(
    "/v1/register",
    json:
      #"{"callsign":"N0CALL","ssid":\#(ssid),"platform":"\#(platform)","pushToken":"\#(token)","ackMessages":\#(ackMessages),"wantHistory":false,"since":0,"auth":"13023"}"#
  )
  #expect(response.status == 200, "\(response.text)")
}

/// `POST /v1/sync` for N0CALL-`ssid` since 0: the whole answer.
private func endToEndSync(_ stack: TestStack, ssid: Int) throws -> JSONObject {
  let response = try stack.post(
    "/v1/sync", json: #"{"callsign":"N0CALL","ssid":\#(ssid),"auth":"13023","since":0}"#)
  #expect(response.status == 200, "\(response.text)")
  return try #require(response.jsonObject, "sync answered \(response.text)")
}

/// Waits for the listener's verified login carrying `filter`.
private func endToEndWaitForLogin(_ aprsis: FakeAPRSIS, listener: ListenerProcess, filter: String) throws {
  try #require(try aprsis.wait("login", count: 1), "no login:\n\(listener.log)")
  let client = try #require(try aprsis.clients().last { $0.bool("logged_in") == true })
  #expect(client.string("login") == EndToEndTests.login)
  #expect(client.bool("verified") == true, "\(client)")
  #expect(client.string("filter") == filter, "\(client)")
}

/// The listener's INI for the APRS-IS fake (verified service login) plus `[messaging]` for the push fake.
private func endToEndConfig(
  aprsis: FakeAPRSIS, push: PushProviderFake, coalesceWindow: String, extraListener: String = ""
) -> String {
  let listener = ListenerProcess.config(
    fake: aprsis, login: EndToEndTests.login, passcode: EndToEndTests.passcode, extraListener: extraListener)
  return listener + """

    [messaging]
    coalesceWindow = \(coalesceWindow)

    [messaging.android]
    serviceAccountFile = \(push.directory)/service-account.json
    endpoint = https://127.0.0.1:\(push.port)
    caFile = \(push.directory)/ca.pem

    [messaging.ios.apns]
    keyFile = \(push.directory)/AuthKey_TESTKEY123.p8
    keyId = TESTKEY123
    teamId = TEAM123456
    bundleId = org.example.htcommander
    production = true
    productionEndpoint = https://localhost:\(push.port)
    sandboxEndpoint = https://localhost:\(push.sandboxPort)
    caFile = \(push.directory)/ca.pem

    """
}
