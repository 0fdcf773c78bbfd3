import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `ackPolicy:"fallback"` end to end, through nginx, the responder, the real `aprs-listener` and the APRS-IS fake
/// (``FallbackRig``): the owner sets it with `POST /v1/settings`; the listener's `#filter` gains the station's exact
/// `b/` entry; a numbered message to the station is stored and its ACK held for `fallbackWait`; the station's own
/// `ack` or `rej`, injected into the fake as an igate gates it (source the station, addressee the sender), means no
/// ACK from the server and `answeredBy:"air"`; silence means exactly one ACK at the wait's end, and a later copy
/// is ACKed at once under the `ackInterval` rule. A station without the setting keeps today's filter and ACK.
@Suite(.serialized) struct FallbackAckEndToEndTests {
  static let sender = "OH7AA-1"

  /// Whether `spec`'s `b/` part names exactly `entry` (one of its `/`-separated calls).
  static func senders(of spec: String) -> [String] {
    spec.split(separator: " ").filter { $0.hasPrefix("b/") }.flatMap { $0.dropFirst(2).split(separator: "/") }
      .map(String.init)
  }

  /// The `ownTransmissions` object of `/health`'s `listener`.
  static func own(_ listener: JSONObject) -> JSONObject? {
    if case .object(let own)? = listener["ownTransmissions"] { return own }
    return nil
  }

  @Test func theStationsOwnAckWithinTheWaitMeansNoAckFromTheServerAndAnsweredByAir() throws {
    let rig = try FallbackRig()
    defer { rig.stop() }
    let station = try rig.claim("N0CALL", ssid: 7)
    let answer = try rig.settings(station, #""ackPolicy":"fallback","fallbackWait":5"#)
    #expect(
      answer.string("ackPolicy") == "fallback" && answer.int("fallbackWait") == 5
        && answer.string("airAnswered") == "quiet", "\(answer)")
    try rig.startListener()
    #expect(
      rig.waitForFilter { Self.senders(of: $0).contains(station) }, "filter: \(rig.filter())\n\(rig.log)")

