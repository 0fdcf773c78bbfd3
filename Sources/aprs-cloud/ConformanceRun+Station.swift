import APRS
import JSON

/// The checks of one station's life: register, sync and the cursor, heartbeat, opt-ins, avatars, long poll.
extension ConformanceRun {
  /// The keys of a received entry, in order (docs/protocol.md "Messages"); a sent one adds these.
  static let entryKeys = ["direction", "type", "peer", "text", "timestamp", "seqId"]
  static let sentEntryKeys: Set<String> = ["state", "clientId"]
  /// What `want:["inbox"]` adds to an answer, after `avatars`.
  static let inboxKeys: Set<String> = ["more", "dropped", "oldestTimestamp", "read"]

  /// Register with history (keys in order, at most 50 entries), then without it: `serverTime` is the
  /// request's `since` unchanged and `avatars` is `{}`.
  func checkRegister() throws(CheckStop) -> String {
    let first = try post("register", identity(station) + [("wantHistory", .bool(true)), ("since", .int(0))])
    let history = try expectSuccess(first, "POST /v1/register (sync-only, wantHistory)")
    registered(station, token: nil)
    try expectKeys(
      history, ["messages", "serverTime", "avatarHash", "avatars"], optional: ["avatarError"],
      "POST /v1/register with history")
    guard let messages = history["messages"]?.elements else {
      throw .fail("register: messages is not an array")
    }
    try require(messages.count <= 50, "register: \(messages.count) entries without want inbox, at most 50")
    if existedBefore[station] != false && !messages.isEmpty {
      notes.append(
        "\(station) holds stored entries (\(messages.count) in its first page): none is changed or deleted")
    }
    guard let serverTime = history["serverTime"]?.integer else {
      throw .fail("register: serverTime is not an integer")
    }
    try require(history["avatarHash"]?.text != nil, "register: avatarHash is not a string")
    try require(history["avatars"]?.members != nil, "register: avatars is not an object")
    let since = serverTime + 12_345
    let device = try post(
      "register",
      identity(station) + [
        ("platform", .string("android")), ("pushToken", .string(mainToken)), ("wantHistory", .bool(false)),
        ("since", .int(since)),
      ])
    let plain = try expectSuccess(device, "POST /v1/register (android, no history)")
    registered(station, token: mainToken)
    try expectKeys(
      plain, ["serverTime", "avatarHash", "avatars"], optional: ["avatarError"],
      "POST /v1/register without history")
    try require(
      plain["serverTime"]?.integer == since,
      "register without history: serverTime \(plain["serverTime"].map { "\($0)" } ?? "absent"), expected the request's since \(since) unchanged"
    )
    try require(plain["avatars"] == .object(JSONObject()), "register without history: avatars is not {}")
    var known = ""
    if existedBefore[station] == false {
      try require(
        isRegistered(station) == true,
        "register: \(station) is not registered afterwards (/v1/settings says 404)")
      known = ", and the station exists afterwards"
    }
    return "with history: keys in order, \(messages.count) entries; without: serverTime is since unchanged,"
      + " avatars {}\(known)"
  }

  /// A sync's keys in order; a station that is not registered gets empty messages, not an error, and a
  /// sync does not register it.
  func checkSync() throws(CheckStop) -> String {
    let answer = try expectSuccess(
      try post("sync", identity(station) + [("since", .int(0))]), "POST /v1/sync")
    // Keys nobody asked for are the opt-ins check's.
    try expectKeys(answer, ["messages", "serverTime", "avatars"], optional: Self.inboxKeys, "POST /v1/sync")
    try require(answer["messages"]?.elements != nil, "sync: messages is not an array")
    try require(answer["serverTime"]?.integer != nil, "sync: serverTime is not an integer")
    try require(answer["avatars"]?.members != nil, "sync: avatars is not an object")
    guard existedBefore[spare] == false else {
      return
        "keys in order (a sync of a station that is not registered not tried: \(spare) exists or cannot be told)"
    }
    let unknown = try expectSuccess(
      try post("sync", identity(spare) + [("since", .int(0))]), "POST /v1/sync of \(spare), not registered")
    try expectKeys(
      unknown, ["messages", "serverTime", "avatars"], optional: Self.inboxKeys,
      "POST /v1/sync of a station not registered")
    try require(unknown["messages"] == .array([]), "sync of \(spare), not registered: messages is not []")
    try require(unknown["serverTime"]?.integer != nil, "sync of \(spare): serverTime is not an integer")
    try require(isRegistered(spare) == false, "sync of \(spare) registered it (/v1/settings no longer a 404)")
    return "keys in order; \(spare), not registered, gets messages [] and stays unregistered"
  }

