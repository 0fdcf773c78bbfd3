import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The real `aprs-listener` against the real aprsc 2.1.21 (``RealAPRSC``), not the fake: what the fake might get
/// wrong about the server shows up here (docs/design.md "Real APRS-IS in the tests").
@Suite(.serialized, .enabled(if: RealAPRSC.isAvailable, RealAPRSC.skipNote)) struct RealAPRSCListenerTests {
  /// The listener's APRS-IS login: a call of its own (aprsc drops packets from `N0CALL`), verified.
  static let login = "W7LSTN-10"
  /// Another station's app on the same server: sends messages, receives the listener's ACKs.
  static let peer = "W1AW"

  static func listenerConfig(_ aprsc: RealAPRSC) -> String {
    ListenerProcess.config(aprsisPort: aprsc.port, login: login, passcode: aprsPasscode(login))
  }

  /// Waits until the listener is logged in on aprsc, verified; returns its connection's address as aprsc sees it
  /// (`addr_rem`: a new connection has a new port) and aprsc's connection count then.
  static func waitForListener(_ aprsc: RealAPRSC, _ listener: ListenerProcess) throws -> (
    address: String, connects: Int
  ) {
    let online = try waitUntil(timeout: 20, interval: 0.1) { try listenerAddress(aprsc) != nil }
    try #require(online, "the listener did not log in on aprsc:\n\(listener.log)\n\(aprsc.log)")
    return (try #require(try listenerAddress(aprsc)), try aprsc.connects())
  }

  /// The listener's verified connection on aprsc (`addr_rem`), nil when it has none.
  static func listenerAddress(_ aprsc: RealAPRSC) throws -> String? {
    try aprsc.clients().first { $0.string("username") == login && $0.int("verified") == 1 }?.string(
      "addr_rem")
  }

  static func occurrences(_ text: String, in log: String) -> Int {
    log.components(separatedBy: text).count - 1
  }

  /// 200 registered stations (a filter far longer than the 255 characters aprsc quotes back in its
  /// `# filter … active` answer) and a minute's churn compressed into about 20 s: 60 registrations and
  /// unregistrations, each a `#filter` line on the open connection. aprsc's cut answer confirms each one: not
  /// one reconnect, counted on aprsc's side and the listener's. Then messages to stations the filter's first 255
  /// characters do not name still arrive.
  @Test func twoHundredStationsAndAMinuteOfChurnWithoutAReconnect() throws {
    let aprsc = try RealAPRSC()
    defer { aprsc.stop() }
    let (directory, database) = try makeListenerDatabase("aprsc-churn")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var generator = SplitMix64(seed: 255)
    let everyone = realisticStations(240, using: &generator)
    var registered = Array(everyone.prefix(200))
    var waiting = Array(everyone.dropFirst(200))
    try database.register(registered)
    let listener = try ListenerProcess(database: database.path, config: Self.listenerConfig(aprsc))
    defer { listener.stop() }
    let (address, connects) = try Self.waitForListener(aprsc, listener)
    #expect(try database.waitUntil { try $0.meta("filterSize") == "200" })
    let filterBytes = Int(try database.meta("filterBytes") ?? "") ?? 0
    #expect(filterBytes - 10 > 255, "the 200 stations' filter is \(filterBytes) bytes")

    // 60 changes, one every ~330 ms: two registrations, then an unregistration.
    var removed: [String] = []
    for change in 0..<60 {
      if change % 3 == 2 {
        let station = registered.remove(at: (change * 7) % registered.count)
        try database.unregister(station)
        removed.append(station)
      } else {
        let station = waiting.removeFirst()
        try database.register([station])
        registered.append(station)
      }
      usleep(330_000)
    }
    #expect(try database.waitUntil { try $0.meta("filterSize") == String(registered.count) })
    // Every #filter line sent got its answer (aprsc answers at once); none was taken for a mismatch.
    let answered = waitUntil(timeout: 15, interval: 0.1) {
      let log = listener.log
      return Self.occurrences(#"msg="filter update sent""#, in: log)
        == Self.occurrences(#"msg="filter active""#, in: log)
    }
    let log = listener.log
    let updates = Self.occurrences(#"msg="filter update sent""#, in: log)
    #expect(answered, "\(updates) #filter lines, not all answered:\n\(log)")
    #expect(updates >= 20, "only \(updates) #filter lines for 60 changes")
    #expect(!log.contains("does not match"), "\(log)")
    #expect(try aprsc.connects() == connects, "aprsc saw the listener connect again:\n\(aprsc.log)")
    #expect(try Self.listenerAddress(aprsc) == address, "not the same connection:\n\(aprsc.log)")
    #expect(try database.meta("reconnects") ?? "0" == "0")
    // aprsc's status page shows the filter it holds, cut to 255 like its answer.
    let client = try #require(try aprsc.clients().first { $0.string("username") == Self.login })
    #expect(client.string("filter")?.utf8.count == 255)

    // The whole filter is in effect: messages through aprsc reach stations registered during the churn.
    let sender = try APRSISClient(port: aprsc.port, login: Self.peer, passcode: aprsPasscode(Self.peer))
    let targets = Array(registered.suffix(5))
    for (index, station) in targets.enumerated() {
      let padded = station.padding(toLength: 9, withPad: " ", startingAt: 0)
      try sender.send("\(Self.peer)>APDR16,TCPIP*::\(padded):after the churn \(index)")
    }
    #expect(
      try database.waitUntil { try $0.int("SELECT count(*) FROM messages") == targets.count },
      "stored \((try? database.int("SELECT count(*) FROM messages")) ?? -1) of \(targets.count):\n\(listener.log)"
    )
    let stations = try database.run("SELECT station FROM messages ORDER BY station;")
    #expect(stations.split(separator: "\n").map(String.init) == targets.sorted())
    #expect(try Self.listenerAddress(aprsc) == address)
    #expect(!aprsc.log.contains("(\(Self.login)) closed"), "\(aprsc.log)")
    #expect(listener.terminate() == 0)
  }

  /// A station's app on aprsc sends a numbered message to a station registered while the listener is online
  /// (beside 200 others): it goes through aprsc's `g/` filter, is stored, and the listener's ACK comes back to
  /// the app through aprsc, with the q construct aprsc adds for the listener's login.
  @Test func aMessageThroughAprscIsStoredAndAckedToTheSender() throws {
    let aprsc = try RealAPRSC()
    defer { aprsc.stop() }
    let (directory, database) = try makeListenerDatabase("aprsc-ack")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try database.register(listenerStations(200))
    let listener = try ListenerProcess(database: database.path, config: Self.listenerConfig(aprsc))
    defer { listener.stop() }
    let (address, _) = try Self.waitForListener(aprsc, listener)
    let app = try APRSISClient(port: aprsc.port, login: Self.peer, passcode: aprsPasscode(Self.peer))

    try database.register(["OH7LZB"], ackMessages: true)
    #expect(try database.waitUntil { try $0.meta("filterSize") == "201" })
    #expect(listener.waitForLog("filter active"), "\(listener.log)")
    try app.send("\(Self.peer)>APDR16,TCPIP*::OH7LZB   :Hello through aprsc{42")
    #expect(
      try database.waitUntil { try $0.int("SELECT count(*) FROM messages WHERE station = 'OH7LZB'") == 1 },
      "not stored:\n\(listener.log)\n\(aprsc.log)")
    #expect(
      try database.run("SELECT peer, text, msgno FROM messages;") == "W1AW|Hello through aprsc|42\n")
    let ack = try app.waitForLine(timeout: 10) { $0.hasSuffix(":ack42") }
    let line = try #require(ack, "no ACK at the sender:\n\(listener.log)")
    #expect(line.hasPrefix("OH7LZB>APZ"), "\(line)")
    #expect(line.hasSuffix(",TCPIP*,qAS,\(Self.login)::W1AW     :ack42"), "\(line)")
    #expect(try Self.listenerAddress(aprsc) == address)
    #expect(listener.terminate() == 0)
  }

  /// A `/v1/send` from one station of this server to another: aprsc never sends the listener its own packet back,
  /// yet the addressee gets it once (stored, its sync shows it), its ACK policy answers (the ACK goes out on
  /// APRS-IS, where another client sees it through aprsc) and the sender's entry ends `acked` after one copy.
  @Test func aSendBetweenTwoStationsHereIsDeliveredOnceAndAckedByPolicy() throws {
    let aprsc = try RealAPRSC()
    defer { aprsc.stop() }
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let database = SQLiteFile(path: stack.databasePath)
    for (ssid, auth) in [(9, "20900"), (7, "20900")] {
      let registered = try stack.post(
        "/v1/register",
        json:
          #"{"callsign":"OH7LZB","ssid":\#(ssid),"wantHistory":false,"since":0,"auth":"\#(auth)","ackMessages":true}"#
      )
      #expect(registered.status == 200, "\(registered.text)")
    }
    let claim = try stack.post("/v1/claim", json: #"{"callsign":"OH7LZB","ssid":9,"auth":"20900"}"#)
    let key = try #require(claim.jsonObject?.string("stationKey"), "\(claim.text)")
    let listener = try ListenerProcess(
      database: stack.databasePath,
      config: Self.listenerConfig(aprsc) + "\n[send]\nschedule = 0, 31\nackWait = 60s\npoll = 50ms\n")
    defer { listener.stop() }
    _ = try Self.waitForListener(aprsc, listener)
    // Another client on aprsc watching what is addressed to the sender: it sees the addressee's ACK on air.
    let watcher = try APRSISClient(
      port: aprsc.port, login: Self.peer, passcode: aprsPasscode(Self.peer), filter: "g/OH7LZB-9")
    try #require(
      try database.waitUntil { try $0.meta("connected") == "1" && $0.meta("receiveOnly") == "0" },
      "the listener did not publish its login:\n\(listener.log)")

    let sent = try stack.post(
      "/v1/send",
      json:
        #"{"callsign":"OH7LZB","ssid":9,"auth":"20900","to":"OH7LZB-7","text":"Dinner at six","clientId":"d1"}"#,
      headers: ["Authorization: Bearer \(key)"])
    #expect(sent.status == 200, "\(sent.text)")
    let ack = try watcher.waitForLine(timeout: 10) { $0.contains("::OH7LZB-9 :ack") }
    #expect(ack?.hasPrefix("OH7LZB-7>") == true, "no ACK on air:\n\(listener.log)")
    #expect(
      try database.waitUntil {
        try $0.run("SELECT state FROM sends;").trimmingCharacters(in: .whitespacesAndNewlines) == "acked"
      }, "the send did not end acked:\n\(listener.log)")
    let inbox = try stack.post(
      "/v1/sync", json: #"{"callsign":"OH7LZB","ssid":7,"auth":"20900","since":0}"#)
    let messages = try #require(inbox.jsonObject?.objects("messages"), "\(inbox.text)")
    #expect(messages.count == 1, "\(inbox.text)")
    #expect(messages.first?.string("peer") == "OH7LZB-9" && messages.first?.string("text") == "Dinner at six")
    #expect(
      try database.run("SELECT count(*) FROM messages WHERE station = 'OH7LZB-7';") == "1\n",
      "stored once")
    #expect(try database.run("SELECT transmissions FROM sends;") == "1\n", "one copy: the ACK ended it")
    #expect(listener.terminate() == 0)
  }
}
