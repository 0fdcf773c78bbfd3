import Foundation
import JSON
import TestSupport
import Testing

/// A claim proven where the station is in use (docs/design.md "Who may do what"), end to end through nginx, the
/// responder, the real `aprs-listener`, the APRS-IS fake and the push fake: a squatter's claim of a station the app
/// uses is provisional and changes nothing for the app's phone (its messages are stored, pushed to it and ACKed);
/// the code reaches only the phone's push, never a sync; the real user takes the station back with a code pushed
/// to that phone, and the squatter's key is refused saying why.
@Suite(.serialized) struct ClaimProofEndToEndTests {
  static let phone = "claim-fcm:APA91bThePhone-0123456789"
  static let identity = #""callsign":"N0CALL","ssid":7,"auth":"13023""#

  /// The claim codes pushed to the phone so far, oldest first (from the banner's title).
  static func codes(_ push: PushProviderFake) throws -> [String] {
    try push.endToEndRequests("fcm").compactMap { request -> String? in
      guard let message = endToEndObject(request, "body", "message"), message.string("token") == phone,
        endToEndObject(request, "body", "message", "data")?.string("kind") == "claim",
        let title = endToEndObject(request, "body", "message", "notification")?.string("title")
      else { return nil }
      return title.split(separator: " ").last.map(String.init)
    }
  }

  /// The app's phone registers N0CALL-7 keyless with ACKs on, and the station and device are made an hour old (in
  /// use, so a claim needs its proof); the stack's database.
  static func phoneUsedForAnHour(_ stack: TestStack) throws -> SQLiteFile {
    let app = try stack.post(
      "/v1/register",
      json:
        #"{\#(Self.identity),"platform":"android","pushToken":"\#(Self.phone)","ackMessages":true,"wantHistory":false,"since":0}"#
    )
    #expect(app.status == 200, "\(app.text)")
    let database = SQLiteFile(path: stack.databasePath)
    _ = try database.run(
      """
      UPDATE stations SET created_at = created_at - 3600000, registered_at = registered_at - 3600000;
      UPDATE devices SET registered_at = registered_at - 3600000;
      """)
    return database
  }

  @Test func aSquattersClaimIsProvisionalAndTheRealUserTakesTheStationBack() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let push = try PushProviderFake()
    defer { push.stop() }
    let aprsis = try FakeAPRSIS()
    defer { aprsis.stop() }
    // The app has used N0CALL-7 for an hour: its phone registered keyless, with ACKs on.
    let database = try Self.phoneUsedForAnHour(stack)
    let listener = try ListenerProcess(database: stack.databasePath, config: SettingsRig.config(aprsis, push))
    defer { listener.stop() }
    #expect(try aprsis.wait("login", count: 1), "no login:\n\(listener.log)")