  /// `serverTime` an integer that never goes back; entries newer than `since`, in strictly increasing order,
  /// none newer than `serverTime`, at most 50; a `since` ahead of everything comes back as it was.
  func checkSyncCursor() throws(CheckStop) -> String {
    let first = try expectSuccess(
      try post("sync", identity(station) + [("since", .int(0))]), "POST /v1/sync since 0")
    guard let t1 = first["serverTime"]?.integer, t1 >= 0 else {
      throw .fail("sync since 0: serverTime is not an integer ≥ 0")
    }
    let entries = try checkEntries(first, since: 0, serverTime: t1, "sync since 0")
    let second = try expectSuccess(
      try post("sync", identity(station) + [("since", .int(t1))]), "POST /v1/sync since \(t1)")
    guard let t2 = second["serverTime"]?.integer else {
      throw .fail("sync since \(t1): serverTime is not an integer")
    }
    try require(t2 >= t1, "sync since \(t1): serverTime \(t2) went back (the cursor only moves forward)")
    _ = try checkEntries(second, since: t1, serverTime: t2, "sync since \(t1)")
    let future = max(t2, 1_700_000_000_000) + Self.futureOffsetMs
    let ahead = try expectSuccess(
      try post("sync", identity(station) + [("since", .int(future))]), "POST /v1/sync since \(future)")
    try require(ahead["messages"] == .array([]), "sync since \(future) (ten years ahead): messages is not []")
    try require(
      ahead["serverTime"]?.integer == future,
      "sync since \(future) (ten years ahead): serverTime \(ahead["serverTime"].map { "\($0)" } ?? "absent"),"
        + " expected \(future): serverTime is the newest timestamp or since if that is larger, never the wall clock"
    )
    let register = try expectSuccess(
      try post("register", identity(station) + [("wantHistory", .bool(true)), ("since", .int(future))]),
      "POST /v1/register with history since \(future)")
    try require(
      register["serverTime"]?.integer == future,
      "register with history since \(future): serverTime \(register["serverTime"].map { "\($0)" } ?? "absent"), expected \(future)"
    )
    return
      "serverTime \(t1) then \(t2), \(entries) entries in order; a since ten years ahead comes back unchanged"
  }

  /// The entries of an answer against the cursor rule and the entry shape; their count.
  private func checkEntries(_ answer: JSONObject, since: Int64, serverTime: Int64, _ what: String)
    throws(CheckStop) -> Int
  {
    guard let entries = answer["messages"]?.elements else { throw .fail("\(what): messages is not an array") }
    try require(entries.count <= 50, "\(what): \(entries.count) entries without want inbox, at most 50")
    var last = since
    for (index, entry) in entries.enumerated() {
      guard let object = entry.members else { throw .fail("\(what): messages[\(index)] is not an object") }
      guard let timestamp = object["timestamp"]?.integer else {
        throw .fail("\(what): messages[\(index)].timestamp is not an integer")
      }
      try require(
        timestamp > last,
        "\(what): messages[\(index)].timestamp \(timestamp) is not after \(last) (since or the entry before)")
      try require(
        timestamp <= serverTime,
        "\(what): messages[\(index)].timestamp \(timestamp) is newer than serverTime \(serverTime)")
      last = timestamp
      let direction = object["direction"]?.text
      try expectKeys(
        object, Self.entryKeys, optional: direction == "sent" ? Self.sentEntryKeys : [],
        "\(what): messages[\(index)]")
      try require(
        direction == "received" || direction == "sent",
        "\(what): messages[\(index)].direction is \(direction ?? "absent")")
      try require(object["type"]?.text == "message", "\(what): messages[\(index)].type is not \"message\"")
      try require(
        object["text"]?.text?.isEmpty == false, "\(what): messages[\(index)].text is empty or not a string")
      let seqId = object["seqId"]
      try require(
        seqId == .null || seqId?.text != nil, "\(what): messages[\(index)].seqId is not a string or null")
    }
    if entries.count == 50 {
      try require(
        serverTime == last,
        "\(what): a full page of 50 whose serverTime \(serverTime) is not its last timestamp \(last)")
    }
    return entries.count
  }

