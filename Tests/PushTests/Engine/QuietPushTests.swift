import Foundation
import JSON
import Testing

@testable import Push
@testable import Store

/// Mute and quiet hours at the moment a push would be sent: the pure split, then the push sender against the
/// fake providers with the injected clock (quiet hours across midnight at UTC+3, a bypass sender, mute on and off),
/// and the count the next push carries.
@Suite(.serialized) struct QuietPushTests {
  /// An outbox entry for N0CALL-7 from `peer`.
  private func entry(_ id: Int64, from peer: String) -> OutboxEntry {
    OutboxEntry(
      id: id, station: "N0CALL-7", messageID: id,
      message: StoredMessage(direction: .received, peer: peer, text: "m\(id)", msgno: nil, timestamp: id),
      createdAt: 0, attempts: 0, nextAttemptAt: 0)
  }

  @Test func theSplitHoldsAllWhileMutedAndAllButBypassCallsInQuietHours() throws {
    let batch = PushBatch(
      station: "N0CALL-7",
      entries: [entry(1, from: "OH7AA-1"), entry(2, from: "KJ7ABC-7"), entry(3, from: "W5AGO")])
    let bypass = try CallList(validating: ["KJ7ABC"], field: "quietBypass")
    let always = try QuietHours(start: 0, end: 1439, utcOffsetMinutes: 0)
    let quiet = QuietSplit.split(
      batch, settings: StationSettings(quietHours: always, quietBypass: bypass), now: 60_000)
    #expect(quiet.held.map(\.id) == [1, 3] && quiet.batch?.ids == [2] && quiet.reason == .quietHours)
    let muted = QuietSplit.split(
      batch, settings: StationSettings(mutedUntil: 60_001, quietBypass: bypass), now: 60_000)
    #expect(muted.held.map(\.id) == [1, 2, 3] && muted.batch == nil && muted.reason == .muted)
    let free = QuietSplit.split(batch, settings: .defaults, now: 60_000)
    #expect(free.held.isEmpty && free.batch == batch && free.reason == nil)
    // The claim governs its keyed devices only: keyless ones get every message as without it.
    #expect(quiet.guestEntries == batch.entries && muted.guestEntries == batch.entries)
  }

