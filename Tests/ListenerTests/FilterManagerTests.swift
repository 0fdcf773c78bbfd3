import APRS
import Store
import Testing

@testable import Listener

@Suite struct FilterManagerTests {
  @Test(arguments: [(1, FilterMode.live), (60, .login), (2000, .fullFeed)])
  func stationCountDecidesTheMode(count: Int, mode: FilterMode) {
    let plan = FilterManager.plan(for: manyStations(count), trackOutgoing: false)
    #expect(plan.mode == mode)
    #expect(plan.addressees.count == count)
    var manager = FilterManager(login: "N0CALL-10")
    let value1 = manager.setDesired(plan)
    #expect(value1)
    #expect(manager.desiredPort == (mode == .fullFeed ? .fullFeed : .user))
    let login = manager.loginFilter(port: manager.desiredPort)
    #expect(login == (mode == .fullFeed ? nil : plan.spec))
  }

  @Test func liveUpdateOnlyWhenTheSetChangedAndTheAnswerIsChecked() {
    var manager = FilterManager(login: "n0call-10")
    let value2 = manager.loginFilter(port: .user)
    #expect(value2 == "g/N0CALL-10")  // no stations: the login call only
    manager.loggedIn()
    let value3 = manager.reconcile(port: .user, now: 0)
    #expect(value3 == .none)
    let plan = FilterManager.plan(
      for: [LiveStation(address: "OH7LZB", ackMessages: true)], trackOutgoing: false)
    let value4 = manager.setDesired(plan)
    #expect(value4)
    let value5 = manager.setDesired(plan)
    #expect(!value5)  // unchanged
    let value6 = manager.reconcile(port: .user, now: 10)
    #expect(value6 == .sendLive(line: bytes("#filter g/OH7LZB\r\n"), spec: "g/OH7LZB"))
    let value7 = manager.reconcile(port: .user, now: 11)
    #expect(value7 == .none)  // waiting for the answer
    #expect(!manager.answerOverdue(now: 14, timeoutMs: 5))
    #expect(manager.answerOverdue(now: 15, timeoutMs: 5))
    let value8 = manager.answer(spec: "g/OH7LZB")
    #expect(value8 == .confirmed(spec: "g/OH7LZB"))
    #expect(manager.applied == "g/OH7LZB")
    let value9 = manager.reconcile(port: .user, now: 20)
    #expect(value9 == .none)  // in effect: nothing to resend
    let value10 = manager.answer(spec: "g/OH7LZB")
    #expect(value10 == .unexpected(spec: "g/OH7LZB"))
  }

  @Test func aDifferentAnswerIsAMismatch() {
    var manager = FilterManager(login: "N0CALL-10")
    _ = manager.loginFilter(port: .user)
    manager.loggedIn()
    manager.setDesired(
      FilterManager.plan(for: [LiveStation(address: "OH7LZB", ackMessages: true)], trackOutgoing: false))
    _ = manager.reconcile(port: .user, now: 0)
    let value11 = manager.answer(spec: "g/OH7LZ")
    #expect(value11 == .mismatch(expected: "g/OH7LZB", received: "g/OH7LZ"))
    #expect(manager.applied == nil)
    // Unknown filter in effect: reconciling sends it again.
    if case .sendLive = manager.reconcile(port: .user, now: 1) {} else { Issue.record("expected a resend") }
  }

  @Test func loginModeAndFullFeedNeedReconnects() {
    var manager = FilterManager(login: "N0CALL-10")
    _ = manager.loginFilter(port: .user)
    manager.loggedIn()
    manager.setDesired(FilterManager.plan(for: manyStations(60), trackOutgoing: false))
    guard case .reconnect = manager.reconcile(port: .user, now: 0) else {
      Issue.record("login mode must reconnect")
      return
    }
    let spec = manager.loginFilter(port: .user)
    manager.loggedIn()
    #expect(manager.applied == spec)
    let value12 = manager.reconcile(port: .user, now: 1)
    #expect(value12 == .none)
    manager.setDesired(FilterManager.plan(for: manyStations(2000), trackOutgoing: false))
    guard case .reconnect = manager.reconcile(port: .user, now: 2) else {
      Issue.record("the full feed needs a reconnect")
      return
    }
    let value13 = manager.loginFilter(port: .fullFeed)
    #expect(value13 == nil)
    manager.loggedIn()
    let value14 = manager.reconcile(port: .fullFeed, now: 3)
    #expect(value14 == .none)
    manager.setDesired(FilterManager.plan(for: manyStations(3), trackOutgoing: false))
    guard case .reconnect = manager.reconcile(port: .fullFeed, now: 4) else {
      Issue.record("leaving the full feed needs a reconnect")
      return
    }
  }

  @Test func trackingAddsSenderEntries() {
    let stations = [
      LiveStation(address: "OH7LZB", ackMessages: false), LiveStation(address: "N0CALL-7", ackMessages: true),
    ]
    let plan = FilterManager.plan(for: stations, trackOutgoing: true)
    #expect(plan.spec == "g/N0CALL-7/OH7LZB b/N0CALL-7/OH7LZB")
    #expect(FilterManager.plan(for: stations, trackOutgoing: false).spec == "g/N0CALL-7/OH7LZB")
  }

  @Test func invalidAddressesAreLeftOut() {
    let plan = FilterManager.plan(
      for: [
        LiveStation(address: "OH7LZB", ackMessages: false),
        LiveStation(address: "BAD CALL!", ackMessages: false),
      ],
      trackOutgoing: false)
    #expect(plan.addressees == ["OH7LZB"])
  }
}