  /// A heartbeat answers `{"avatarHash":…}` and re-creates a station the server does not know.
  func checkHeartbeat() throws(CheckStop) -> String {
    let beat = try post(
      "heartbeat", identity(station) + [("platform", .string("android")), ("pushToken", .string(mainToken))])
    let answer = try expectSuccess(beat, "POST /v1/heartbeat")
    try expectKeys(answer, ["avatarHash"], optional: ["avatarError"], "POST /v1/heartbeat")
    try require(answer["avatarHash"]?.text != nil, "heartbeat: avatarHash is not a string")
    guard existedBefore[spare] == false else {
      return "answers {avatarHash}; re-creation not tried: \(spare) exists or cannot be told"
    }
    let create = try post(
      "heartbeat", identity(spare) + [("platform", .string("android")), ("pushToken", .string(spareToken))])
    _ = try expectSuccess(create, "POST /v1/heartbeat of \(spare), not registered")
    registered(spare, token: spareToken)
    try require(
      isRegistered(spare) == true,
      "heartbeat of \(spare), not registered: the station was not re-created (/v1/settings still 404)")
    return "answers {avatarHash}; a heartbeat of \(spare), not registered, re-created it"
  }

  /// Without `want` no key beyond the old protocol's; unknown names ignored; more than 16 a 400 naming
  /// `want`; `want:["inbox"]` adds `more`, `dropped`, `oldestTimestamp`, `read` after `avatars` (1.4).
  func checkOptInsOff() throws(CheckStop) -> String {
    let plain = try expectSuccess(try post("sync", identity(station)), "POST /v1/sync without want")
    // Which keys, not their order (that is the sync check's).
    let oldKeys: Set<String> = ["messages", "serverTime", "avatars"]
    try require(
      Set(plain.keys) == oldKeys && plain.keys.count == 3,
      "POST /v1/sync without want: keys \(plain.keys), expected only messages, serverTime, avatars")
    let unknown = try expectSuccess(
      try post("sync", identity(station) + [("want", .array([.string("conformance-unknown-name")]))]),
      "POST /v1/sync with an unknown want name")
    try require(
      Set(unknown.keys) == oldKeys && unknown.keys.count == 3,
      "POST /v1/sync with an unknown want name: keys \(unknown.keys), expected only messages, serverTime, avatars"
    )
    let tooMany = try post("sync", identity(station) + [("want", .array((0..<17).map { .string("w\($0)") }))])
    try expectError(tooMany, status: 400, prefix: "want", "POST /v1/sync with 17 want names")
    for entry in plain["messages"]?.elements ?? [] where entry.members?["to"] != nil {
      throw .fail("sync without want: an entry carries to (only want ssids brings other SSIDs' entries)")
    }
    guard speaks(1, 4) else {
      return
        "no key beyond the old protocol's, unknown names ignored, 17 names a 400 (inbox not tried: protocolVersion below 1.5)"
    }
    let inbox = try expectSuccess(
      try post("sync", identity(station) + [("want", .array([.string("inbox")]))]),
      "POST /v1/sync with want inbox")
    try require(
      Array(inbox.keys.suffix(4)) == ["more", "dropped", "oldestTimestamp", "read"]
        && Set(inbox.keys) == oldKeys.union(Self.inboxKeys),
      "POST /v1/sync with want inbox: keys \(inbox.keys), expected messages, serverTime, avatars, then more, dropped, oldestTimestamp, read"
    )
    guard case .bool = inbox["more"] else { throw .fail("sync with want inbox: more is not a boolean") }
    try require(inbox["dropped"]?.integer != nil, "sync with want inbox: dropped is not an integer")
    try require(
      inbox["oldestTimestamp"] == .null || inbox["oldestTimestamp"]?.integer != nil,
      "sync with want inbox: oldestTimestamp is not an integer or null")
    try require(inbox["read"]?.members != nil, "sync with want inbox: read is not an object")
    return
      "no key beyond the old protocol's without want, unknown names ignored, 17 names a 400, inbox adds its four keys"
  }

