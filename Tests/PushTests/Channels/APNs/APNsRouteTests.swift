import Store
import Testing

@testable import Push

/// The APNs environment of each push as a pure decision, and the watch that notices a wrong `production`.
@Suite struct APNsRouteTests {
  @Test func aDeviceGoesFirstWhereItWasAcceptedElseWhereProductionSays() {
    #expect(APNsRoute.first(stored: nil, production: true) == .production)
    #expect(APNsRoute.first(stored: nil, production: false) == .sandbox)
    #expect(APNsRoute.first(stored: .sandbox, production: true) == .sandbox)
    #expect(APNsRoute.first(stored: .production, production: false) == .production)
  }

  @Test func badDeviceTokenIsTriedOnceInTheOtherEnvironmentThenDeleted() {
    let refused = PushDecision.gone(reason: "400 BadDeviceToken", refreshedBefore: nil)
    #expect(
      APNsRoute.next(after: refused, badDeviceToken: true, environment: .production, triedOther: false)
        == .tryOther(.sandbox))
    #expect(
      APNsRoute.next(after: refused, badDeviceToken: true, environment: .sandbox, triedOther: false)
        == .tryOther(.production))
    guard
      case .done(.gone(let reason, nil)) = APNsRoute.next(
        after: refused, badDeviceToken: true, environment: .sandbox, triedOther: true)
    else {
      Issue.record("refused by both: not deleted")
      return
    }
    #expect(reason.contains("production") && reason.contains("sandbox"), "\(reason)")
  }

  @Test func everyOtherAnswerIsItsOwnDecision() {
    let decisions: [PushDecision] = [
      .delivered, .gone(reason: "410 Unregistered", refreshedBefore: 5), .retry(at: 9, reason: "503"),
      .giveUp(reason: "413 PayloadTooLarge"), .stopProvider(reason: "InvalidProviderToken"),
    ]
    for decision in decisions {
      for triedOther in [false, true] {
        #expect(
          APNsRoute.next(
            after: decision, badDeviceToken: false, environment: .sandbox, triedOther: triedOther)
            == .done(decision))
      }
    }
  }

  @Test func theAcceptingEnvironmentIsRememberedOnlyWhenItChanges() {
    #expect(APNsRoute.remember(stored: nil, accepted: .production) == .production)
    #expect(APNsRoute.remember(stored: nil, accepted: .sandbox) == .sandbox)
    #expect(APNsRoute.remember(stored: .sandbox, accepted: .sandbox) == nil)
    #expect(APNsRoute.remember(stored: .sandbox, accepted: .production) == .production)
    let device = DeviceRecord(
      token: "ab", station: "N0CALL", platform: .ios, registeredAt: 0, refreshedAt: 0,
      apnsEnvironment: .production)
    var job = DeliveryJob(id: 1, purpose: .batch(1), recipient: .device(device))
    #expect(job.environmentToRemember(after: .delivered) == nil, "never sent")
    job.attempt.apnsEnvironment = .sandbox
    #expect(job.environmentToRemember(after: .delivered) == .sandbox)
    #expect(job.environmentToRemember(after: .giveUp(reason: "x")) == nil)
    job.attempt.apnsEnvironment = .production
    #expect(job.environmentToRemember(after: .delivered) == nil)
  }

  // MARK: The production setting

  @Test func aProductionSettingEveryDeviceContradictsIsAWarningNamingBothEnvironments() throws {
    var watch = APNsEnvironmentWatch(production: true)
    #expect(watch.warning == nil)
    watch.accepted(token: "a", by: .sandbox)
    watch.accepted(token: "a", by: .sandbox)
    #expect(watch.warning == nil, "one device is not every device")
    watch.accepted(token: "b", by: .sandbox)
    let warning = try #require(watch.warning)
    #expect(warning.contains("production = true") && warning.contains("set production = false"), "\(warning)")
    #expect(warning.contains("APNs production") && warning.contains("sandbox accepts"), "\(warning)")
    // One device the configured environment accepts: a mixed fleet, a valid setup, for good.
    watch.accepted(token: "c", by: .production)
    #expect(watch.warning == nil)
    for token in ["d", "e", "f"] { watch.accepted(token: token, by: .sandbox) }
    #expect(watch.warning == nil)
  }

  @Test func theSandboxSettingIsWatchedTheSameWay() throws {
    var watch = APNsEnvironmentWatch(production: false)
    watch.accepted(token: "a", by: .production)
    watch.accepted(token: "b", by: .production)
    let warning = try #require(watch.warning)
    #expect(warning.contains("production = false") && warning.contains("APNs sandbox refuses"), "\(warning)")
    #expect(warning.contains("set production = true"), "\(warning)")
  }
}

/// Uniform non-token failures stop a provider; scattered ones, one device's, and outages do not.
@Suite struct FailureWatchTests {
  @Test func theSameFailureForTheWholeWindowStopsTheProvider() throws {
    var watch = FailureWatch(windowMs: 600_000)
    var reason: String?
    for minute in 0...10 {
      reason = watch.failed(
        kind: "400 INVALID_ARGUMENT", token: minute % 2 == 0 ? "a" : "b",
        detail: "Request contains an invalid argument.",
        now: Int64(minute) * 60_000)
      if minute < 10 { #expect(reason == nil, "minute \(minute)") }
    }
    let stop = try #require(reason)
    #expect(
      stop.contains("400 INVALID_ARGUMENT") && stop.contains("10 min") && stop.contains("11 pushes"),
      "\(stop)")
  }

  @Test func aSuccessOrATokenAnswerOrAnotherFailureStartsOver() {
    var watch = FailureWatch(windowMs: 600_000)
    for minute in 0..<9 {
      _ = watch.failed(kind: "400 X", token: "t\(minute)", detail: "", now: Int64(minute) * 60_000)
    }
    watch.succeeded()
    #expect(watch.failed(kind: "400 X", token: "a", detail: "", now: 11 * 60_000) == nil)
    for minute in 12..<20 {
      _ = watch.failed(kind: "400 X", token: "t\(minute)", detail: "", now: Int64(minute) * 60_000)
    }
    #expect(watch.failed(kind: "400 Y", token: "a", detail: "", now: 22 * 60_000) == nil, "another kind")
    #expect(watch.failed(kind: "400 Y", token: "b", detail: "", now: 25 * 60_000) == nil)
  }

  @Test func oneDeviceOrFewPushesNeverStopTheProvider() {
    var single = FailureWatch(windowMs: 600_000)
    for minute in 0...60 {
      #expect(
        single.failed(kind: "400 BadTopic", token: "only", detail: "", now: Int64(minute) * 60_000) == nil)
    }
    var few = FailureWatch(windowMs: 600_000)
    for (index, minute) in [0, 30, 60, 90].enumerated() {
      #expect(
        few.failed(kind: "400 BadTopic", token: "t\(index)", detail: "", now: Int64(minute) * 60_000) == nil)
    }
  }
}
