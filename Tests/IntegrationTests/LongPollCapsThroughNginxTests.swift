import Foundation
import JSON
import TestSupport
import Testing

/// The caps on held long polls through real nginx and the real responder (`[server]
/// maxParkedPerStation`, `maxParkedPerAddress`): one station's flood only churns that station's own
/// requests (the newest held, the oldest answered `messages:[]`), so another station's long poll is
/// still held and woken by its message; one address past its cap gets a 429 with `Retry-After`.
@Suite(.serialized) struct LongPollCapsThroughNginxTests {
  typealias Polls = LongPollThroughNginxTests

  /// The responder's `aprs_cloud_limit_hits_total{limit}`, from the private metrics listener.
  static func hits(_ stack: TestStack, _ limit: String) throws -> Int? {
    let metrics = try stack.metrics()
    let document = try PrometheusDocument(parsing: metrics.text)
    return document.value("aprs_cloud_limit_hits_total", ["limit": limit]).map { Int($0) }
  }

  /// Stores a message for `station` directly, as the listener would commit it.
  static func store(_ database: SQLiteFile, for station: String, text: String) throws {
    let timestamp = Int64(Date().timeIntervalSince1970 * 1000)
    try database.run(
      """
      BEGIN IMMEDIATE;
      INSERT INTO messages (station, direction, peer, text, msgno, timestamp)
        VALUES ('\(station)', 'received', 'W1AW', '\(text)', NULL, \(timestamp));
      UPDATE meta SET value = '\(timestamp)' WHERE key = 'last_message_ts';
      COMMIT;
      """)
  }

  /// 40 long polls of one station, one after the other, with the whole pool (`maxParked`) only 20:
  /// without a per-station cap they would take it all and every other long poll would be answered
  /// at once. With it the station holds its newest 8, each new one answering its oldest; another
  /// station's long poll is held and answered by its message.
  @Test func oneStationsFloodDoesNotStopAnotherStationsLongPoll() throws {
    let stack = try TestStack.real(config: "[server]\nmaxParked = 20\n")
    defer { stack.stop() }
    let database = SQLiteFile(path: stack.databasePath)
    try database.register(["FLOOD-1", "VICTIM-2"])

    let flood = HeldHTTPRequests(port: stack.port)
    var sent: [Int] = []
    for index in 0..<40 {
      sent.append(try flood.send("/v1/sync", json: Polls.syncBody("FLOOD-1", wait: 60)))
      if index < 8 {
        #expect(
          waitUntil(timeout: 10) { Polls.parked(stack) == index + 1 }, "parked: \(Polls.parked(stack) ?? -1)")
        continue
      }
      // The ninth and every later one answers the oldest still held, at once.
      let oldest = sent[index - 8]
      guard flood.collect(only: [oldest], timeoutMs: 10_000, until: { flood.answers[oldest] != nil }) else {
        Issue.record("request \(index) did not answer the oldest held; parked: \(Polls.parked(stack) ?? -1)")
        return
      }
    }
    #expect(Set(flood.answers.keys) == Set(sent.prefix(32)))
    #expect(flood.waitingIndexes.sorted() == Array(sent.suffix(8)))
    for (index, answer) in flood.answers {
      guard answer.status == 200, case .object(let object)? = try? JSONParser.parse(answer.body) else {
        Issue.record("\(index): \(answer.status) \(answer.text)")
        continue
      }
      #expect(object["messages"] == .array([]) && object["serverTime"] != nil, "\(answer.text)")
    }
    #expect(Polls.parked(stack) == 8)

    // Another station's long poll is held, not answered at once ...
    let victim = HeldHTTPRequests(port: stack.port)
    let poll = try victim.send("/v1/sync", json: Polls.syncBody("VICTIM-2", wait: 60))
    #expect(waitUntil(timeout: 10) { Polls.parked(stack) == 9 }, "parked: \(Polls.parked(stack) ?? -1)")
    victim.collect(timeoutMs: 300) { false }
    #expect(victim.answers.isEmpty, "answered at once: \(victim.answers[poll]?.text ?? "")")