  /// An icon uploads as `icon:<name>`, `/v1/avatars` lists it, a request without avatar fields keeps it, a bad
  /// icon is a 200 with `avatarError`, more than 50 stations a 400, a clear answers `""` and unlists it.
  func checkAvatars() throws(CheckStop) -> String {
    guard ownsWhole(station) else {
      throw .skip("\(station) existed before the run (or cannot be told): its avatar is not changed")
    }
    let device: [(String, JSONValue)] = [("platform", .string("android")), ("pushToken", .string(mainToken))]
    let set = try expectSuccess(
      try post(
        "heartbeat",
        identity(station) + device + [
          ("avatarHash", .string("")), ("avatarUpdate", .bool(true)), ("avatarIcon", .string("radio")),
          ("avatarImage", .null),
        ]), "POST /v1/heartbeat with avatarIcon radio")
    if let refusal = set["avatarError"]?.text {
      try require(set["avatarHash"]?.text != nil, "heartbeat with an avatar: avatarError without avatarHash")
      throw .skip(
        "the server did not store the icon (\(refusal)): a budget of the last hour; run again later")
    }
    try require(
      set["avatarHash"]?.text == "icon:radio",
      "heartbeat with avatarIcon radio: avatarHash \(set["avatarHash"].map { "\($0)" } ?? "absent"), expected \"icon:radio\""
    )
    let listed = try expectSuccess(
      try post("avatars", identity(station) + [("stations", .array([.string(station.description)]))]),
      "POST /v1/avatars")
    let expected: JSONValue = .object(
      JSONObject([
        (key: "icon", value: .string("radio")), (key: "image", value: .null),
        (key: "hash", value: .string("icon:radio")),
      ]))
    guard let avatars = listed["avatars"]?.members else { throw .fail("avatars: avatars is not an object") }
    try require(
      avatars[station.description] == expected,
      "avatars: \(station) is \(avatars[station.description].map { "\($0)" } ?? "absent"), expected {icon:radio, image:null, hash:icon:radio}"
    )
    let keep = try expectSuccess(
      try post("heartbeat", identity(station) + device), "POST /v1/heartbeat without avatar fields")
    try require(
      keep["avatarHash"]?.text == "icon:radio",
      "heartbeat without avatar fields: avatarHash is not icon:radio (the stored avatar must stay)")
    let bad = try expectSuccess(
      try post(
        "heartbeat",
        identity(station) + device + [
          ("avatarHash", .string("icon:radio")), ("avatarUpdate", .bool(true)),
          ("avatarIcon", .string("Bad Icon!")),
          ("avatarImage", .null),
        ]), "POST /v1/heartbeat with avatarIcon \"Bad Icon!\"")
    try require(bad["avatarError"]?.text != nil, "heartbeat with a bad icon: 200 without avatarError")
    try require(
      bad["avatarHash"]?.text == "icon:radio",
      "heartbeat with a bad icon: avatarHash is not the old icon:radio")
    let many = try post(
      "avatars",
      identity(station) + [("stations", .array((0..<51).map { _ in .string(station.description) }))])
    try expectError(many, status: 400, prefix: "stations", "POST /v1/avatars with 51 stations")
    let clear = try expectSuccess(
      try post(
        "heartbeat",
        identity(station) + device + [
          ("avatarHash", .string("icon:radio")), ("avatarUpdate", .bool(true)), ("avatarIcon", .null),
          ("avatarImage", .null),
        ]), "POST /v1/heartbeat clearing the avatar")
    try require(clear["avatarHash"]?.text == "", "heartbeat clearing the avatar: avatarHash is not \"\"")
    let after = try expectSuccess(
      try post("avatars", identity(station) + [("stations", .array([.string(station.description)]))]),
      "POST /v1/avatars after the clear")
    try require(
      after["avatars"]?.members?[station.description] == nil,
      "avatars after the clear: \(station) is still listed")
    return "icon:radio stored and listed, kept without avatar fields, a bad icon is avatarError with 200,"
      + " 51 stations a 400, a clear answers \"\" and unlists it"
  }

  /// `wait` outside 0–300 is a 400; with nothing newer, a `wait` of 1 s is held about that long and answered
  /// `messages:[]`.
  func checkLongPoll() throws(CheckStop) -> String {
    guard let features else { throw .skip("GET /v1/info gave no features") }
    guard features.contains("longpoll") else {
      throw .skip("GET /v1/info lists no longpoll feature: this server does not hold a sync's wait")
    }
    let outside = try post("sync", identity(station) + [("wait", .int(301))])
    try expectError(outside, status: 400, prefix: "wait", "POST /v1/sync with wait 301")
    let negative = try post("sync", identity(station) + [("wait", .int(-1))])
    try expectError(negative, status: 400, prefix: "wait", "POST /v1/sync with wait -1")
    let future = 1_700_000_000_000 + 2 * Self.futureOffsetMs
    let held = try post("sync", identity(station) + [("since", .int(future)), ("wait", .int(1))])
    let answer = try expectSuccess(held, "POST /v1/sync with wait 1")
    try require(answer["messages"] == .array([]), "long poll of 1 s with nothing newer: messages is not []")
    try require(
      held.elapsedMs >= 900,
      "long poll of 1 s with nothing newer: answered after \(held.elapsedMs) ms, expected it held about 1 s")
    try require(held.elapsedMs < 15_000, "long poll of 1 s: answered only after \(held.elapsedMs) ms")
    return
      "wait 301 and -1 are 400 naming wait; wait 1 with nothing newer held \(held.elapsedMs) ms and answered messages []"
  }
}
