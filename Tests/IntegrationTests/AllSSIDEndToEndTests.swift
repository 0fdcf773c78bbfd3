import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The all-SSID inbox end to end, through nginx, the responder, the real `aprs-listener`, the APRS-IS fake and
/// the push fake: the owner sets `ssids:"all"` and `ackSsids:[9]`; the listener's filter takes the call's every
/// SSID in; messages to `N0CALL-9` and `N0CALL-3` are stored for N0CALL-7 with `to`, neither ACKed (`N0CALL-9` is
/// no station of the owner here: an ACK in its name could answer for someone's radio); only the device registered with `want:["ssids"]` is pushed, naming `to`; a sync without `want`
/// answers exactly as before (nothing), one with it both entries.
@Suite(.serialized) struct AllSSIDEndToEndTests {
  static let optedIn = "ssids-fcm:APA91bOpted_in-0123456789"

  @Test func otherSSIDsAreStoredNeverAckedForAnotherOwnerAndPushedOnlyToOptedInDevices() throws {
    let rig = try SettingsRig()
    defer { rig.stop() }
    let answer = try rig.settings(#""ssids":"all","ackSsids":[9]"#)
    #expect(answer.string("ssids") == "all", "\(answer)")
    let registered = try rig.stack.post(
      "/v1/register",
      json:
        #"{"callsign":"N0CALL","ssid":7,"platform":"android","pushToken":"\#(Self.optedIn)","wantHistory":false,"since":0,"auth":"13023","want":["ssids"]}"#,
      headers: ["Authorization: Bearer \(rig.stationKey)"])
    #expect(registered.status == 200, "\(registered.text)")
    // The filter now lets every SSID of the call through.
    let widened = waitUntil(timeout: 10, interval: 0.05) {
      ((try? rig.aprsis.currentFilter()) ?? nil)?.split(separator: "/").contains("N0CALL*") == true
    }
    #expect(widened, "filter: \(String(describing: try? rig.aprsis.currentFilter()))\n\(rig.listener.log)")

    #expect(
      try rig.aprsis.inject([
        "OH7AA-1>APRS,TCPIP*::N0CALL-9 :to nine{7", "OH7AA-1>APRS,TCPIP*::N0CALL-3 :to three{8",
      ]) == 2)
    #expect(
      try rig.database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 2 }, "\(rig.listener.log)")
    #expect(
      try rig.database.run("SELECT station, addressee, text FROM messages ORDER BY timestamp;")
        == "N0CALL-7|N0CALL-9|to nine\nN0CALL-7|N0CALL-3|to three\n")
    // N0CALL-9 is in ackSsids but no station of the owner here: no ACK goes out in its name (it may be a radio on
    // air whose sender would stop retrying).
    #expect(try !rig.aprsis.wait("transmitted", count: 1, timeout: 2), "\(rig.listener.log)")
    #expect(try rig.aprsis.ackLines().isEmpty)

    // Pushes: the opted-in phone only, naming `to`.
    #expect(try rig.push.endToEndWait("fcm", count: 1), "no push:\n\(rig.listener.log)")
    #expect(
      try rig.database.waitUntil { try $0.int("SELECT count(*) FROM outbox") == 0 }, "\(rig.listener.log)")
    let requests = try rig.push.endToEndRequests("fcm")
    let tokens = requests.compactMap { endToEndObject($0, "body", "message")?.string("token") }
    #expect(!tokens.isEmpty && tokens.allSatisfy { $0 == Self.optedIn }, "\(tokens)")
    let tos = requests.compactMap { endToEndObject($0, "body", "message", "data")?.string("to") }
    #expect(Set(tos).isSubset(of: ["N0CALL-9", "N0CALL-3"]) && tos.last == "N0CALL-3", "\(tos)")

    // Answers: nothing new for a client that did not ask; both entries with `to` for one that did.
    #expect(try rig.sync().objects("messages").isEmpty)
    let opted = try rig.stack.post(
      "/v1/sync", json: #"{"callsign":"N0CALL","ssid":7,"auth":"13023","since":0,"want":["ssids"]}"#,
      headers: ["Authorization: Bearer \(rig.stationKey)"])
    let messages = opted.jsonObject?.objects("messages") ?? []
    #expect(messages.map { $0.string("to") } == ["N0CALL-9", "N0CALL-3"], "\(opted.text)")
    #expect(messages.map { $0.string("peer") } == ["OH7AA-1", "OH7AA-1"])
    #expect(rig.listener.terminate() == 0)
  }
}
