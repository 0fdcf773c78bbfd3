import APRS
import Store
import Testing

@testable import Listener

@Suite struct FilterManagerTests {
  @Test(arguments: [1, 60, 2_000, 100_000])
  func everySetSizeIsOneLineOfAtMost510BytesInTheLoginLineAndOnFilterLines(count: Int) {
    let line = filterLine(stationAddresses(count))
    #expect(line.byteCount <= FilterPlanner.maximumLineLength)
    // Its answer fits what the connection reads as one line, so it can be checked.
    var answer: [LineSplitter.Piece] = []
    var splitter = LineSplitter()
    splitter.feed(bytes("# filter \(line.spec) active\r\n")) { answer.append($0) }
    #expect(answer == [.line(bytes("# filter \(line.spec) active"))])
    #expect(line.addressees.exactStations + line.addressees.prefixStations == count)
    var manager = FilterManager(login: "N0CALL-10")
    let changed = manager.setDesired(line)
    let login = manager.loginFilter()
    #expect(changed && login == line.spec)
    #expect(manager.desiredLineBytes == line.byteCount)
    manager.loggedIn()
    let nothing = manager.reconcile(now: 0)
    #expect(nothing == .none)  // the login line put it in effect
    let other = filterLine(count == 1 ? ["OH7LZB"] : ["OH7LZB", "N0CALL-7"])
    manager.setDesired(other)
    let step = manager.reconcile(now: 1)
    #expect(step == .send(line: other.line, spec: other.spec))
  }

  @Test func liveUpdateOnlyWhenTheSetChangedAndTheAnswerIsChecked() {
    var manager = FilterManager(login: "n0call-10")
    let value2 = manager.loginFilter()
    #expect(value2 == "g/N0CALL-10")  // no stations: the login call only
    #expect(manager.desiredLineBytes == "#filter g/N0CALL-10\r\n".utf8.count)
    manager.loggedIn()
    let value3 = manager.reconcile(now: 0)
    #expect(value3 == .none)
    let plan = filterLine(["OH7LZB"])
    let value4 = manager.setDesired(plan)
    #expect(value4)
    let value5 = manager.setDesired(plan)
    #expect(!value5)  // unchanged
    let value6 = manager.reconcile(now: 10)
    #expect(value6 == .send(line: bytes("#filter g/OH7LZB/OH7LZB-0\r\n"), spec: "g/OH7LZB/OH7LZB-0"))
    let value7 = manager.reconcile(now: 11)
    #expect(value7 == .none)  // waiting for the answer
    #expect(!manager.answerOverdue(now: 14, timeoutMs: 5))
    #expect(manager.answerOverdue(now: 15, timeoutMs: 5))
    let value8 = manager.answer(spec: "g/OH7LZB/OH7LZB-0")
    #expect(value8 == .confirmed(spec: "g/OH7LZB/OH7LZB-0"))
    #expect(manager.applied == "g/OH7LZB/OH7LZB-0")
    let value9 = manager.reconcile(now: 20)
    #expect(value9 == .none)  // in effect: nothing to resend
    let value10 = manager.answer(spec: "g/OH7LZB/OH7LZB-0")
    #expect(value10 == .unexpected(spec: "g/OH7LZB/OH7LZB-0"))
    // Back to no stations: the login call's spec replaces the filter.
    manager.setDesired(.empty)
    let back = manager.reconcile(now: 30)
    #expect(back == .send(line: bytes("#filter g/N0CALL-10\r\n"), spec: "g/N0CALL-10"))
  }

  @Test func aDifferentAnswerIsAMismatch() {
    var manager = FilterManager(login: "N0CALL-10")
    _ = manager.loginFilter()
    manager.loggedIn()
    manager.setDesired(filterLine(["OH7LZB"]))
    _ = manager.reconcile(now: 0)
    let value11 = manager.answer(spec: "g/OH7LZ")
    #expect(value11 == .mismatch(expected: "g/OH7LZB/OH7LZB-0", received: "g/OH7LZ"))
    #expect(manager.applied == nil)
    // Unknown filter in effect: reconciling sends it again.
    if case .send = manager.reconcile(now: 1) {} else { Issue.record("expected a resend") }
  }

  @Test func trackingAddsSenderEntries() {
    var planner = FilterPlanner()
    for address in ["OH7LZB", "N0CALL-7"] {
      planner.insert(address: address)
      planner.insert(address: address, into: .senders)
    }
    #expect(planner.plan().spec == "g/N0CALL-7/OH7LZB/OH7LZB-0 b/N0CALL-7/OH7LZB/OH7LZB-0")
    #expect(filterLine(["OH7LZB", "N0CALL-7"]).spec == "g/N0CALL-7/OH7LZB/OH7LZB-0")
  }

  @Test func invalidAddressesAreLeftOut() {
    var loader = FilterPlanner.Loader()
    let good = loader.add(address: "OH7LZB")
    let bad = loader.add(address: "BAD CALL!")
    #expect(good && !bad && loader.rejected == 1)
    #expect(loader.planner(trackingSenders: false).plan().addressees.entries == ["OH7LZB", "OH7LZB-0"])
  }
}