    // ... and woken by its own message.
    try Self.store(database, for: "VICTIM-2", text: "still reachable")
    #expect(victim.collect(timeoutMs: 10_000) { victim.answers[poll] != nil })
    let answer = try #require(victim.answers[poll])
    guard answer.status == 200, case .object(let object)? = try? JSONParser.parse(answer.body),
      case .array(let messages)? = object["messages"], messages.count == 1,
      case .object(let message) = messages[0]
    else {
      Issue.record("\(answer.status) \(answer.text)")
      return
    }
    #expect(message["text"] == .string("still reachable"))
    #expect(Polls.parked(stack) == 8)
    flood.collect(timeoutMs: 50) { false }
    #expect(flood.waiting == 8, "the flood's newest stay held")

    #expect(try Self.hits(stack, "maxParkedPerStation") == 32)
    #expect(try Self.hits(stack, "maxParked") == 0)
    // One info line for the 32 hits (the next is due a minute later), no line per answer.
    let log = (try? String(contentsOfFile: stack.directory + "/responder.log", encoding: .utf8)) ?? ""
    let lines = log.split(separator: "\n").filter { $0.contains(#"msg="long polls over a limit""#) }
    #expect(lines.count == 1, "\(lines)")
    #expect(
      lines.first?.hasSuffix("limit=maxParkedPerStation hits=1 station=FLOOD-1") == true, "\(lines)")
  }

  /// Past `maxParkedPerAddress` a long poll from that address is not held: 429, JSON `error`,
  /// `Retry-After`, at once; the ones held stay held, and a held one that ends frees room.
  @Test func pastTheAddressCapALongPollIs429WithRetryAfter() throws {
    let stack = try TestStack.real(config: "[server]\nmaxParkedPerAddress = 3\n")
    defer { stack.stop() }
    let database = SQLiteFile(path: stack.databasePath)
    let stations = ["CAPA-1", "CAPB-2", "CAPC-3", "CAPD-4"]
    try database.register(stations)
    let polls = HeldHTTPRequests(port: stack.port)
    var held: [Int] = []
    for station in stations.prefix(3) {
      held.append(try polls.send("/v1/sync", json: Polls.syncBody(station, wait: 60)))
    }
    #expect(waitUntil(timeout: 10) { Polls.parked(stack) == 3 }, "parked: \(Polls.parked(stack) ?? -1)")

    for station in ["CAPD-4", "CAPA-1"] {
      let started = Date()
      let refused = try stack.post("/v1/sync", json: Polls.syncBody(station, wait: 60))
      #expect(Date().timeIntervalSince(started) < 5)
      #expect(refused.status == 429, "\(refused.text)")
      #expect(refused.values("retry-after") == ["10"])
      #expect(refused.errorMessage == "too many long polls held for this client address; retry in 10 s")
    }
    #expect(Polls.parked(stack) == 3)
    #expect(try Self.hits(stack, "maxParkedPerAddress") == 2)

    // One held request ends (its client goes away): the next long poll is held again.
    polls.abandon(held[0])
    #expect(waitUntil(timeout: 10) { Polls.parked(stack) == 2 })
    let again = try polls.send("/v1/sync", json: Polls.syncBody("CAPD-4", wait: 60))
    #expect(waitUntil(timeout: 10) { Polls.parked(stack) == 3 })
    polls.collect(timeoutMs: 200) { false }
    #expect(polls.answers[again] == nil)
  }
}

extension TestStack {
  /// The real stack, its responder reading `config` (an INI text) through `--config`.
  static func real(config: String, readTimeout: Int = 60) throws -> TestStack {
    let directory = try makeTemporaryDirectory("stackcfg")
    // The responder reads the file once, at start.
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try config.write(toFile: directory + "/responder.ini", atomically: true, encoding: .utf8)
    return try TestStack(
      .real(arguments: ["--config", directory + "/responder.ini"]), readTimeout: readTimeout)
  }
}
