import API
import Foundation
import JSON
import Store
import Testing

/// `POST /v1/export` and the import it feeds (docs/protocol.md "Owned stations"; docs/operating.md "Moving a station to another
/// server"): the owner takes every stored entry, marker and setting of the station, and another server's
/// `importStation` reproduces the inbox exactly.
@Suite struct ExportAPITests {
  nonisolated(unsafe) static let identity: [String: Any] = ["callsign": "OH7LZB", "ssid": 9, "auth": "20900"]

  private static func body(_ extra: [String: Any] = [:]) -> [String: Any] {
    identity.merging(extra) { $1 }
  }

  /// OH7LZB-9 claimed, with settings, subscriptions, messages of every ring, two sends (one acked, one in flight)
  /// and a read marker.
  static func stationWithEverything() throws -> APIFixture {
    let api = try SendEndpointTests.fixture()
    let settings = api.post(
      "/v1/settings",
      body([
        "blocked": ["KJ7BAD"], "quietHours": ["start": 1320, "end": 420, "utcOffsetMinutes": 120],
        "ssids": "all", "retention": ["mode": "untilPulled", "max": 200], "ackPolicy": "device",
        "subscriptions": [
          ["kind": "bulletin", "match": "BLN*"],
          ["kind": "watch", "call": "K1ABC", "heardAfter": 3600, "bypass": true],
        ],
      ]))
    #expect(settings.status == 200, "\(settings.text)")
    let ids = settings.object?["subscriptions"].flatMap { value -> [String]? in
      guard case .array(let items) = value else { return nil }
      return items.compactMap { if case .object(let item) = $0 { item["id"]?.stringValue } else { nil } }
    }
    let subscription = try #require(ids?.first)
    let watch = try #require(ids?.last)
    try api.deliver(to: "OH7LZB-9", from: "KJ7ABC", text: "Hello nine", msgno: "12")
    try api.deliver(to: "OH7LZB-9", from: "KJ7ABC-7", text: "Quotes \" and \\ and ünïcode", msgno: nil)
    api.clock.advance(ms: 1)
    let entries = [
      IncomingMessage(
        station: "OH7LZB-9", peer: "DL1XYZ", text: "To three", msgno: "A1", dedupKey: "d1",
        dedupWindowMs: 1_000,
        to: "OH7LZB-3"),
      IncomingMessage(
        station: "OH7LZB-9", peer: "WX1ABC", text: "Storm tonight", msgno: nil, dedupKey: "d2",
        dedupWindowMs: 1_000, to: "BLN1WX",
        entry: SubscriptionEntry(kind: .bulletin, subscription: subscription)),
      IncomingMessage(
        station: "OH7LZB-9", peer: "K1ABC", text: "heard after 2 h", msgno: nil, dedupKey: "d3",
        dedupWindowMs: 1_000,
        entry: SubscriptionEntry(
          kind: .watch, subscription: watch, event: .heard, latitude: 41.12345, longitude: -81.54321)),
    ]
    _ = try api.database.storeMessages(entries, now: api.clock.now)
    api.clock.advance(ms: 1)
    #expect(
      api.post("/v1/send", SendEndpointTests.body(["clientId": "phone-1", "text": "Acked one"])).status == 200
    )
    api.clock.advance(ms: 1)
    #expect(api.post("/v1/send", SendEndpointTests.body(["text": "Still in flight"])).status == 200)
    let acked = try api.database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "1", kind: .ack)], now: api.clock.now)
    #expect(acked.count == 1)
    api.clock.advance(ms: 1)
    #expect(api.post("/v1/read", body(["peer": "KJ7ABC", "upTo": 5])).status == 200)
    return api
  }

  /// The document with `exportedAt` set to 0, so two exports compare.
  static func comparable(_ text: String) throws -> JSONValue {
    guard case .object(let object) = try JSONParser.parse(Array(text.utf8)) else { throw ExportTestError() }
    return .object(
      JSONObject(object.members.map { $0.key == "exportedAt" ? ($0.key, .number(.init(literal: "0"))) : $0 }))
  }

  struct ExportTestError: Error {}

  @Test func theOwnerExportsEveryEntryMarkerAndSettingAsADownload() throws {
    let api = try Self.stationWithEverything()
    let reply = api.post("/v1/export", Self.identity)
    #expect(reply.status == 200, "\(reply.text)")
    #expect(reply.header("Content-Disposition") == #"attachment; filename="aprs-cloud-OH7LZB-9.json""#)
    #expect(
      reply.object?.keys == [
        "format", "version", "station", "exportedAt", "claim", "settings", "read", "entries",
      ])
    #expect(reply["format"] == .string("aprs-cloud-export") && reply["station"] == .string("OH7LZB-9"))
    guard case .array(let entries)? = reply["entries"] else {
      Issue.record("no entries: \(reply.text)")
      return
    }
    let texts = entries.compactMap {
      if case .object(let entry) = $0 { entry["text"]?.stringValue } else { nil }
    }
    #expect(
      texts == [
        "Hello nine", "Quotes \" and \\ and ünïcode", "To three", "Storm tonight", "heard after 2 h",
        "Still in flight", "Acked one",
      ], "every ring, oldest first (a send is stamped anew by its state change)")
    #expect(reply.text.contains(#""to":"OH7LZB-3""#) && reply.text.contains(#""type":"bulletin""#))
    #expect(reply.text.contains(#""event":"heard","latitude":41.12345,"longitude":-81.54321"#))
    #expect(reply.text.contains(#""state":"acked","clientId":"phone-1""#))
    #expect(reply.text.contains(#""read":{"KJ7ABC":5}"#))
    #expect(reply.text.contains(#""retention":{"mode":"untilPulled","max":200}"#))
    guard case .object(let claim)? = reply["claim"] else {
      Issue.record("no claim: \(reply.text)")
      return
    }
    #expect(claim["keyHash"]?.stringValue?.utf8.count == 64)
    #expect(!reply.text.contains(api.stationKey!), "the key itself is never stored or shown")
  }

  @Test func anImportIntoAFreshServerReproducesTheInboxAndTheOwnersKeyWorks() throws {
    let api = try Self.stationWithEverything()
    let exported = api.post("/v1/export", Self.identity)
    let fresh = try APIFixture()
    fresh.clock.advance(ms: 1_000_000)
    let archive = try StationArchive(document: Array(exported.text.utf8), retentionCap: 500)
    #expect(try fresh.database.importStation(archive, withClaim: true, now: fresh.clock.now).entries == 7)
    fresh.stationKey = api.stationKey
    let again = fresh.post("/v1/export", Self.identity)
    #expect(again.status == 200, "the old key is the claim's here too: \(again.text)")
    // The send that was in flight stays with the old server's schedule: here it ended.
    let expected = exported.text.replacingOccurrences(of: #""state":"pending""#, with: #""state":"expired""#)
    #expect(try Self.comparable(again.text) == Self.comparable(expected))
    // A client with every opt-in sees the same answer from its old cursor on both servers.
    let sync = Self.body(["since": 0, "want": ["inbox", "ssids", "subscriptions"]])
    #expect(
      fresh.post("/v1/sync", sync).messages
        == api.post("/v1/sync", sync).messages.map { message in
          JSONObject(
            message.members.map {
              $0.key == "state" && $0.value == .string("pending") ? ($0.key, .string("expired")) : $0
            })
        })
    // Nothing imported is pushed, and a new message comes after every imported one.
    #expect(try fresh.database.unpulledCount(station: "OH7LZB-9") == 0)
    let stored = try fresh.deliver(to: "OH7LZB-9", from: "KJ7ABC", text: "After the move")
    guard case .stored(_, let timestamp)? = stored.first else {
      Issue.record("not stored: \(stored)")
      return
    }
    #expect(timestamp > (archive.entries.last?.timestamp ?? .max))
    // The next send goes on from the old server's message numbers.
    try fresh.database.publishListenerStatus(
      ListenerStatus(state: "online", connected: true, verified: true, receiveOnly: false))
    let sent = fresh.post("/v1/send", SendEndpointTests.body(["text": "Numbered on"]))
    guard case .object(let message)? = sent["message"] else {
      Issue.record("not sent: \(sent.text)")
      return
    }
    #expect(message["seqId"] == .string("3"), "\(sent.text)")
  }

  @Test func anImportChangesNothingWhenTheStationOrATimestampIsTakenHere() throws {
    let api = try Self.stationWithEverything()
    let archive = try StationArchive(
      document: Array(api.post("/v1/export", Self.identity).text.utf8), retentionCap: 500)
    #expect(throws: StoreError.self) { try api.database.importStation(archive, now: api.clock.now) }
    // Another station holds one of the timestamps: refused whole, the station not made.
    let other = try APIFixture()
    #expect(other.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    other.clock.advance(ms: archive.entries[2].timestamp - other.clock.now - 1)
    try other.deliver(to: "N0CALL-7", from: "KJ7ABC", text: "takes a timestamp")
    #expect(
      try other.database.recentMessages(station: "N0CALL-7", limit: 5).first?.timestamp
        == archive.entries[2].timestamp)
    do {
      try other.database.importStation(archive, now: other.clock.now)
      Issue.record("a taken timestamp was imported over")
    } catch {
      #expect(
        "\(error)".contains("timestamp \(archive.entries[2].timestamp) is taken by a message of N0CALL-7"))
    }
    #expect(try other.database.station("OH7LZB-9") == nil)
  }

  @Test func anArchiveFromTheFutureIsRefusedWhole() throws {
    let api = try Self.stationWithEverything()
    let text = api.post("/v1/export", Self.identity).text
    let fresh = try APIFixture()
    let now = fresh.clock.now
    for (original, future) in [
      (#""timestamp":1800000000008"#, #""timestamp":9007199254740991"#),
      (#""claimedAt":1800000000000"#, #""claimedAt":\#(now + 7_200_000)"#),
    ] {
      let range = try #require(text.range(of: original), "\(original)")
      let archive = try StationArchive(
        document: Array(text.replacingCharacters(in: range, with: future).utf8), retentionCap: 500)
      do {
        try fresh.database.importStation(archive, withClaim: true, now: now)
        Issue.record("imported: \(future)")
      } catch {
        #expect("\(error)".contains("is later than this server's clock"), "\(error)")
      }
      #expect(try fresh.database.station("OH7LZB-9") == nil)
    }
    // A read marker past the newest entry (one an older server let through) is taken as the newest entry.
    let marker = try #require(text.range(of: #""read":{"KJ7ABC":5}"#))
    let ahead = try StationArchive(
      document: Array(
        text.replacingCharacters(in: marker, with: #""read":{"KJ7ABC":9007199254740991}"#).utf8),
      retentionCap: 500)
    let newest = try #require(ahead.entries.map(\.timestamp).max())
    let clamped = try APIFixture()
    try clamped.database.importStation(ahead, now: clamped.clock.now)
    #expect(try clamped.database.readMarkers(station: "OH7LZB-9", changedAfter: 0) == ["KJ7ABC": newest])
    // An hour's skew is taken (a server whose clock ran a little ahead).
    let range = try #require(text.range(of: #""claimedAt":1800000000000"#))
    let skewed = try StationArchive(
      document: Array(text.replacingCharacters(in: range, with: #""claimedAt":\#(now + 3_000_000)"#).utf8),
      retentionCap: 500)
    #expect(try fresh.database.importStation(skewed, withClaim: true, now: now).entries == 7)
  }

  @Test func onlyTheOwnerExports() throws {
    let api = try Self.stationWithEverything()
    let key = api.stationKey!
    api.stationKey = nil
    #expect(api.post("/v1/export", Self.identity).status == 403)
    #expect(
      api.post("/v1/export", Self.identity, authorization: "Bearer " + String(key.reversed())).status == 401)
    #expect(
      api.post("/v1/export", ["callsign": "N0CALL", "ssid": 1, "auth": "13023"], authorization: nil).status
        == 404)
    api.stationKey = key
    // An unclaimed station has no owner to export for.
    let unclaimed = try APIFixture()
    #expect(unclaimed.post("/v1/register", registerBody(["wantHistory": false])).status == 200)
    let refused = unclaimed.post("/v1/export", ["callsign": "N0CALL", "ssid": 7, "auth": "13023"])
    #expect(refused.status == 403 && refused.error?.contains("/v1/claim") == true, "\(refused.text)")
    #expect(api.post("/v1/export", Self.identity, authorization: nil, method: "GET").status == 405)
  }

  /// A valid document with one change, and the start of the error it must give.
  static let hostileDocuments: [(String, String, String)] = [
    (#""format":"aprs-cloud-export""#, #""format":"other""#, "format must be"),
    (#""version":1"#, #""version":2"#, "version must be 1"),
    (#""version":1"#, #""version":"1""#, "version must be an integer"),
    (#""station":"OH7LZB-9""#, #""station":"OH7LZB-99""#, "station must be a station address"),
    (#""station":"OH7LZB-9""#, #""station":{"constructor":1}"#, "station must be a string"),
    (#""read":{"KJ7ABC":5}"#, #""read":{"__proto__":5}"#, #"read: "__proto__" is not a station address"#),
    (#""read":{"KJ7ABC":5}"#, #""read":{"KJ7ABC":-5}"#, "read.KJ7ABC must be a message timestamp"),
    (#""read":{"KJ7ABC":5}"#, #""read":[]"#, "read must be an object"),
    (#""mode":"untilPulled","max":200"#, #""mode":"untilPulled","max":501"#, "settings: retention.max"),
    (#""blocked":["KJ7BAD"]"#, #""blocked":["not a call"]"#, "settings: blocked[0]"),
    (#""direction":"received""#, #""direction":"sideways""#, "entries[0].direction must be"),
    (#""text":"Hello nine""#, #""text":null"#, "entries[0].text is required"),
    (#""text":"Hello nine""#, #""text":7"#, "entries[0].text must be a string"),
    (#""peer":"KJ7ABC""#, #""peer":"KJ7 ABC""#, "entries[0].peer must be an APRS address"),
    (#""type":"bulletin""#, #""type":"toString""#, "entries[3].type must be"),
    (#""event":"heard""#, #""event":"hasOwnProperty""#, "entries[4].event must be"),
    (#""latitude":41.12345"#, #""latitude":91"#, "entries[4].latitude must be"),
    (#""state":"acked""#, #""state":"constructor""#, "entries[6].state must be one of"),
  ]

  @Test func everyHostileDocumentIsRefusedNamingWhatIsWrong() throws {
    let api = try Self.stationWithEverything()
    let text = api.post("/v1/export", Self.identity).text
    for (original, replacement, expected) in Self.hostileDocuments {
      let range = try #require(text.range(of: original), "\(original) is not in \(text)")
      Self.expectRefused(text.replacingCharacters(in: range, with: replacement), expected)
    }
    // Entries out of order, or twice.
    let entries = try #require(text.range(of: #""entries":["#))
    let first = try #require(text.range(of: "},{", range: entries.upperBound..<text.endIndex))
    let firstEntry = String(text[entries.upperBound..<first.lowerBound]) + "}"
    Self.expectRefused(
      text.replacingCharacters(in: entries, with: #""entries":["# + firstEntry + ","),
      "entries[1].timestamp must be after the one before")
    Self.expectRefused("[]", "the document must be a JSON object")
    Self.expectRefused("{", "")
    Self.expectRefused(
      #"{"format":"aprs-cloud-export","version":1,"station":"N0CALL","settings":{},"entries":{}}"#,
      "entries must be an array")
    Self.expectRefused(
      #"{"format":"aprs-cloud-export","version":1,"station":"N0CALL"}"#, "settings must be an object")
    Self.expectRefused(
      String(repeating: " ", count: StationArchive.maximumDocumentBytes + 1), "the document is larger")
    // The smallest valid document: a station and its default settings.
    let smallest = try StationArchive(
      document: Array(#"{"format":"aprs-cloud-export","version":1,"station":"n0call","settings":{}}"#.utf8),
      retentionCap: 500)
    #expect(smallest.station == "N0CALL" && smallest.entries.isEmpty && smallest.settings == .defaults)
    // An entry whose subscription was removed since (its kind kept by another) comes along as it is.
    let orphan = try StationArchive(
      document: Array(
        (#"{"format":"aprs-cloud-export","version":1,"station":"N0CALL","settings":{},"entries":["#
          + #"{"direction":"received","type":"bulletin","peer":"WX1ABC","text":"old","timestamp":5,"#
          + #""seqId":null,"to":"BLN1","subscription":"sgone"}]}"#).utf8),
      retentionCap: 500)
    #expect(orphan.entries.first?.entry?.subscription == "sgone")
  }

  static func expectRefused(
    _ document: String, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    do {
      _ = try StationArchive(document: Array(document.utf8), retentionCap: 500)
      Issue.record("accepted: \(document.prefix(200))", sourceLocation: sourceLocation)
    } catch {
      #expect(error.message.hasPrefix(expected), "\(error.message)", sourceLocation: sourceLocation)
    }
  }
}