  /// A claim governs only the devices it brought or adopted (docs/design.md "Who may do what"): the owner's mute
  /// holds the owner's keyed phone and a keyless phone registered after the claim, while the keyless phone the
  /// station had before the claim is pushed as it was.
  @Test func aMuteHoldsTheDevicesTheClaimBroughtAndTheEarlierKeylessOneIsPushedAsBefore() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    let start = rig.clock.now()
    try rig.register("N0CALL-7", [(.android, "fcm-earlier")], at: start - 60_000)
    _ = try rig.database.claimStation(
      "N0CALL-7", keyHash: String(repeating: "a", count: 64), client: "192.0.2.1", now: start)
    try rig.register("N0CALL-7", [(.android, "fcm-owner")], at: start + 1, keyed: true)
    try rig.register("N0CALL-7", [(.android, "fcm-after")], at: start + 2)
    try rig.database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(mutedUntil: start + 3_600_000), now: start)
    try rig.start()
    try rig.store("N0CALL-7", ["while muted"], from: "OH7AA-1")
    #expect(try rig.fake.wait("fcm", count: 1, status: 200), "\(rig.log())")
    #expect(try rig.eventuallyEmpty())
    #expect(try !rig.fake.wait("fcm", count: 2, timeoutMs: 1_000), "a device the claim governs got a push")
    let request = try #require(try rig.fake.requests("fcm").last)
    #expect(request.string(at: ["body", "message", "token"]) == "fcm-earlier")
    #expect(request.string(at: ["body", "message", "data", "fromCall"]) == "OH7AA-1")
  }

  /// Moves the rig's clock forward to the next time the local clock at `offset` minutes from UTC shows
  /// `minute` (of the day), plus `extraMs`.
  private func advance(_ rig: PushRig, toLocalMinute minute: Int, offset: Int, extraMs: Int64 = 0) {
    let now = rig.clock.now()
    let quiet = try! QuietHours(start: minute, end: (minute + 1) % 1440, utcOffsetMinutes: offset)
    let local = Int64(quiet.localMinute(at: now))
    let intoMinute = now % 60_000
    var ahead = (Int64(minute) - local) * 60_000 - intoMinute
    if ahead <= 0 { ahead += 86_400_000 }
    rig.clock.advance(by: ahead + extraMs)
  }

  @Test func quietHoursAcrossMidnightWithAnOffsetHoldPushesButABypassSendersAndCountWhatWasHeld() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")], keyed: true)
    // The sender's clock runs up to a day ahead of the fake's: its OAuth assertions' iat must still pass.
    try rig.fake.set(#"{"skewMs":172800000}"#)
    // 22:00-06:00 local time at UTC+3, KJ7ABC (every SSID) let through.
    try rig.database.updateStationSettings(
      "N0CALL-7",
      StationSettingsUpdate(
        quietHours: .some(try QuietHours(start: 22 * 60, end: 6 * 60, utcOffsetMinutes: 180)),
        quietBypass: try CallList(validating: ["KJ7ABC"], field: "quietBypass")),
      now: rig.clock.now())
    try rig.start()
    advance(rig, toLocalMinute: 23 * 60 + 30, offset: 180, extraMs: 5_000)
    try rig.store("N0CALL-7", ["before midnight"], from: "OH7AA-1")
    #expect(try rig.eventuallyEmpty(), "the held push is done, not left pending")
    // Past local midnight, still quiet.
    rig.clock.advance(by: 60 * 60_000)
    try rig.store("N0CALL-7", ["after midnight"], from: "OH7AA-1")
    #expect(try rig.eventuallyEmpty())
    #expect(try !rig.fake.wait("fcm", count: 1, timeoutMs: 1_000))
    #expect(rig.log().contains("push held"), "\(rig.log())")
    // The bypass sender gets through, and its push counts the two held messages the phone has not pulled.
    try rig.store("N0CALL-7", ["urgent"], from: "KJ7ABC-7")
    #expect(try rig.fake.wait("fcm", count: 1, status: 200), "\(rig.log())")
    var request = try #require(try rig.fake.requests("fcm").last)
    #expect(request.string(at: ["body", "message", "data", "fromCall"]) == "KJ7ABC-7")
    #expect(request.string(at: ["body", "message", "data", "count"]) == "3")
    // After the window: everyone again, with the right count.
    advance(rig, toLocalMinute: 6 * 60, offset: 180, extraMs: 1_000)
    try rig.store("N0CALL-7", ["good morning"], from: "OH7AA-1")
    #expect(try rig.fake.wait("fcm", count: 2, status: 200))
    request = try #require(try rig.fake.requests("fcm").last)
    #expect(request.string(at: ["body", "message", "data", "fromCall"]) == "OH7AA-1")
    #expect(request.string(at: ["body", "message", "data", "count"]) == "4")
    #expect(try rig.eventuallyEmpty())
  }

  @Test func muteHoldsEveryPushUntilItEndsOrIsTurnedOff() throws {
    let rig = try PushRig(messaging: "coalesceWindow = 2s", ios: false)
    defer { rig.close() }
    try rig.register("N0CALL-7", [(.android, "fcm-token-1")], keyed: true)
    try rig.start()
    // A burst that is still coalescing when the mute starts is held too: the decision is made at send time.
    try rig.store("N0CALL-7", ["coalescing"], from: "OH7AA-1")
    try rig.database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(mutedUntil: rig.clock.now() + 3_600_000), now: rig.clock.now())
    try rig.store("N0CALL-7", ["muted"], from: "KJ7ABC-7")
    #expect(try rig.eventuallyEmpty())
    #expect(try !rig.fake.wait("fcm", count: 1, timeoutMs: 2_500))
    // Unmuted: the next message is pushed, counting the held ones (the phone has not synced).
    try rig.database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(mutedUntil: 0), now: rig.clock.now())
    try rig.store("N0CALL-7", ["unmuted"], from: "W5AGO")
    #expect(try rig.fake.wait("fcm", count: 1, status: 200))
    var request = try #require(try rig.fake.requests("fcm").last)
    #expect(request.string(at: ["body", "message", "data", "count"]) == "3")
    #expect(request.string(at: ["body", "message", "data", "fromCall"]) == "W5AGO")
    // A mute that ends by itself: held while it lasts, pushed after.
    try rig.database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(mutedUntil: rig.clock.now() + 60_000), now: rig.clock.now())
    _ = try rig.database.sync(station: "N0CALL-7", since: 0, now: rig.clock.now())
    try rig.store("N0CALL-7", ["short mute"], from: "OH7AA-1")
    #expect(try rig.eventuallyEmpty())
    rig.clock.advance(by: 61_000)
    try rig.store("N0CALL-7", ["mute over"], from: "OH7AA-1")
    #expect(try rig.fake.wait("fcm", count: 2, status: 200))
    request = try #require(try rig.fake.requests("fcm").last)
    #expect(request.string(at: ["body", "message", "data", "count"]) == "2")
  }
}
