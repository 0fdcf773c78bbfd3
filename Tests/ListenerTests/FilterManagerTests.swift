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

  /// A spec of exactly `length` characters (`g/KJ0000-1/KJ0001-2/…`, cut), for the answer vectors.
  private func spec(length: Int) -> String {
    var text = "g/"
    var index = 0
    while text.utf8.count < length {
      let number = String(index)
      text += "KJ" + String(repeating: "0", count: max(0, 4 - number.count)) + number + "-\(index % 15 + 1)/"
      index += 1
    }
    return String(text.utf8.prefix(length))!
  }

  @Test(arguments: [254, 255, 256, 510])
  func aprscQuotesTheFirst255CharactersAndThatCutConfirms(length: Int) {
    let sent = spec(length: length)
    #expect(sent.utf8.count == length)
    // What aprsc 2.1.21 answers: `# filter <first 255 bytes> active`.
    let quoted = String(sent.utf8.prefix(255))!
    #expect(FilterManager.quotedAnswer(for: sent) == quoted)
    #expect(FilterManager.answerConfirms(quoted, sent: sent))
    #expect(FilterManager.answerConfirms(sent, sent: sent))  // a server that echoes it whole
    // Any other cut, or a changed character inside the quote, is a real mismatch.
    #expect(!FilterManager.answerConfirms(String(quoted.dropLast()), sent: sent))
    #expect(!FilterManager.answerConfirms(String(quoted.dropFirst()), sent: sent))
    if length > 256 {
      #expect(!FilterManager.answerConfirms(String(sent.utf8.prefix(256))!, sent: sent))
    }
    var changed = Array(quoted.utf8)
    changed[changed.count / 2] =
      changed[changed.count / 2] == UInt8(ascii: "X") ? UInt8(ascii: "Y") : UInt8(ascii: "X")
    #expect(!FilterManager.answerConfirms(String(decoding: changed, as: UTF8.self), sent: sent))
    #expect(!FilterManager.answerConfirms("", sent: sent))
  }

  @Test func aprscSanitizesTheQuoteLikeItsStatusCopy() {
    // Control and non-ASCII bytes come back as `_` (aprsc's sanitize_ascii_string), blanks around are trimmed.
    #expect(FilterManager.quotedAnswer(for: "g/AB\u{E9}C\tD") == "g/AB__C_D")
    #expect(FilterManager.quotedAnswer(for: "g/ABC") == "g/ABC")
  }

  @Test func theQuotedAnswerOfALongLineConfirmsItAndAppliesTheWholeSpec() {
    var manager = FilterManager(login: "N0CALL-10")
    _ = manager.loginFilter()
    manager.loggedIn()
    let line = filterLine(stationAddresses(200))
    #expect(line.spec.utf8.count > 255)
    manager.setDesired(line)
    #expect(manager.reconcile(now: 0) == .send(line: line.line, spec: line.spec))
    let answer = manager.answer(spec: String(line.spec.utf8.prefix(255))!)
    #expect(answer == .confirmed(spec: line.spec))
    #expect(manager.applied == line.spec)
    #expect(manager.reconcile(now: 1) == .none)  // in effect: nothing to resend
    // The next change answered with a cut of something else is still a mismatch.
    let next = filterLine(stationAddresses(199))
    manager.setDesired(next)
    #expect(manager.reconcile(now: 2) == .send(line: next.line, spec: next.spec))
    let wrong = String(filterLine(stationAddresses(201).reversed()).spec.utf8.prefix(254))! + "Q"
    #expect(manager.answer(spec: wrong) == .mismatch(expected: next.spec, received: wrong))
    #expect(manager.applied == nil)
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
