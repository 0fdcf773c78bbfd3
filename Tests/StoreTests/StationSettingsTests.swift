import Store
import Testing

/// The pure cores of station settings: the call lists (a bare call blocks every SSID), quiet hours across
/// midnight with a UTC offset, the push-hold decision, the partial update, and the device-ACK window.
@Suite struct StationSettingsTests {
  /// 2024-01-01 00:00:00 UTC, epoch ms.
  static let midnightUTC: Int64 = 1_704_067_200_000

  /// Epoch ms of `hour:minute` UTC on 2024-01-01 (hours may pass 24: the next day).
  static func utc(_ hour: Int, _ minute: Int = 0) -> Int64 {
    midnightUTC + Int64(hour * 60 + minute) * 60_000
  }

  // MARK: Call lists

  @Test func aBareCallMatchesEverySSIDAndAnSSIDOnlyItself() throws {
    let list = try CallList(validating: ["kj7abc", " OH7AA-1 "], field: "blocked")
    #expect(list.calls == ["KJ7ABC", "OH7AA-1"])
    for sender in ["KJ7ABC", "KJ7ABC-7", "kj7abc-15", "KJ7ABC-AB"] {
      #expect(list.matches(sender), "\(sender)")
    }
    #expect(list.matches("OH7AA-1"))
    for sender in ["OH7AA", "OH7AA-10", "OH7AA-2", "KJ7ABCD", "KJ7AB", "N0CALL"] {
      #expect(!list.matches(sender), "\(sender)")
    }
    #expect(!CallList.empty.matches("KJ7ABC"))
  }

  @Test func ssidZeroIsTheBareStationOnly() throws {
    let list = try CallList(validating: ["KJ7ABC-0"], field: "blocked")
    #expect(list.matches("KJ7ABC") && list.matches("KJ7ABC-0"))
    #expect(!list.matches("KJ7ABC-7"))
  }

  @Test func repeatsAreDroppedAndTheOrderKept() throws {
    let list = try CallList(validating: ["N0CALL-7", "kj7abc", "n0call-7", "KJ7ABC"], field: "blocked")
    #expect(list.calls == ["N0CALL-7", "KJ7ABC"])
  }

