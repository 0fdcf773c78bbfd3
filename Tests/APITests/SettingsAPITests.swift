import API
import Foundation
import JSON
import Store
import TestSupport
import Testing

/// `POST /v1/settings` at handler level: every key in every answer, partial updates, a 400 naming each bad field
/// (and nothing changed), 404 for an unregistered station, register's ackMessages as the ACK policy, and the
/// pull that earns a `device` station's ACKs through sync and register with history.
@Suite struct SettingsAPITests {
  nonisolated(unsafe) static let identity = APIFixture.settingsIdentity

  @Test func theAnswerIsTheWholeSetWithEveryKey() throws {
    let fixture = try APIFixture.withClaimedStation()
    let reply = fixture.settings()
    #expect(reply.status == 200, "\(reply.text)")
    #expect(
      reply.text
        == #"{"blocked":[],"mutedUntil":0,"quietHours":null,"quietBypass":[],"ackPolicy":"never","keylessDevices":"allow","ssids":"exact","ackSsids":[],"fallbackWait":20,"airAnswered":"quiet","trackSent":false,"subscriptions":[],"forward":[],"retention":{"mode":"ring"}}"#
    )
  }

  @Test func fieldsGivenChangeAndTheRestStay() throws {
    let fixture = try APIFixture.withClaimedStation()
    var reply = fixture.settings(
      [
        "blocked": ["kj7abc", "OH7AA-1", "KJ7ABC"],
        "quietHours": ["start": 1320, "end": 420, "utcOffsetMinutes": 120],
      ])
    #expect(reply.status == 200, "\(reply.text)")
    #expect(
      reply.text
        == #"{"blocked":["KJ7ABC","OH7AA-1"],"mutedUntil":0,"quietHours":{"start":1320,"end":420,"#
        + #""utcOffsetMinutes":120},"quietBypass":[],"ackPolicy":"never","keylessDevices":"allow","ssids":"exact","ackSsids":[],"fallbackWait":20,"airAnswered":"quiet","trackSent":false,"subscriptions":[],"forward":[],"retention":{"mode":"ring"}}"#
    )
    reply = fixture.settings(
      ["mutedUntil": 1_800_000_360_000, "quietBypass": ["N0CALL-9"], "ackPolicy": "device"])
    #expect(
      reply.text
        == #"{"blocked":["KJ7ABC","OH7AA-1"],"mutedUntil":1800000360000,"quietHours":{"start":1320,"end":420,"#
        + #""utcOffsetMinutes":120},"quietBypass":["N0CALL-9"],"ackPolicy":"device","keylessDevices":"allow","ssids":"exact","ackSsids":[],"fallbackWait":20,"airAnswered":"quiet","trackSent":false,"subscriptions":[],"forward":[],"retention":{"mode":"ring"}}"#
    )
    // null turns the quiet hours off; an empty list clears; mutedUntil 0 unmutes.
    reply = fixture.settings(["quietHours": NSNull(), "blocked": [String](), "mutedUntil": 0])
    #expect(
      reply.text
        == #"{"blocked":[],"mutedUntil":0,"quietHours":null,"quietBypass":["N0CALL-9"],"ackPolicy":"device","keylessDevices":"allow","ssids":"exact","ackSsids":[],"fallbackWait":20,"airAnswered":"quiet","trackSent":false,"subscriptions":[],"forward":[],"retention":{"mode":"ring"}}"#
    )
    // The station's identity as curl users write it; the store agrees.
    reply = fixture.post("/v1/settings", ["callsign": "n0call-7", "auth": 13023])
    #expect(reply["ackPolicy"]?.stringValue == "device")
    #expect(try fixture.database.stationSettings("N0CALL-7")?.quietBypass.calls == ["N0CALL-9"])
  }

  @Test func anUnregisteredStationGets404AndAWrongPasscode401() throws {
    let fixture = try APIFixture()
    let reply = fixture.settings(["mutedUntil": 5])
    #expect(reply.status == 404)
    #expect(reply.error?.contains("N0CALL-7 is not registered") == true, "\(reply.text)")
    #expect(fixture.post("/v1/settings", ["callsign": "N0CALL", "ssid": 7, "auth": "1"]).status == 401)
    #expect(fixture.post("/v1/settings", #"{"callsign":"N0CALL","auth":"13023""#).status == 400)
    #expect(try fixture.database.stationSettings("N0CALL-7") == nil)
  }

  @Test(arguments: [
    (#""blocked":"KJ7ABC""#, "blocked must be an array"),
    (#""blocked":["KJ7ABC",7]"#, "blocked[1] must be a call"),
    (#""blocked":["KJ7ABC","KJ7*"]"#, "blocked[1] must be a call"),
    (#""blocked":[\#((0...100).map { "\"KJ\($0)\"" }.joined(separator: ","))]"#, "blocked holds 101 calls"),
    (#""mutedUntil":-1"#, "mutedUntil must be between 0 and"),
    (#""mutedUntil":"soon""#, "mutedUntil must be an integer"),
    (#""mutedUntil":1.5"#, "mutedUntil must be an integer"),
    (#""quietHours":"22-07""#, "quietHours must be null or an object"),
    (#""quietHours":{"start":1320,"end":420}"#, "quietHours.utcOffsetMinutes is required"),
    (#""quietHours":{"start":1440,"end":420,"utcOffsetMinutes":0}"#, "quietHours.start must be a minute"),
    (#""quietHours":{"start":60,"end":-1,"utcOffsetMinutes":0}"#, "quietHours.end must be a minute"),
    (#""quietHours":{"start":60,"end":60,"utcOffsetMinutes":0}"#, "quietHours.end must differ"),
    (#""quietHours":{"start":60,"end":"7","utcOffsetMinutes":0}"#, "quietHours.end must be an integer"),
    (#""quietHours":{"start":60,"end":70,"utcOffsetMinutes":900}"#, "quietHours.utcOffsetMinutes must be"),
    // The extremes of a 64-bit integer: a 400, never a trap (abs(Int64.min) overflows).
    (
      #""quietHours":{"start":-9223372036854775808,"end":1,"utcOffsetMinutes":0}"#,
      "quietHours.start is out of range"
    ),
    (
      #""quietHours":{"start":1,"end":-9223372036854775808,"utcOffsetMinutes":0}"#,
      "quietHours.end is out of range"
    ),
    (
      #""quietHours":{"start":1,"end":2,"utcOffsetMinutes":-9223372036854775808}"#,
      "quietHours.utcOffsetMinutes is out of range"
    ),
    (
      #""quietHours":{"start":9223372036854775807,"end":1,"utcOffsetMinutes":0}"#,
      "quietHours.start is out of range"
    ),
    (#""mutedUntil":-9223372036854775808"#, "mutedUntil must be between 0 and"),
    (#""mutedUntil":9223372036854775807"#, "mutedUntil must be between 0 and"),
    (#""quietBypass":["N0CALL-7",""]"#, "quietBypass[1] must be a call"),
    (#""quietBypass":{}"#, "quietBypass must be an array"),
    (#""ackPolicy":"sometimes""#, #"ackPolicy must be "server", "device", "never" or "fallback""#),
    (#""ackPolicy":true"#, "ackPolicy must be a string"),
    (#""fallbackWait":0"#, "fallbackWait must be between 1 and 60"),
    (#""fallbackWait":61"#, "fallbackWait must be between 1 and 60"),
    (#""fallbackWait":"20""#, "fallbackWait must be an integer"),
    (#""fallbackWait":20.5"#, "fallbackWait must be an integer between 1 and 60"),
    (#""airAnswered":"loud""#, #"airAnswered must be "push", "quiet" or "none""#),
    (#""airAnswered":1"#, "airAnswered must be a string"),
    (#""trackSent":"yes""#, "trackSent must be true or false"),
  ])
  func aBadValueIsA400NamingTheFieldAndChangesNothing(field: String, message: String) throws {
    let fixture = try APIFixture.withClaimedStation()
    // Good fields beside the bad one are not applied either.
    var body = #"{"callsign":"N0CALL","ssid":7,"auth":"13023""#
    if !field.hasPrefix(#""ackPolicy""#) { body += #","ackPolicy":"server""# }
    if !field.hasPrefix(#""mutedUntil""#) { body += #","mutedUntil":5"# }
    let reply = fixture.post("/v1/settings", body + "," + field + "}")
    #expect(reply.status == 400, "\(reply.text)")
    #expect(reply.error?.hasPrefix(message) == true, "\(reply.error ?? reply.text)")
    #expect(try fixture.database.stationSettings("N0CALL-7") == .defaults)
  }

  @Test func registersAckMessagesSetsServerOrNeverAndLeftOutKeepsThePolicy() throws {
    let fixture = try APIFixture.withClaimedStation()
    #expect(fixture.settings()["ackPolicy"]?.stringValue == "never")
    #expect(fixture.post("/v1/register", registerBody(["ackMessages": true])).status == 200)
    #expect(fixture.settings()["ackPolicy"]?.stringValue == "server")
    #expect(fixture.settings(["ackPolicy": "device"])["ackPolicy"]?.stringValue == "device")
    var body = registerBody()
    body["ackMessages"] = nil
    #expect(fixture.post("/v1/register", body).status == 200)
    #expect(fixture.settings()["ackPolicy"]?.stringValue == "device")
    #expect(fixture.post("/v1/register", registerBody(["ackMessages": false])).status == 200)
    #expect(fixture.settings()["ackPolicy"]?.stringValue == "never")
  }

  @Test func theOwnRadioSettingsAreTakenAndSayWhetherTheListenerFollowsTheStation() throws {
    let fixture = try APIFixture.withClaimedStation()
    #expect(fixture.settings()["ownTransmissions"] == nil)
    let reply = fixture.settings(["ackPolicy": "fallback", "fallbackWait": 30, "airAnswered": "none"])
    #expect(reply.status == 200, "\(reply.text)")
    #expect(reply["ackPolicy"]?.stringValue == "fallback" && reply["fallbackWait"]?.intValue == 30)
    #expect(reply["airAnswered"]?.stringValue == "none" && reply["trackSent"] == .bool(false))
    // No listener published yet: pending.
    #expect(reply["ownTransmissions"]?.stringValue == "pending")
    try fixture.database.publishListenerStatus(ListenerStatus(state: "online", ownFollowed: ["N0CALL-7"]))
    #expect(fixture.settings()["ownTransmissions"]?.stringValue == "followed")
    try fixture.database.publishListenerStatus(ListenerStatus(state: "online", ownFellBack: ["N0CALL-7"]))
    #expect(fixture.settings()["ownTransmissions"]?.stringValue == "fellBack")
    // trackSent alone asks to be followed too; neither: the key goes.
    #expect(fixture.settings(["ackPolicy": "server", "trackSent": true])["ownTransmissions"] != nil)
    #expect(fixture.settings(["trackSent": false])["ownTransmissions"] == nil)
    #expect(fixture.settings()["fallbackWait"]?.intValue == 30)
  }

  @Test func unregisterDeletesTheSettings() throws {
    let fixture = try APIFixture.withClaimedStation()
    #expect(fixture.settings(["blocked": ["KJ7ABC"], "mutedUntil": 9])["mutedUntil"]?.intValue == 9)
    #expect(fixture.post("/v1/unregister", Self.identity).status == 200)
    // The claim went with the station: its key is no longer valid, and without one the station is unknown.
    #expect(fixture.settings().status == 401)
    fixture.stationKey = nil
    #expect(fixture.settings().status == 404)
    #expect(fixture.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    fixture.claim(Self.identity)
    #expect(fixture.settings()["blocked"] == .array([]))
  }

  @Test func aDeviceStationsPullsThroughSyncAndRegisterMarkWhatTheyReturned() throws {
    let fixture = try APIFixture.withClaimedStation()
    #expect(fixture.settings(["ackPolicy": "device"]).status == 200)
    for number in 1...2 {
      guard
        case .stored(let id, _)? = try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC-7", text: "m\(number)")
          .first
      else { throw TestFailure("not stored") }
      try fixture.database.recordDeviceAcks([
        PendingDeviceAck(messageID: id, station: "N0CALL-7", key: "k\(number)", line: "ack\(number)\r\n")
      ])
    }
    // Register with history pulls both.
    let reply = fixture.post("/v1/register", registerBody(["ackMessages": NSNull()]))
    #expect(reply.messages.count == 2)
    let taken = try fixture.database.takePulledDeviceAcks(now: fixture.clock.now, minIntervalMs: 30_000)
    #expect(taken.lines == ["ack1\r\n", "ack2\r\n"])
    // A register without history pulls nothing.
    guard case .stored(let id, _)? = try fixture.deliver(to: "N0CALL-7", from: "KJ7ABC-7", text: "m3").first
    else {
      throw TestFailure("not stored")
    }
    try fixture.database.recordDeviceAcks([
      PendingDeviceAck(messageID: id, station: "N0CALL-7", key: "k3", line: "ack3\r\n")
    ])
    #expect(
      fixture.post("/v1/register", registerBody(["wantHistory": false, "ackMessages": NSNull()])).status
        == 200)
    #expect(
      try fixture.database.takePulledDeviceAcks(now: fixture.clock.now, minIntervalMs: 30_000).lines.isEmpty)
    // A sync does.
    let sync = fixture.post("/v1/sync", Self.identity.merging(["since": reply.serverTime ?? 0]) { $1 })
    #expect(sync.messages.map { $0["text"]?.stringValue } == ["m3"])
    #expect(
      try fixture.database.takePulledDeviceAcks(now: fixture.clock.now, minIntervalMs: 30_000).lines == [
        "ack3\r\n"
      ])
  }
}
