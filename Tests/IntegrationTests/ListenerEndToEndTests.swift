import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The real `aprs-listener` against the APRS-IS fake, on a real database (issue 4's scenarios).
@Suite(.serialized) struct ListenerEndToEndTests {
  /// Messages to 1, 60 and 2000 registered stations all arrive and are served by `/v1/sync` through nginx and the
  /// responder. Every change of the set is one `#filter` line of at most 510 bytes on the same connection: the
  /// exact list for one station, prefixes for 60 and 2000 that the fake (matching as aprsc does) lets every
  /// station's messages through; what else the prefixes let through is dropped and counted.
  @Test func messagesTo1And60And2000StationsArriveAndAreServedBySync() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let database = SQLiteFile(path: stack.databasePath)
    let listener = try ListenerProcess(
      database: stack.databasePath, config: ListenerProcess.config(fake: fake))
    defer { listener.stop() }
    #expect(try fake.wait("login", count: 1), "no login:\n\(listener.log)")

    // One station, registered through the API: a live #filter update.
    let register = try stack.post(
      "/v1/register",
      json:
        #"{"callsign":"oh7lzb","ssid":0,"auth":"\#(aprsPasscode("OH7LZB"))","ackMessages":true,"wantHistory":false,"since":0}"#
    )
    #expect(register.status == 200, "\(register.text)")
    #expect(try fake.wait("filter", count: 1), "no #filter:\n\(listener.log)")
    #expect(try fake.currentFilter() == "g/OH7LZB/OH7LZB-0")
    #expect(
      try fake.inject([messageLine(from: "OH7AA-1", to: "OH7LZB", text: "Testing, 1 2 3", msgno: "42")]) == 1)
    #expect(try fake.wait("transmitted", count: 1), "no ACK:\n\(listener.log)")
    #expect(try fake.ackLines() == ["OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack42"])
    let one = try syncMany(stack, stations: ["OH7LZB"])
    #expect(one["OH7LZB"]?.map { $0.string("text") } == ["Testing, 1 2 3"])
    #expect(
      one["OH7LZB"]?.first?.string("peer") == "OH7AA-1" && one["OH7LZB"]?.first?.string("seqId") == "42")

    // 60 stations (59 more, registered at once): too many for an exact line, so prefixes, on the same
    // connection.
    let sixty = listenerStations(59)
    try database.register(sixty)
    #expect(try fake.wait("filter", count: 2, timeout: 10), "no #filter for 60:\n\(listener.log)")
    #expect(try database.waitUntil { try $0.meta("filterSize") == "60" })
    let sixtyFilter = try #require(try fake.currentFilter())
    #expect(sixtyFilter.utf8.count + 10 <= 510 && sixtyFilter.contains("*"), "\(sixtyFilter)")
    #expect(try database.meta("filterBytes") == String(sixtyFilter.utf8.count + 10))
    // The fake matches like aprsc: one delivery per message means the line covers every station.
    #expect(
      try fake.inject(
        sixty.enumerated().map { messageLine(from: "W1AW", to: $1, text: "hello \($0)", msgno: nil) }) == 59)
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 60 })
    let synced60 = try syncMany(stack, stations: sixty)
    #expect(synced60.allSatisfy { $0.value.count == 1 && $0.value.first?.string("peer") == "W1AW" })

    // 2000 stations: still one line, still the same connection.
    let many = listenerStations(1940, prefix: "KX")
    try database.register(many)
    #expect(try database.waitUntil(timeout: 20) { try $0.meta("filterSize") == "2000" }, "\(listener.log)")
    #expect(try fake.wait("filter", count: 3, timeout: 10))
    let everyone = ["OH7LZB"] + sixty + many
    let toEveryone = everyone.enumerated().map {
      messageLine(from: "VE3XYZ-5", to: $1, text: "to all \($0)", msgno: "\($0 % 99_999)")
    }
    #expect(try fake.inject(toEveryone.shuffled()) == 2000, "the filter misses stations")
    // Noise: positions (not delivered by a g/ filter), messages to others (delivered when a prefix covers
    // them, then dropped by the listener), a bulletin.
    var noise = (0..<200).map { "NOISE\($0 % 10)>APRS,TCPIP*:!4903.50N/07201.75W-position \($0)" }
    noise += ["VE3XYZ-5>APRS,TCPIP*::BLN1     :a bulletin"]
    try fake.inject(noise)
    // Neighbours of registered calls without their SSIDs (KX0005 beside KX0005-6): what prefixes let through.
    let overDelivered = try fake.inject(
      (0..<50).map { messageLine(from: "VE3XYZ-5", to: "KX00\($0 + 10)", text: "not for us", msgno: "1") })
    let allStored = try database.waitUntil(timeout: 30) {
      try $0.int("SELECT count(*) FROM messages") == 60 + 2000
    }
    let storedCount = try database.int("SELECT count(*) FROM messages")
    #expect(allStored, "stored \(storedCount)")
    let synced = try syncMany(stack, stations: everyone)
    #expect(synced.count == 2000)
    let missing = synced.filter { station, messages in !messages.contains { $0.string("peer") == "VE3XYZ-5" }
    }
    #expect(missing.isEmpty, "no message for \(missing.keys.prefix(5))")
    #expect(try database.int("SELECT count(*) FROM outbox") == 2060)
    #expect(overDelivered > 0, "the KX prefixes let some messages to others through")
    #expect(
      try database.waitUntil { (Int(try $0.meta("notForUs") ?? "0") ?? 0) == overDelivered },
      "notForUs \((try? database.meta("notForUs")) ?? nil ?? "-") of \(overDelivered)")
    // Never a reconnect, never a line APRS-IS would drop.
    #expect(try fake.logins() == 1)
    #expect(try fake.clients().last?.int("filters_dropped") == 0)

    // /health shows the listener's state.
    let health = try #require(try stack.get("/health").jsonObject)
    guard case .object(let state)? = health["listener"] else {
      Issue.record("no listener object")
      return
    }
    #expect(
      state.bool("running") == true && state.bool("connected") == true && state.bool("verified") == true)
    let line = try #require(try fake.currentFilter())
    #expect(state.int("filterSize") == 2000 && state.int("filterBytes") == line.utf8.count + 10)
    #expect(state.int("filterEntries") == line.dropFirst(2).split(separator: "/").count)
    // Exact entries, less the `CALL-0` beside each exact bare call (the same station).
    let exactEntries = line.dropFirst(2).split(separator: "/").filter { !$0.hasSuffix("*") }
    let aliases = exactEntries.filter { $0.hasSuffix("-0") && exactEntries.contains($0.dropLast(2)) }
    #expect(state.int("filterExactStations") == exactEntries.count - aliases.count)
    #expect(state.string("filterMode") == nil)
    #expect(state.bool("receiveOnly") == false)
    #expect(listener.terminate() == 0)
  }

  /// 100,000 registered stations: the listener reads them once at start, logs in with one filter of at most 510
  /// bytes that covers them all, and follows registrations and unregistrations with `#filter` lines, never a
  /// reconnect.
  @Test func a100000StationFilterFitsOneLineAndFollowsChanges() throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var generator = SplitMix64(seed: 1)
    let stations = realisticStations(100_000, using: &generator)
    try database.register(stations)
    let listener = try ListenerProcess(database: database.path, config: ListenerProcess.config(fake: fake))
    defer { listener.stop() }
    #expect(try fake.wait("login", count: 1, timeout: 20), "no login:\n\(listener.log)")
    let filter = try #require(try fake.currentFilter())
    #expect(filter.utf8.count + 10 <= 510, "\(filter)")
    #expect(try database.waitUntil { try $0.meta("filterSize") == "100000" })
    // Every station's messages get through: a sample of 2,000 spread over the whole set.
    let sample = stride(from: 0, to: stations.count, by: 50).map { stations[$0] }
    #expect(
      try fake.inject(sample.map { messageLine(from: "W1AW", to: $0, text: "to \($0)", msgno: nil) })
        == sample.count)
    #expect(
      try database.waitUntil(timeout: 20) { try $0.int("SELECT count(*) FROM messages") == sample.count })
    // Changes: a new station far from the others, one gone; each a #filter line, covered at once.
    try database.register(["9Z9ZZZ-9"])
    try database.unregister(stations[0])
    #expect(
      try database.waitUntil { try $0.meta("filterSize") == "100000" && fake.currentFilter() != filter })
    #expect(try fake.inject([messageLine(from: "W1AW", to: "9Z9ZZZ-9", text: "welcome", msgno: "1")]) == 1)
    #expect(
      try database.waitUntil { try $0.int("SELECT count(*) FROM messages WHERE station = '9Z9ZZZ-9'") == 1 })
    #expect(try fake.logins() == 1 && fake.clients().last?.int("filters_dropped") == 0)
    #expect(try database.meta("reconnects") == "0")
    #expect(listener.log.contains("stations=100000"), "one full read at start")
    #expect(listener.terminate() == 0)
  }

  /// Stations churn: 60 changes, a registration or an unregistration through the API every 250 ms (about 17 s:
  /// the minute of one change a second the issue names, compressed, with the listener's registration poll at
  /// 100 ms). Every change reaches the filter as a `#filter` line within the poll, each new station's messages get
  /// through, and the listener never reconnects.
  @Test func churningRegistrationsNeverReconnect() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let database = SQLiteFile(path: stack.databasePath)
    let base = listenerStations(120, prefix: "CH")
    let listener = try ListenerProcess(
      database: stack.databasePath, config: ListenerProcess.config(fake: fake))
    defer { listener.stop() }
    #expect(try fake.wait("login", count: 1), "no login:\n\(listener.log)")
    try database.register(base)
    #expect(try database.waitUntil { try $0.meta("filterSize") == "120" })
    var registered = Set(base)
    let started = Date()
    var changes = 0
    var checked = 0
    while changes < 60 {
      let address = churnStation(changes)
      let parts = address.split(separator: "-")
      let body =
        #"{"callsign":"\#(parts[0])","ssid":\#(parts[1]),"auth":"\#(aprsPasscode(address))","since":0}"#
      if changes % 2 == 0 {
        #expect(try stack.post("/v1/register", json: body).status == 200)
        registered.insert(address)
      } else {
        let gone = base[changes]
        let goneParts = gone.split(separator: "-")
        let goneBody =
          #"{"callsign":"\#(goneParts[0])","ssid":\#(goneParts[1]),"auth":"\#(aprsPasscode(gone))"}"#
        #expect(try stack.post("/v1/unregister", json: goneBody).status == 200)
        registered.remove(gone)
      }
      changes += 1
      if changes % 10 == 0 {
        // The newest station gets its messages within the poll's time.
        let newest = churnStation(changes - 2)
        var attempt = 0
        #expect(
          waitUntil(timeout: 5) {
            attempt += 1
            let line = messageLine(from: "W1AW", to: newest, text: "hi \(changes).\(attempt)", msgno: nil)
            return (try? fake.inject([line])) == 1
          }, "\(newest) not covered")
        checked += 1
      }
      usleep(250_000)
    }
    #expect(checked == 6)
    #expect(
      try database.waitUntil { try $0.meta("filterSize") == String(registered.count) },
      "filterSize \((try? database.meta("filterSize")) ?? nil ?? "-") of \(registered.count)")
    let client = try #require(try fake.clients().last)
    #expect(try fake.wait("connect", count: 2, timeout: 0.5) == false, "a second connection")
    #expect(try fake.logins() == 1)
    #expect(client.int("filters_dropped") == 0)
    #expect(try database.meta("reconnects") == "0")
    let lines = client.strings("filters_received").count
    #expect(lines >= 30, "\(lines) #filter lines for 60 changes")
    let seconds = Int(Date().timeIntervalSince(started))
    print("churn: \(changes) changes in \(seconds) s, \(lines) #filter lines, 0 reconnects")
    #expect(listener.terminate() == 0)
  }

  /// The station the churn test registers at its `index`th change (`CH0XA-1`, `CH1XA-2`, …).
  private func churnStation(_ index: Int) -> String {
    let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    return "CH\(index % 10)X\(letters[index / 10 % 26])-\(index % 15 + 1)"
  }

  /// A sender that retransmits: one stored copy, one outbox row, an ACK for each copy the 30 s rule lets through
  /// (shortened to 1.5 s here, with the fake's clock moved past its own 30 s duplicate window between copies);
  /// no ACK for a station with ackMessages false.
  @Test func retransmissionsAreStoredOnceAndAckedPerTheIntervalRule() throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try database.register(["OH7LZB"], ackMessages: true)
    try database.register(["N0CALL-7"], ackMessages: false)
    // A slow banner and a keepalive before the logresp, as aprsc may do.
    try fake.command(["cmd": "set", "keepalive_before_logresp": true, "banner_delay": 0.3])
    let listener = try ListenerProcess(
      database: database.path,
      config: ListenerProcess.config(fake: fake, extraListener: "ackInterval = 1500ms\n"))
    defer { listener.stop() }
    #expect(try fake.wait("login", count: 1))

    let copy = messageLine(from: "OH7AA-1", to: "OH7LZB", text: "Are you there?", msgno: "7")
    let started = Date()
    try fake.inject([copy])
    #expect(try fake.wait("transmitted", count: 1))
    // Second copy at once (the fake's clock moved so APRS-IS passes it): stored already, ACKed 0.0 s ago: no ACK.
    try fake.advance(31)
    try fake.inject([copy])
    #expect(try database.waitUntil { try $0.meta("duplicates") == "1" })
    // The message to a station without ackMessages is stored but never ACKed; its ACK would come before the
    // sentinel's.
    try fake.inject([messageLine(from: "OH7AA-1", to: "N0CALL-7", text: "no ack please", msgno: "8")])
    try fake.inject([messageLine(from: "OH7AA-1", to: "OH7LZB", text: "sentinel", msgno: "9")])
    #expect(try fake.wait("transmitted", count: 2))
    #expect(
      try fake.ackLines() == ["OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack7", "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack9"])
    // A third copy after the interval: ACKed again (and APRS-IS forwards it: not a duplicate for the fake).
    let elapsed = Date().timeIntervalSince(started)
    if elapsed < 1.6 { usleep(useconds_t((1.6 - elapsed) * 1_000_000)) }  // the rule is about time itself
    try fake.advance(31)
    try fake.inject([copy])
    #expect(try fake.wait("transmitted", count: 3))
    let transmitted = try fake.transmitted()
    #expect(transmitted.map { $0.string("line") }.last == "OH7LZB>APZACL,TCPIP*::OH7AA-1  :ack7")
    #expect(transmitted.allSatisfy { $0.bool("duplicate") == false && $0.string("dropped") == nil })
    #expect(try database.int("SELECT count(*) FROM messages WHERE msgno = '7'") == 1)
    #expect(
      try database.int(
        "SELECT count(*) FROM outbox JOIN messages ON messages.id = outbox.message_id WHERE msgno = '7'") == 1
    )
    #expect(try database.int("SELECT count(*) FROM messages WHERE station = 'N0CALL-7'") == 1)
    #expect(try database.waitUntil { try $0.meta("acksSent") == "3" && $0.meta("duplicates") == "2" })
    #expect(listener.terminate() == 0)
  }

  /// An unverified login (wrong passcode) and a receive-only one (no login): messages stored, nothing sent, and
  /// the state says so.
  @Test(arguments: [("N0CALL-10", 12345), (nil, nil)] as [(String?, Int?)])
  func unverifiedAndReceiveOnlyLoginsStoreButNeverAck(login: String?, passcode: Int?) throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try database.register(["OH7LZB"], ackMessages: true)
    let listener = try ListenerProcess(
      database: database.path, config: ListenerProcess.config(fake: fake, login: login, passcode: passcode))
    defer { listener.stop() }
    #expect(try fake.wait("login", count: 1))
    let client = try #require(try fake.clients().first)
    #expect(client.bool("verified") == false)
    if login == nil {
      let name = try #require(client.string("login"))
      #expect(name.hasPrefix("ACLD") && name.count == 8, "login \(name)")
      #expect(listener.log.contains("receive-only"))
    } else {
      #expect(listener.log.contains("login unverified"))
    }
    #expect(try database.waitUntil { try $0.meta("state") == "online" && $0.meta("receiveOnly") == "1" })
    try fake.inject([messageLine(from: "OH7AA-1", to: "OH7LZB", text: "hi", msgno: "1")])
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 1 })
    #expect(try database.waitUntil { try $0.meta("messagesStored") == "1" })
    usleep(200_000)  // an ACK would have been written within milliseconds of the commit
    #expect(try fake.transmitted().isEmpty)
    #expect(try database.meta("acksSent") == "0")
    #expect(listener.terminate() == 0)
  }

  /// Registering and unregistering while connected changes the live filter within seconds.
  @Test func registrationChangesReachTheFilterWithinSeconds() throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try database.register(["OH7LZB"])
    let listener = try ListenerProcess(
      database: database.path,
      config: ListenerProcess.config(fake: fake, extraListener: "registrationPoll = 1s\n"))
    defer { listener.stop() }
    #expect(try fake.wait("login", count: 1))
    #expect(try fake.currentFilter() == "g/OH7LZB/OH7LZB-0")
    var started = Date()
    try database.register(["N0CALL-7"])
    #expect(try fake.wait("filter", count: 1, timeout: 5))
    #expect(try fake.currentFilter() == "g/N0CALL-7/OH7LZB/OH7LZB-0")
    #expect(Date().timeIntervalSince(started) < 3)
    started = Date()
    try database.unregister("OH7LZB")
    #expect(try fake.wait("filter", count: 2, timeout: 5))
    #expect(try fake.currentFilter() == "g/N0CALL-7")
    #expect(Date().timeIntervalSince(started) < 3)
    // A change that leaves the set as it was (a heartbeat) sends nothing.
    try database.register(["N0CALL-7"])
    #expect(try fake.wait("filter", count: 3, timeout: 1.5) == false)
    #expect(try fake.logins() == 1)
    #expect(listener.terminate() == 0)
  }

  /// The server closes the connection, then goes silent without closing (watchdog shortened to 2 s): the listener
  /// reconnects each time with its filter, and a message repeated across the reconnects is stored once.
  @Test func reconnectsAfterCloseAndSilenceWithTheFilterAndNothingStoredTwice() throws {
    let fake = try FakeAPRSIS(keepalive: 1)
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try database.register(["OH7LZB", "N0CALL-7"], ackMessages: true)
    let listener = try ListenerProcess(
      database: database.path, config: ListenerProcess.config(fake: fake, extraAPRSIS: "watchdog = 2s\n"))
    defer { listener.stop() }
    #expect(try fake.wait("login", count: 1))
    let message = messageLine(from: "OH7AA-1", to: "OH7LZB", text: "across reconnects", msgno: "11")
    try fake.inject([message])
    #expect(try fake.wait("transmitted", count: 1))

    try fake.command(["cmd": "close_all"])
    #expect(try fake.wait("login", count: 2, timeout: 10), "no reconnect after close:\n\(listener.log)")
    #expect(try fake.clients().last?.string("filter") == "g/N0CALL-7/OH7LZB/OH7LZB-0")
    try fake.advance(31)
    try fake.inject([message])
    #expect(try database.waitUntil { try $0.meta("duplicates") == "1" })

    try fake.command(["cmd": "silence", "on": true])
    let silencedAt = Date()
    #expect(try fake.wait("login", count: 3, timeout: 10), "no reconnect after silence:\n\(listener.log)")
    #expect(Date().timeIntervalSince(silencedAt) >= 0.9)  // 2 s after the last keepalive, sent <= 1 s before
    #expect(listener.log.contains("no line for 2 s"))
    #expect(
      try fake.clients().last { $0.bool("silenced") == false }?.string("filter")
        == "g/N0CALL-7/OH7LZB/OH7LZB-0")
    try fake.command(["cmd": "silence", "on": false])
    try fake.advance(31)
    try fake.inject([message, messageLine(from: "OH7AA-1", to: "N0CALL-7", text: "after", msgno: "12")])
    #expect(
      try database.waitUntil {
        try $0.int("SELECT count(*) FROM messages") == 2 && $0.meta("duplicates") == "2"
      })
    #expect(try database.int("SELECT count(*) FROM messages WHERE msgno = '11'") == 1)
    #expect(try database.waitUntil { try $0.meta("reconnects") == "2" })
    #expect(listener.terminate() == 0)
  }

  /// Garbage lines, 600-byte lines and binary bytes: skipped and counted, the connection and the process live on.
  @Test func garbageIsSkippedCountedAndSurvived() throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try database.register(["OH7LZB"])
    let listener = try ListenerProcess(database: database.path, config: ListenerProcess.config(fake: fake))
    defer { listener.stop() }
    #expect(try fake.wait("login", count: 1))
    let answer = try fake.command([
      "cmd": "garbage", "preset": "standard",
      "lines": [
        String(repeating: "A", count: 600), "OH7AA>APRS::OH7LZB   :" + String(repeating: "x", count: 700),
      ],
      "hex": ["4f4837414100ff80fe3a3a", "ffffffffffff", "23fffe00"],
    ])
    #expect(answer.bool("ok") == true, "\(answer)")
    try fake.inject([messageLine(from: "OH7AA-1", to: "OH7LZB", text: "still here", msgno: "1")])
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 1 })
    #expect(try database.waitUntil { (Int(try $0.meta("tooLong") ?? "0") ?? 0) >= 3 })
    #expect(try database.waitUntil { (Int(try $0.meta("invalidLines") ?? "0") ?? 0) >= 6 })
    #expect(listener.isRunning)
    #expect(try database.meta("state") == "online")
    #expect(try fake.logins() == 1)
    #expect(listener.terminate() == 0)
  }

  /// `kill -9` at random moments while messages flow and senders retry: after a restart, every message that was
  /// ever ACKed is stored exactly once (ACK only after commit), and every message is stored in the end.
  @Test func killMinus9WhileMessagesFlowLosesNoAckedMessage() throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try database.register(["OH7LZB", "KJ7ABC-7"], ackMessages: true)
    let config = ListenerProcess.config(fake: fake, extraListener: "ackInterval = 300ms\nleaseTtl = 1s\n")
    var listener = try ListenerProcess(database: database.path, config: config, arguments: ["--standby"])
    defer { listener.stop() }
    #expect(try fake.wait("login", count: 1))

    let messages = (1...60).map { index in
      (
        msgno: String(index),
        line: messageLine(
          from: "W\(index % 4)XYZ-\(index % 3 + 1)", to: index % 2 == 0 ? "OH7LZB" : "KJ7ABC-7",
          text: "msg \(index)",
          msgno: String(index))
      )
    }
    var acked = Set<String>()
    var generator = SystemRandomNumberGenerator()
    var kills = 0
    for round in 0..<25 {
      let pending = messages.filter { !acked.contains($0.msgno) }.shuffled(using: &generator)
      if pending.isEmpty { break }
      try fake.advance(31)  // past APRS-IS's duplicate window: every retry gets through
      // In the first rounds, kill the listener twice at random points of the flow.
      let killPoints =
        round < 4 ? Set((0..<2).map { _ in Int.random(in: 0..<pending.count, using: &generator) }) : []
      for (index, message) in pending.enumerated() {
        _ = try fake.inject([message.line])
        if killPoints.contains(index) && listener.isRunning {
          usleep(UInt32.random(in: 0...5_000, using: &generator))
          listener.killHard()
          kills += 1
          listener = try ListenerProcess(database: database.path, config: config, arguments: ["--standby"])
        }
      }
      // Whoever runs now is logged in and had time to ACK what it stored.
      #expect(
        waitUntil(timeout: 10) { (try? fake.clients().contains { $0.bool("logged_in") == true }) == true })
      usleep(300_000)
      for line in try fake.ackLines() {
        if let range = line.range(of: ":ack") { acked.insert(String(line[range.upperBound...])) }
      }
    }
    #expect(kills >= 2, "only \(kills) kills")
    // Every ACKed message is stored exactly once.
    let rows = try database.run("SELECT msgno, count(*) FROM messages GROUP BY station, peer, msgno;")
    var counts: [String: Int] = [:]
    for row in rows.split(separator: "\n") {
      let columns = row.split(separator: "|")
      counts[String(columns[0])] = Int(columns[1])
    }
    for msgno in acked {
      #expect(counts[msgno] == 1, "ACKed message \(msgno) stored \(counts[msgno] ?? 0) times")
    }
    #expect(counts.values.allSatisfy { $0 == 1 })
    #expect(acked.count == messages.count, "\(messages.count - acked.count) never ACKed")
    #expect(try database.int("SELECT count(*) FROM messages") == messages.count)
    #expect(try database.int("SELECT count(*) FROM outbox") == messages.count)
    #expect(listener.terminate() == 0)
  }

  /// On one host the lock file decides: a second listener on the same database waits for it (logging once)
  /// instead of exiting, and takes over at once when the first is killed (its lease has not lapsed: a holder on
  /// this host that lost the lock is dead). SIGTERM while waiting exits 0.
  @Test func aSecondListenerOnThisHostWaitsForTheLockAndTakesOverAtOnce() throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try database.register(["OH7LZB"])
    let config = ListenerProcess.config(fake: fake, extraListener: "leaseTtl = 60s\n")
    let first = try ListenerProcess(database: database.path, config: config, label: "first")
    defer { first.stop() }
    #expect(try fake.wait("login", count: 1))
    #expect(FileManager.default.fileExists(atPath: database.path + ".listener-lock"))
    let lockMode = try FileManager.default.attributesOfItem(atPath: database.path + ".listener-lock")[
      .posixPermissions]
    #expect(lockMode as? Int == 0o600)

    let second = try ListenerProcess(database: database.path, config: config, label: "second")
    defer { second.stop() }
    let waiting = "another aprs-listener on this host is running on this database"
    #expect(second.waitForLog(waiting), "\(second.log)")
    let third = try ListenerProcess(
      database: database.path, config: config, arguments: ["--standby"], label: "third")
    defer { third.stop() }
    #expect(third.waitForLog(waiting), "\(third.log)")
    usleep(300_000)
    #expect(second.isRunning && third.isRunning)
    #expect(second.log.components(separatedBy: waiting).count == 2, "logged once:\n\(second.log)")
    #expect(try fake.logins() == 1)
    // SIGTERM while waiting: exits 0 at once, having touched nothing.
    #expect(third.terminate(timeout: 5) == 0)

    first.killHard()
    let killedAt = Date()
    #expect(try fake.wait("login", count: 2, timeout: 10), "the second did not take over:\n\(second.log)")
    #expect(Date().timeIntervalSince(killedAt) < 2, "it did not wait for the 60 s lease to lapse")
    #expect(
      second.log.contains("took over the lease of a listener on this host that is gone"), "\(second.log)")
    #expect(try database.waitUntil { try $0.meta("state") == "online" })
    try fake.inject([messageLine(from: "OH7AA-1", to: "OH7LZB", text: "to the successor", msgno: "3")])
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 1 })
    #expect(second.terminate() == 0)
    #expect(try database.int("SELECT count(*) FROM listener_lease") == 0)
  }

  /// A listener on another host (its lease in the shared file, simulated here) keeps the old rule: a second
  /// listener exits with a clear message; with --standby it waits and takes over when the lease lapses. SIGTERM
  /// releases the lease at once.
  @Test func aLeaseHeldOnAnotherHostIsRefusedOrAwaitedWithStandby() throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try database.register(["OH7LZB"])
    let config = ListenerProcess.config(fake: fake)
    let expiresAt = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
    try database.run(
      "INSERT INTO listener_lease (id, holder, acquired_at, expires_at) VALUES (1, 'elsewhere:1:a', 0, \(expiresAt));"
    )

    let second = try ListenerProcess(database: database.path, config: config, label: "second")
    defer { second.stop() }
    #expect(second.waitForExit(timeout: 15) == 1)
    #expect(second.log.contains("another aprs-listener is running on this database"), "\(second.log)")
    #expect(second.log.contains("--standby"))

    let standby = try ListenerProcess(
      database: database.path, config: config, arguments: ["--standby"], label: "standby")
    defer { standby.stop() }
    #expect(standby.waitForLog("standby: another listener holds the lease"))
    #expect(try fake.logins() == 0)
    // The other host's listener dies: its lease lapses (brought forward to 1.5 s from now), then the standby
    // takes over.
    let lapse = Date().addingTimeInterval(1.5)
    try database.run("UPDATE listener_lease SET expires_at = \(Int64(lapse.timeIntervalSince1970 * 1000));")
    #expect(try fake.wait("login", count: 1, timeout: 10), "the standby did not take over:\n\(standby.log)")
    #expect(Date().timeIntervalSince(lapse) >= -0.05)  // it waited for the lease to lapse
    #expect(try database.waitUntil { try $0.meta("state") == "online" })
    try fake.inject([messageLine(from: "OH7AA-1", to: "OH7LZB", text: "to the successor", msgno: "3")])
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 1 })

    #expect(standby.terminate() == 0)
    #expect(standby.log.contains("aprs-listener stopped"))
    #expect(try database.int("SELECT count(*) FROM listener_lease") == 0)
    #expect(try database.meta("connected") == "0")
  }

  /// Outgoing tracking: `b/` entries in the filter, and a registered station's own messages stored as sent.
  @Test func outgoingTrackingStoresSentMessages() throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try database.register(["OH7LZB"], ackMessages: true)
    let listener = try ListenerProcess(
      database: database.path,
      config: ListenerProcess.config(fake: fake, extraAPRSIS: "trackOutgoing = true\n"))
    defer { listener.stop() }
    #expect(try fake.wait("login", count: 1))
    #expect(try fake.currentFilter() == "g/OH7LZB/OH7LZB-0 b/OH7LZB/OH7LZB-0")
    try fake.inject([
      messageLine(from: "OH7LZB", to: "W1AW", text: "from my radio", msgno: "5"),
      messageLine(from: "W1AW", to: "OH7LZB", text: "the answer", msgno: "6"),
    ])
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 2 })
    #expect(
      try database.run("SELECT direction, peer, text FROM messages ORDER BY id;")
        == "sent|W1AW|from my radio\nreceived|W1AW|the answer\n")
    #expect(try database.int("SELECT count(*) FROM outbox") == 1)  // no push for one's own message
    #expect(try fake.wait("transmitted", count: 1))
    #expect(try fake.ackLines() == ["OH7LZB>APZACL,TCPIP*::W1AW     :ack6"])
    #expect(listener.terminate() == 0)
  }

  /// A listener whose lease was taken stops at once with status 1 and leaves the successor's state alone.
  @Test func aListenerThatLosesItsLeaseStops() throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let listener = try ListenerProcess(database: database.path, config: ListenerProcess.config(fake: fake))
    defer { listener.stop() }
    #expect(try fake.wait("login", count: 1))
    #expect(try database.waitUntil { try $0.meta("connected") == "1" })
    let future = Int64(Date().timeIntervalSince1970 * 1000) + 600_000
    try database.run("UPDATE listener_lease SET holder = 'thief:1', expires_at = \(future);")
    #expect(listener.waitForExit(timeout: 10) == 1)
    #expect(listener.log.contains("the listener lease was taken by another listener"))
    #expect(try database.run("SELECT holder FROM listener_lease;") == "thief:1\n")
  }

  /// The command line: help, usage errors and configuration errors.
  @Test func commandLine() throws {
    let binary = try TestPaths.executable("aprs-listener")
    let help = try runProcess(binary, ["--help"])
    #expect(help.status == 0 && help.stdoutText.contains("usage: aprs-listener"))
    let unknown = try runProcess(binary, ["--bogus"])
    #expect(unknown.status == 2 && unknown.stderrText.contains("unknown option '--bogus'"))
    let directory = try makeTemporaryDirectory("listener-cli")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try "[aprsis]\nlogin = N0CALL\n".write(toFile: directory + "/bad.ini", atomically: true, encoding: .utf8)
    let bad = try runProcess(binary, ["--config", directory + "/bad.ini", "--db", directory + "/x.sqlite"])
    #expect(bad.status == 2 && bad.stderrText.contains("aprsis.login"), "\(bad.stderrText)")
    let badEnvironment = try runProcess(
      binary, ["--db", directory + "/x.sqlite"],
      environment: ["APRS_CLOUD_APRSIS_SERVERS": "no-port", "PATH": "/usr/bin:/bin"])
    #expect(badEnvironment.status == 2 && badEnvironment.stderrText.contains("APRS_CLOUD_APRSIS_SERVERS"))
  }

  /// A refused login (server full): the listener backs off, retries, and gets in once the server accepts it.
  @Test func aRefusedLoginIsRetriedWithBackoff() throws {
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try fake.command(["cmd": "set", "refuse_logins": true])
    let listener = try ListenerProcess(database: database.path, config: ListenerProcess.config(fake: fake))
    defer { listener.stop() }
    #expect(listener.waitForLog("login refused"), "\(listener.log)")
    #expect(try fake.wait("connect", count: 2, timeout: 10))  // it came back after its backoff
    #expect(try fake.logins() == 0)
    try fake.command(["cmd": "set", "refuse_logins": false])
    #expect(try fake.wait("login", count: 1, timeout: 10), "\(listener.log)")
    #expect(try database.waitUntil { try $0.meta("state") == "online" })
    #expect(listener.terminate() == 0)
  }
}