  @Test func aHundredCallsAtMost() throws {
    let hundred = (0..<100).map { "KJ\($0)" }
    #expect(try CallList(validating: hundred, field: "blocked").calls.count == 100)
    #expect(throws: SettingsError(field: "quietBypass", reason: "holds 101 calls; at most 100")) {
      try CallList(validating: hundred + ["N0CALL"], field: "quietBypass")
    }
  }

  @Test(arguments: [
    "", " ", "-7", "KJ7ABC-", "KJ7ABC-123", "KJ7-ABC-1", "KJ7 ABC", "KJ7ABC*", "ÄBC", "TOOLONGCALL",
    "N0CALL-10X",
    "KJ7ABCDE-1",
  ])
  func badCallsAreRefusedNamingTheEntry(entry: String) {
    #expect {
      try CallList(validating: ["N0CALL", entry], field: "blocked")
    } throws: { error in
      (error as? SettingsError)?.field == "blocked[1]"
    }
  }

  // MARK: Quiet hours

  @Test func quietHoursAcrossMidnightWithAPositiveOffset() throws {
    // 22:00-07:00 local at UTC+2: 20:00-05:00 UTC.
    let quiet = try QuietHours(start: 22 * 60, end: 7 * 60, utcOffsetMinutes: 120)
    #expect(!quiet.contains(Self.utc(19, 59)))
    #expect(quiet.contains(Self.utc(20, 0)))
    #expect(quiet.contains(Self.utc(23, 30)))
    #expect(quiet.contains(Self.utc(24 + 4, 59)))
    #expect(!quiet.contains(Self.utc(24 + 5, 0)))
    #expect(!quiet.contains(Self.utc(12, 0)))
    #expect(quiet.localMinute(at: Self.utc(23, 30)) == 90)
  }

  @Test func quietHoursAcrossMidnightWithANegativeOffset() throws {
    // 23:30-06:15 local at UTC-7: 06:30-13:15 UTC.
    let quiet = try QuietHours(start: 23 * 60 + 30, end: 6 * 60 + 15, utcOffsetMinutes: -420)
    #expect(!quiet.contains(Self.utc(6, 29)))
    #expect(quiet.contains(Self.utc(6, 30)))
    #expect(quiet.contains(Self.utc(13, 14)))
    #expect(!quiet.contains(Self.utc(13, 15)))
    #expect(!quiet.contains(Self.utc(0, 0)))
  }

  @Test func quietHoursWithinOneDay() throws {
    // 13:00-14:00 local at UTC+5:30.
    let quiet = try QuietHours(start: 13 * 60, end: 14 * 60, utcOffsetMinutes: 330)
    #expect(quiet.contains(Self.utc(7, 30)))
    #expect(!quiet.contains(Self.utc(8, 30)))
    #expect(!quiet.contains(Self.utc(7, 29)))
  }

  @Test func quietHoursValuesAreChecked() {
    let cases: [(Int, Int, Int, String)] = [
      (-1, 60, 0, "quietHours.start"), (1440, 60, 0, "quietHours.start"), (0, 1440, 0, "quietHours.end"),
      (60, -5, 0, "quietHours.end"), (60, 60, 0, "quietHours.end"),
      (0, 60, -721, "quietHours.utcOffsetMinutes"),
      (0, 60, 841, "quietHours.utcOffsetMinutes"),
    ]
    for (start, end, offset, field) in cases {
      #expect {
        try QuietHours(start: start, end: end, utcOffsetMinutes: offset)
      } throws: { error in
        (error as? SettingsError)?.field == field
      }
    }
    #expect((try? QuietHours(start: 0, end: 1439, utcOffsetMinutes: 840)) != nil)
    #expect((try? QuietHours(start: 1439, end: 0, utcOffsetMinutes: -720)) != nil)
  }

  // MARK: The push decision

  @Test func muteHoldsEveryPushUntilItsTimeEvenFromBypassCalls() throws {
    let settings = StationSettings(
      mutedUntil: Self.utc(12), quietBypass: try CallList(validating: ["KJ7ABC"], field: "quietBypass"))
    #expect(settings.pushHold(from: "OH7AA-1", now: Self.utc(11, 59)) == .muted)
    #expect(settings.pushHold(from: "KJ7ABC-7", now: Self.utc(11, 59)) == .muted)
    #expect(settings.pushHold(from: "OH7AA-1", now: Self.utc(12)) == nil)
  }

  @Test func quietHoursHoldAllButBypassCalls() throws {
    let settings = StationSettings(
      quietHours: try QuietHours(start: 22 * 60, end: 7 * 60, utcOffsetMinutes: 120),
      quietBypass: try CallList(validating: ["KJ7ABC", "OH7AA-1"], field: "quietBypass"))
    let night = Self.utc(23)
    #expect(settings.pushHold(from: "N0CALL", now: night) == .quietHours)
    #expect(settings.pushHold(from: "OH7AA-2", now: night) == .quietHours)
    #expect(settings.pushHold(from: "KJ7ABC-9", now: night) == nil)
    #expect(settings.pushHold(from: "OH7AA-1", now: night) == nil)
    #expect(settings.pushHold(from: "N0CALL", now: Self.utc(12)) == nil)
    #expect(StationSettings.defaults.pushHold(from: "N0CALL", now: night) == nil)
  }

  @Test func mutedUntilIsChecked() throws {
    #expect(try StationSettings.validMutedUntil(0) == 0)
    #expect(try StationSettings.validMutedUntil(StationSettings.maximumMutedUntil) > 0)
    #expect(throws: SettingsError.self) { try StationSettings.validMutedUntil(-1) }
    #expect(throws: SettingsError.self) {
      try StationSettings.validMutedUntil(StationSettings.maximumMutedUntil + 1)
    }
  }

  // MARK: Partial updates

  @Test func anUpdateChangesOnlyItsFields() throws {
    let quiet = try QuietHours(start: 60, end: 120, utcOffsetMinutes: 0)
    let blocked = try CallList(validating: ["KJ7ABC"], field: "blocked")
    let start = StationSettings(blocked: blocked, mutedUntil: 5, quietHours: quiet, ackPolicy: .server)
    #expect(start.applying(StationSettingsUpdate()) == start)
    #expect(StationSettingsUpdate().isEmpty)
    let muted = start.applying(StationSettingsUpdate(mutedUntil: 9))
    #expect(muted == StationSettings(blocked: blocked, mutedUntil: 9, quietHours: quiet, ackPolicy: .server))
    let off = start.applying(StationSettingsUpdate(quietHours: .some(nil), ackPolicy: .device))
    #expect(off == StationSettings(blocked: blocked, mutedUntil: 5, quietHours: nil, ackPolicy: .device))
    #expect(!StationSettingsUpdate(quietHours: .some(nil)).isEmpty)
    let cleared = start.applying(StationSettingsUpdate(blocked: .empty))
    #expect(cleared.blocked.isEmpty && cleared.quietHours == quiet)
    #expect(!cleared.blocks("KJ7ABC-7") && start.blocks("KJ7ABC-7"))
  }

  // MARK: The device-ACK window

  @Test func aPullWithinThirtyMinutesOfArrivalEarnsTheAck() {
    let arrived = Self.utc(10)
    #expect(DeviceAckRule.earnsAck(arrivedAt: arrived, pulledAt: arrived + 1))
    #expect(DeviceAckRule.earnsAck(arrivedAt: arrived, pulledAt: arrived + 30 * 60_000))
    #expect(!DeviceAckRule.earnsAck(arrivedAt: arrived, pulledAt: arrived + 30 * 60_000 + 1))
    #expect(DeviceAckRule.oldestAckedArrival(pulledAt: arrived + 30 * 60_000) == arrived)
    #expect(DeviceAckRule.stillWorthSending(pulledAt: arrived, now: arrived + 30 * 60_000))
    #expect(!DeviceAckRule.stillWorthSending(pulledAt: arrived, now: arrived + 30 * 60_000 + 1))
  }
}