    // The squatter's claim: provisional, one device to prove it, and nothing it may change.
    let squat = try stack.post("/v1/claim", json: "{\(Self.identity)}")
    #expect(squat.status == 200 && squat.jsonObject?.string("claim") == "provisional", "\(squat.text)")
    #expect(squat.jsonObject?.int("codeDevices") == 1)
    let squatter = try #require(squat.jsonObject?.string("stationKey"))
    let refused = try stack.post(
      "/v1/settings", json: #"{\#(Self.identity),"mutedUntil":9999999999999}"#,
      headers: ["Authorization: Bearer \(squatter)"])
    #expect(refused.status == 403 && refused.jsonObject?.string("error")?.contains("provisional") == true)
    #expect(
      waitUntil(timeout: 15, interval: 0.1) { ((try? Self.codes(push)) ?? []).count == 1 }, "\(listener.log)")
    let first = try #require(try Self.codes(push).first)
    #expect(first.utf8.count == 6)

    // The phone's messages: stored, pushed to it and ACKed on air as without the claim.
    #expect(try aprsis.inject(["KJ7ABC-7>APRS,TCPIP*::N0CALL-7 :still mine{7"]) == 1)
    #expect(try aprsis.wait("transmitted", count: 1), "no ACK:\n\(listener.log)")
    #expect(try aprsis.ackLines() == ["N0CALL-7>APZACL,TCPIP*::KJ7ABC-7 :ack7"])
    #expect(
      waitUntil(timeout: 15, interval: 0.1) {
        ((try? push.endToEndRequests("fcm")) ?? []).contains {
          endToEndObject($0, "body", "message", "data")?.string("fromCall") == "KJ7ABC-7"
        }
      }, "no message push:\n\(listener.log)")

    // The code is in no sync, keyless or with the squatter's key.
    for headers in [[], ["Authorization: Bearer \(squatter)"]] {
      let sync = try stack.post("/v1/sync", json: #"{\#(Self.identity),"since":0}"#, headers: headers)
      #expect(sync.status == 200, "\(sync.text)")
      #expect(!sync.text.contains(first), "\(sync.text)")
    }
    let guess = try stack.post(
      "/v1/claim", json: #"{\#(Self.identity),"code":"\#(first == "000000" ? "111111" : "000000")"}"#,
      headers: ["Authorization: Bearer \(squatter)"])
    #expect(guess.status == 403 && guess.jsonObject?.string("error")?.contains("wrong code") == true)

    // The real user, from the web client: a claim that takes the station back; its code goes to the phone.
    let owner = try stack.post("/v1/claim", json: "{\(Self.identity)}")
    #expect(owner.status == 200 && owner.jsonObject?.string("claim") == "provisional", "\(owner.text)")
    let key = try #require(owner.jsonObject?.string("stationKey"))
    #expect(
      waitUntil(timeout: 15, interval: 0.1) { ((try? Self.codes(push)) ?? []).count == 2 }, "\(listener.log)")
    let second = try #require(try Self.codes(push).last)
    let proof = try stack.post(
      "/v1/claim", json: #"{\#(Self.identity),"code":"\#(second)"}"#,
      headers: ["Authorization: Bearer \(key)"])
    #expect(proof.status == 200, "\(proof.text)")
    #expect(proof.jsonObject?.string("claim") == "proven" && proof.jsonObject?["replaced"] == .bool(true))
    let owned = try stack.post(
      "/v1/settings", json: #"{\#(Self.identity),"ackPolicy":"server"}"#,
      headers: ["Authorization: Bearer \(key)"])
    #expect(owned.status == 200, "\(owned.text)")
    let gone = try stack.post(
      "/v1/settings", json: "{\(Self.identity)}", headers: ["Authorization: Bearer \(squatter)"])
    #expect(
      gone.status == 401 && gone.jsonObject?.string("error")?.contains("taken back") == true, "\(gone.text)")
    #expect(try database.int("SELECT count(*) FROM station_audit WHERE action = 'replaced'") == 1)
    // Neither code is stored anywhere in the database.
    let dump = try database.run(".dump")
    #expect(!dump.contains("\"\(first)\"") && !dump.contains("'\(first)'") && !dump.contains("'\(second)'"))
  }

  /// A claim governs only the devices it brought or adopted: a claim the operator approved mutes the station,
  /// blocks a caller and turns ACKs off, and the phone the station had before the claim still gets the blocked
  /// caller's message pushed and ACKed on air, as its own register asked.
  @Test func aGoverningClaimsSettingsNeverReachThePhoneFromBeforeIt() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let push = try PushProviderFake()
    defer { push.stop() }
    let aprsis = try FakeAPRSIS()
    defer { aprsis.stop() }
    _ = try Self.phoneUsedForAnHour(stack)
    let claim = try stack.post("/v1/claim", json: "{\(Self.identity)}")
    #expect(claim.status == 200 && claim.jsonObject?.string("claim") == "provisional", "\(claim.text)")
    let key = try #require(claim.jsonObject?.string("stationKey"))
    let approved = try runCLI(["stations", "N0CALL-7", "--approve-claim", "--db", stack.databasePath])
    #expect(approved.status == 0, "\(approved.stderrText)")
    let settings = try stack.post(
      "/v1/settings",
      json: #"{\#(Self.identity),"mutedUntil":9007199254740991,"blocked":["KJ7ABC"],"ackPolicy":"never"}"#,
      headers: ["Authorization: Bearer \(key)"])
    #expect(settings.status == 200, "\(settings.text)")
    let listener = try ListenerProcess(database: stack.databasePath, config: SettingsRig.config(aprsis, push))
    defer { listener.stop() }
    #expect(try aprsis.wait("login", count: 1), "no login:\n\(listener.log)")

    #expect(try aprsis.inject(["KJ7ABC-7>APRS,TCPIP*::N0CALL-7 :are you there{9"]) == 1)
    #expect(try aprsis.wait("transmitted", count: 1), "no ACK:\n\(listener.log)")
    #expect(try aprsis.ackLines() == ["N0CALL-7>APZACL,TCPIP*::KJ7ABC-7 :ack9"])
    #expect(
      waitUntil(timeout: 15, interval: 0.1) {
        ((try? push.endToEndRequests("fcm")) ?? []).contains {
          endToEndObject($0, "body", "message")?.string("token") == Self.phone
            && endToEndObject($0, "body", "message", "data")?.string("fromCall") == "KJ7ABC-7"
        }
      }, "no push to the earlier phone:\n\(listener.log)")
    let sync = try stack.post("/v1/sync", json: #"{\#(Self.identity),"since":0}"#)
    #expect(sync.status == 200 && sync.text.contains("are you there"), "\(sync.text)")
  }

  @Test func aStationNobodyUsesIsClaimedFirstComeThroughNginx() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let claim = try stack.post(
      "/v1/claim", json: #"{"callsign":"FRESH","ssid":3,"auth":"\#(aprsPasscode("FRESH"))"}"#)
    #expect(claim.status == 200 && claim.jsonObject?.string("claim") == "proven", "\(claim.text)")
    #expect(claim.jsonObject?["codeDevices"] == nil)
    let again = try stack.post(
      "/v1/claim", json: #"{"callsign":"FRESH","ssid":3,"auth":"\#(aprsPasscode("FRESH"))"}"#)
    #expect(again.status == 409 && again.jsonObject?.string("error") != nil, "\(again.text)")
  }
}