    let sentAt = Date()
    #expect(
      try rig.aprsis.inject([messageLine(from: Self.sender, to: station, text: "are you there", msgno: "5")])
        == 1)
    #expect(
      try rig.database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 1 },
      "not stored:\n\(rig.log)")
    // The radio answers about 3 s after the message: nothing from the server before.
    #expect(
      try !rig.aprsis.wait("transmitted", count: 1, timeout: max(0.1, 3 - Date().timeIntervalSince(sentAt))),
      "ACKed before the radio answered:\n\(rig.log)")
    // Delivered to the listener through its b/ entry (the line is addressed to the sender, not to the station).
    #expect(try rig.aprsis.inject([radioAnswer(station, to: Self.sender, "ack", "5")]) == 1)
    #expect(
      try rig.database.waitUntil(timeout: 3) {
        try $0.run("SELECT answered_by FROM messages WHERE msgno = '5';") == "air\n"
      }, "not answered by the air:\n\(rig.log)")
    // Watched 3 s past the wait's end: no ACK from the server, ever.
    let watchUntil = 5 + 3 - Date().timeIntervalSince(sentAt)
    #expect(
      try !rig.aprsis.wait("transmitted", count: 1, timeout: max(0.1, watchUntil)),
      "the server ACKed a message the radio answered: \(rig.ackSummary)\n\(rig.log)")
    #expect(try rig.aprsis.transmitted().isEmpty)
    let own = try #require(Self.own(try rig.health()))
    #expect(
      own.int("followed") == 1 && own.int("fellBackCount") == 0 && own.strings("fellBack").isEmpty, "\(own)")
    #expect(try rig.settings(station, #""fallbackWait":5"#).string("ownTransmissions") == "followed")

    // `answeredBy` only for a sync that asks for it.
    let plain = try rig.sync(station)
    #expect(plain.count == 1 && plain.allSatisfy { $0["answeredBy"] == nil }, "\(plain)")
    let opted = try rig.sync(station, want: ["answeredBy"])
    #expect(opted.map { $0.string("answeredBy") } == ["air"], "\(opted)")
    #expect(rig.waitForCounter("airAnswered", 1), "\(rig.healthSummary)")
    #expect(try rig.counter("fallbackAcks") == 0 && rig.counter("acksSent") == 0, "\(rig.healthSummary)")
    let metrics = try rig.stack.metrics().text
    #expect(metrics.contains("aprs_cloud_listener_acks_saved_by_radio_total 1"), "\(metrics)")
    #expect(metrics.contains("aprs_cloud_listener_fallback_acks_total 0"), "\(metrics)")
    #expect(metrics.contains("aprs_cloud_listener_own_transmissions_followed 1"), "\(metrics)")
    #expect(metrics.contains("aprs_cloud_listener_own_transmissions_fell_back 0"), "\(metrics)")
    #expect(rig.listener?.terminate() == 0)
  }

  @Test func theRadiosRejCountsAsItsAnswer() throws {
    let rig = try FallbackRig()
    defer { rig.stop() }
    let station = try rig.claim("N0CALL", ssid: 7)
    _ = try rig.settings(station, #""ackPolicy":"fallback","fallbackWait":3"#)
    try rig.startListener()
    #expect(
      rig.waitForFilter { Self.senders(of: $0).contains(station) }, "filter: \(rig.filter())\n\(rig.log)")

    let sentAt = Date()
    #expect(
      try rig.aprsis.inject([messageLine(from: Self.sender, to: station, text: "refuse me", msgno: "A7")])
        == 1)
    #expect(
      try rig.database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 1 },
      "not stored:\n\(rig.log)")
    #expect(try rig.aprsis.inject([radioAnswer(station, to: Self.sender, "rej", "A7")]) == 1)
    #expect(
      try rig.database.waitUntil(timeout: 3) {
        try $0.run("SELECT answered_by FROM messages WHERE msgno = 'A7';") == "air\n"
      }, "the rej did not count:\n\(rig.log)")
    #expect(
      try !rig.aprsis.wait(
        "transmitted", count: 1, timeout: max(0.1, 3 + 2 - Date().timeIntervalSince(sentAt))),
      "the server ACKed a message the radio rejected: \(rig.ackSummary)\n\(rig.log)")
    #expect(try rig.sync(station, want: ["answeredBy"]).map { $0.string("answeredBy") } == ["air"])
    #expect(rig.waitForCounter("airAnswered", 1), "\(rig.healthSummary)")
    #expect(try rig.counter("fallbackAcks") == 0)
    #expect(rig.listener?.terminate() == 0)
  }

  /// The default wait (20 s): no ACK before it, exactly one at or after it; with `ackInterval` 3 s, a copy sent
  /// right after that ACK is not ACKed again (the interval rule), one sent after the interval is, at once.
  @Test func withoutTheRadioOneAckAtTheDefaultWaitsEndAndACopyAfterItIsAckedAtOnce() throws {
    let rig = try FallbackRig()
    defer { rig.stop() }
    let station = try rig.claim("N0CALL", ssid: 7)
    let answer = try rig.settings(station, #""ackPolicy":"fallback""#)
    #expect(answer.int("fallbackWait") == 20, "\(answer)")
    try rig.startListener(ackInterval: "3s")
    #expect(
      rig.waitForFilter { Self.senders(of: $0).contains(station) }, "filter: \(rig.filter())\n\(rig.log)")
    // The copies below are a sender's retries: the fake's duplicate filter (30 s by default) would drop them.
    try rig.aprsis.command(["cmd": "set", "dup_window": 1])

    let line = messageLine(from: Self.sender, to: station, text: "anyone home", msgno: "31")
    let injectedAt = Date().timeIntervalSince1970
    #expect(try rig.aprsis.inject([line]) == 1)
    #expect(try !rig.aprsis.wait("transmitted", count: 1, timeout: 10), "ACKed early: \(rig.ackSummary)")
    // A sender's retry within the wait joins it: no ACK of its own, and the wait's end does not move.
    #expect(try rig.aprsis.inject([line]) == 1)
    #expect(try rig.database.waitUntil { try $0.meta("duplicates") == "1" }, "\(rig.log)")
    let left = 19.5 - (Date().timeIntervalSince1970 - injectedAt)
    #expect(
      try !rig.aprsis.wait("transmitted", count: 1, timeout: max(0.1, left)), "ACKed early: \(rig.ackSummary)"
    )
    #expect(try rig.aprsis.wait("transmitted", count: 1, timeout: 5), "no ACK after the wait:\n\(rig.log)")
    let first = try rig.acks()
    #expect(first.map(\.line) == ["N0CALL-7>APZACL,TCPIP*::OH7AA-1  :ack31"], "\(first)")
    let delay = (first.first?.at ?? 0) - injectedAt
    #expect(delay >= 20 && delay < 22, "the ACK came \(delay) s after the message")
    #expect(rig.waitForCounter("fallbackAcks", 1), "\(rig.healthSummary)")

    // A copy within the 3 s interval of that ACK: no second ACK, watched to the interval's end.
    #expect(try rig.aprsis.inject([line]) == 1)
    let intervalLeft = (first.first?.at ?? 0) + 3.2 - Date().timeIntervalSince1970
    #expect(
      try !rig.aprsis.wait("transmitted", count: 2, timeout: max(0.1, intervalLeft)), "\(rig.ackSummary)")
    // Past the interval: the next copy is ACKed at once, once.
    let copyAt = Date().timeIntervalSince1970
    #expect(try rig.aprsis.inject([line]) == 1)
    #expect(try rig.aprsis.wait("transmitted", count: 2, timeout: 2), "the copy was not ACKed:\n\(rig.log)")
    let acks = try rig.acks()
    #expect(acks.map(\.line) == Array(repeating: "N0CALL-7>APZACL,TCPIP*::OH7AA-1  :ack31", count: 2))
    #expect((acks.last?.at ?? 0) - copyAt < 1.5, "\(acks)")
    #expect(try !rig.aprsis.wait("transmitted", count: 3, timeout: 1.5), "\(rig.ackSummary)")
    #expect(try rig.database.int("SELECT count(*) FROM messages") == 1)
    #expect(try rig.database.run("SELECT answered_by FROM messages;") == "\n")
    #expect(rig.waitForCounter("acksSent", 2), "\(rig.healthSummary)")
    #expect(try rig.counter("fallbackAcks") == 1 && rig.counter("airAnswered") == 0)
    #expect(try rig.counter("acksSuppressed") == 1, "\(rig.healthSummary)")
    #expect(try rig.stack.metrics().text.contains("aprs_cloud_listener_fallback_acks_total 1"))
    #expect(rig.listener?.terminate() == 0)
  }

  /// The `b/` entries on the filter (a bare call with its `-0` alias, whose radio may answer as either), and a
  /// station without the setting in the same run: today's `g/` entry, no `b/` one, its ACK at once in the same
  /// format as the fallback ACK.
  @Test func theFilterFollowsTheStationsExactlyAndAStationWithoutTheSettingKeepsTodaysBytes() throws {
    let rig = try FallbackRig()
    defer { rig.stop() }
    let fallback = try rig.claim("N0CALL", ssid: 7)
    let bare = try rig.claim("OH7LZB", ssid: 0)
    let plain = try rig.claim("W7ABC", ssid: 7)
    try rig.startListener()
    let today = rig.filter()
    #expect(today.hasPrefix("g/") && !today.contains("b/"), "\(today)")

    _ = try rig.settings(fallback, #""ackPolicy":"fallback","fallbackWait":3"#)
    _ = try rig.settings(bare, #""ackPolicy":"fallback","fallbackWait":3"#)
    #expect(
      rig.waitForFilter { Set(Self.senders(of: $0)) == [fallback, bare, "OH7LZB-0"] },
      "filter: \(rig.filter())\n\(rig.log)")
    let spec = rig.filter()
    // The g/ part is today's; the b/ entries are exact (no `*`), none for the station without the setting.
    #expect(
      spec.split(separator: " ").filter { !$0.hasPrefix("b/") } == today.split(separator: " "), "\(spec)")
    #expect(!spec.contains("*") && !Self.senders(of: spec).contains(plain), "\(spec)")
    // `/health` says the line's length once the listener published it (every 100 ms here).
    let lineBytes = ("#filter " + spec).utf8.count + 2
    #expect(
      waitUntil(timeout: 2, interval: 0.1) { (try? rig.health())?.int("filterBytes") == lineBytes },
      "\(lineBytes) bytes, /health: \(rig.healthSummary)")

    let sentAt = Date().timeIntervalSince1970
    #expect(
      try rig.aprsis.inject([
        messageLine(from: Self.sender, to: plain, text: "for the server", msgno: "7"),
        messageLine(from: Self.sender, to: fallback, text: "for the radio", msgno: "8"),
        messageLine(from: Self.sender, to: bare, text: "for the bare call", msgno: "9"),
      ]) == 3)
    // The station without the setting: ACKed at once, as today.
    #expect(try rig.aprsis.wait("transmitted", count: 1, timeout: 2), "no ACK:\n\(rig.log)")
    #expect(try rig.acks().map(\.line) == ["W7ABC-7>APZACL,TCPIP*::OH7AA-1  :ack7"])
    #expect((try rig.acks().first?.at ?? 0) - sentAt < 1.5)
    // The bare call's radio answers as CALL-0: its answer all the same.
    #expect(
      try rig.database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 3 },
      "not stored:\n\(rig.log)")
    #expect(try rig.aprsis.inject([radioAnswer("OH7LZB-0", to: Self.sender, "ack", "9")]) == 1)
    // N0CALL-7's radio stays silent: its one ACK at the wait's end, in the same format.
    #expect(try rig.aprsis.wait("transmitted", count: 2, timeout: 5), "no fallback ACK:\n\(rig.log)")
    #expect(try !rig.aprsis.wait("transmitted", count: 3, timeout: 2), "\(rig.ackSummary)")
    let acks = try rig.acks()
    #expect(
      acks.map(\.line) == [
        "W7ABC-7>APZACL,TCPIP*::OH7AA-1  :ack7", "N0CALL-7>APZACL,TCPIP*::OH7AA-1  :ack8",
      ], "\(acks)")
    #expect(acks.count == 2 && acks[1].at - sentAt >= 3, "\(acks)")
    #expect(
      try rig.database.run("SELECT msgno, coalesce(answered_by, '-') FROM messages ORDER BY msgno;")
        == "7|-\n8|-\n9|air\n")
    #expect(
      rig.waitForCounter("airAnswered", 1) && rig.waitForCounter("fallbackAcks", 1), "\(rig.healthSummary)")

    // Both opt out: the line is today's again, byte for byte, and the answers no longer speak of ownTransmissions.
    for station in [fallback, bare] {
      let answer = try rig.settings(station, #""ackPolicy":"server""#)
      #expect(answer.string("ackPolicy") == "server" && answer["ownTransmissions"] == nil, "\(answer)")
    }
    #expect(rig.waitForFilter { $0 == today }, "filter: \(rig.filter()), today: \(today)")
    #expect(rig.listener?.terminate() == 0)
  }

  /// 50 stations opted in: the line stays within 510 bytes, `/health` accounts for every one of them (followed or
  /// fell back), a fell-back one's settings answer says so and its messages are ACKed at once, as under `server`.
  @Test func fiftyStationsOptedInStayWithinTheLineAndEachIsFollowedOrFellBack() throws {
    let rig = try FallbackRig()
    defer { rig.stop() }
    let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    var stations: [String] = []
    for index in 0..<50 {
      let call = "KJ7" + String(letters[index / 26]) + String(letters[index % 26])
      stations.append(try rig.claim(call, ssid: index % 15 + 1))
    }
    for station in stations {
      let answer = try rig.settings(station, #""ackPolicy":"fallback","fallbackWait":5"#)
      #expect(answer.string("ownTransmissions") == "pending", "\(answer)")
    }
    try rig.startListener()
    var listener = JSONObject()
    let accounted = waitUntil(timeout: 10, interval: 0.1) {
      guard let health = try? rig.health(), let own = Self.own(health) else { return false }
      listener = health
      return (own.int("followed") ?? 0) + (own.int("fellBackCount") ?? 0) == 50
    }
    #expect(accounted, "\(listener)\n\(rig.log)")
    let own = try #require(Self.own(listener))
    let fellBack = own.strings("fellBack")
    #expect(fellBack.count == own.int("fellBackCount") && !fellBack.isEmpty, "\(own)")
    #expect(Set(fellBack).isSubset(of: stations), "\(own)")
    let followed = stations.filter { !fellBack.contains($0) }
    #expect(followed.count == own.int("followed") && !followed.isEmpty, "\(own)")

    let spec = rig.filter()
    let lineBytes = ("#filter " + spec).utf8.count + 2
    #expect(lineBytes <= 510 && listener.int("filterBytes") == lineBytes, "\(lineBytes): \(spec)")
    let senders = Set(Self.senders(of: spec))
    #expect(senders == Set(followed), "b/ part \(senders.sorted()) for followed \(followed)")
    // The oldest requests have precedence: every station that asked before the first one left out is followed.
    let firstLeftOut = try #require(stations.firstIndex { fellBack.contains($0) })
    #expect(stations[..<firstLeftOut].allSatisfy { followed.contains($0) }, "\(followed)")

    let first = try #require(fellBack.first)
    #expect(try rig.settings(first, #""fallbackWait":5"#).string("ownTransmissions") == "fellBack")
    #expect(try rig.settings(stations[0], #""fallbackWait":5"#).string("ownTransmissions") == "followed")
    #expect(
      waitUntil(timeout: 2, interval: 0.1) {
        (try? rig.health()).flatMap(Self.own)?.int("fellBackCount") == fellBack.count
      },
      "the settings posts changed the plan: \(rig.healthSummary)")
    // The fell-back station is ACKed as under `server`: at once.
    #expect(
      try rig.aprsis.inject([messageLine(from: Self.sender, to: first, text: "fell back", msgno: "50")]) == 1)
    #expect(try rig.aprsis.wait("transmitted", count: 1, timeout: 2), "no ACK:\n\(rig.log)")
    let padded = Self.sender.padding(toLength: 9, withPad: " ", startingAt: 0)
    #expect(try rig.acks().map(\.line) == ["\(first)>APZACL,TCPIP*::\(padded):ack50"])
    let metrics = try rig.stack.metrics().text
    #expect(
      metrics.contains("aprs_cloud_listener_own_transmissions_followed \(followed.count)"), "\(metrics)")
    #expect(
      metrics.contains("aprs_cloud_listener_own_transmissions_fell_back \(fellBack.count)"), "\(metrics)")
    #expect(rig.listener?.terminate() == 0)
  }

  /// The push of a held message waits for the decision unless `airAnswered` is `push` (``SettingsRig``: N0CALL-7's
  /// Android phone and the push fake): `none`, the radio answers: no push at all; `quiet`, the radio answers: one
  /// push right after its answer, low priority (FCM `normal`); no answer: the push at the wait's end, as any push
  /// (`high`), with the ACK; `push`: the push at once.
  @Test func theHeldPushWaitsForTheDecisionAsAirAnsweredSays() throws {
    let rig = try SettingsRig()
    defer { rig.stop() }
    let station = "N0CALL-7"
    let none = try rig.settings(#""ackPolicy":"fallback","fallbackWait":3,"airAnswered":"none""#)
    #expect(none.string("airAnswered") == "none", "\(none)")
    let followed = waitUntil(timeout: 10, interval: 0.05) {
      Self.senders(of: ((try? rig.aprsis.currentFilter()) ?? nil) ?? "").contains(station)
    }
    #expect(followed, "filter: \(String(describing: try? rig.aprsis.currentFilter()))\n\(rig.listener.log)")
    func priorities() throws -> [String] {
      try rig.push.endToEndRequests("fcm").compactMap {
        endToEndObject($0, "body", "message", "android")?.string("priority")
      }
    }

    // none: the radio answers, nothing is pushed (its push is dropped), nothing ACKed.
    let first = Date()
    #expect(
      try rig.aprsis.inject([messageLine(from: Self.sender, to: station, text: "one", msgno: "1")]) == 1)
    #expect(try rig.database.waitUntil { try $0.meta("messagesStored") == "1" }, "\(rig.listener.log)")
    #expect(try rig.aprsis.inject([radioAnswer(station, to: Self.sender, "ack", "1")]) == 1)
    let quietFor = Int((3 + 1.5 - Date().timeIntervalSince(first)) * 1000)
    #expect(
      try !rig.push.endToEndWait("fcm", count: 1, timeoutMs: max(100, quietFor)),
      "pushed: \(String(describing: try? priorities()))")
    #expect(try rig.database.int("SELECT count(*) FROM outbox") == 0)
    #expect(try rig.aprsis.transmitted().isEmpty)

    // quiet: one push right after the radio's answer, low priority.
    #expect(try rig.settings(#""airAnswered":"quiet""#).string("airAnswered") == "quiet")
    let second = Date()
    #expect(
      try rig.aprsis.inject([messageLine(from: Self.sender, to: station, text: "two", msgno: "2")]) == 1)
    #expect(try rig.database.waitUntil { try $0.meta("messagesStored") == "2" }, "\(rig.listener.log)")
    #expect(try !rig.push.endToEndWait("fcm", count: 1, timeoutMs: 500), "pushed before the decision")
    #expect(try rig.aprsis.inject([radioAnswer(station, to: Self.sender, "ack", "2")]) == 1)
    #expect(try rig.push.endToEndWait("fcm", count: 1, timeoutMs: 2_500), "no push:\n\(rig.listener.log)")
    #expect(
      Date().timeIntervalSince(second) < 3, "the push waited for the wait's end, not the radio's answer")
    #expect(try priorities() == ["normal"])

    // No answer: the push comes with the ACK at the wait's end, as any push.
    let third = Date()
    #expect(
      try rig.aprsis.inject([messageLine(from: Self.sender, to: station, text: "three", msgno: "3")]) == 1)
    #expect(try !rig.push.endToEndWait("fcm", count: 2, timeoutMs: 2_500), "pushed before the wait's end")
    #expect(try rig.push.endToEndWait("fcm", count: 2, timeoutMs: 3_000), "no push:\n\(rig.listener.log)")
    #expect(Date().timeIntervalSince(third) >= 3)
    #expect(try priorities() == ["normal", "high"])
    #expect(try rig.aprsis.ackLines() == ["N0CALL-7>APZACL,TCPIP*::OH7AA-1  :ack3"])

    // push: at once, before any decision.
    #expect(try rig.settings(#""airAnswered":"push""#).string("airAnswered") == "push")
    let fourth = Date()
    #expect(
      try rig.aprsis.inject([messageLine(from: Self.sender, to: station, text: "four", msgno: "4")]) == 1)
    #expect(try rig.push.endToEndWait("fcm", count: 3, timeoutMs: 2_500), "no push:\n\(rig.listener.log)")
    #expect(Date().timeIntervalSince(fourth) < 2.5)
    #expect(try priorities() == ["normal", "high", "high"])
    #expect(rig.listener.terminate() == 0)
  }
}
