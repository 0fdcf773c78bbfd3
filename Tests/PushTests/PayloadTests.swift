import JSON
import Store
import TestSupport
import Testing

@testable import Push

@Suite struct PayloadTests {
  static let smallImage = "iVBORw0KGgo" + String(repeating: "A", count: 89)

  func content(
    count: Int = 1, avatar: PushAvatar = .none, text: String = "Hello {not a msgno} \"quoted\"",
    senders: [String] = []
  ) -> PushContent {
    PushContent(
      station: "N0CALL-7", fromCall: "KJ7ABC-7", seqId: "42", text: text, count: count, senders: senders,
      avatar: avatar)
  }

  func fcmMessage(_ content: PushContent, preview: Bool = true) throws -> JSONObject {
    guard
      case .success(let built) = PushPayload.fcm(
        content, token: "tok:en_1", preview: preview, ttlSeconds: 3600)
    else { throw TestFailure("did not fit") }
    return try object(try parseObject(built.bytes)["message"], "message")
  }

  func apnsPayload(_ content: PushContent, preview: Bool = true, messageID: String = "0123456789abcdef:1")
    throws -> JSONObject
  {
    guard case .success(let built) = PushPayload.apns(content, preview: preview, messageID: messageID) else {
      throw TestFailure("did not fit")
    }
    return try parseObject(built.bytes)
  }

  /// The data map of an FCM message: every value must be a string.
  func fcmData(_ content: PushContent) throws -> [String: String] {
    let data = try object(try fcmMessage(content)["data"], "data")
    var result: [String: String] = [:]
    for (key, value) in data.members {
      guard case .string(let text) = value else { throw TestFailure("data.\(key) is \(value.typeName)") }
      result[key] = text
    }
    return result
  }

  /// The data keys of an APNs payload (everything but `aps` and `gcm.message_id`): every value must be a
  /// string.
  func apnsData(_ content: PushContent) throws -> [String: String] {
    var result: [String: String] = [:]
    for (key, value) in try apnsPayload(content).members where key != "aps" && key != "gcm.message_id" {
      guard case .string(let text) = value else { throw TestFailure("\(key) is \(value.typeName)") }
      result[key] = text
    }
    return result
  }

  // MARK: Data keys

  @Test func dataKeysAreExactlyTheProtocolsAllStrings() throws {
    let stored = content(avatar: .stored(Avatar(icon: "radio", image: Self.smallImage, hash: "abc123")))
    let expected = [
      "fromCall": "KJ7ABC-7", "to": "N0CALL-7", "seqId": "42", "count": "1", "fromAvatarIcon": "radio",
      "fromAvatarHash": "abc123", "fromAvatarImage": Self.smallImage,
    ]
    #expect(try fcmData(stored) == expected)
    #expect(try apnsData(stored) == expected)
  }

  @Test func anOtherSSIDEntryNamesItsAddresseeAsToAndNothingElseChanges() throws {
    var other = content()
    other.to = "N0CALL-9"
    let data = try fcmData(other)
    #expect(data["to"] == "N0CALL-9")
    #expect(try apnsData(other)["to"] == "N0CALL-9")
    var plain = data
    plain["to"] = "N0CALL-7"
    #expect(try fcmData(content()) == plain, "the same keys and values as before but `to`")
    // The collapse id and thread stay the station's: one banner per station.
    #expect(other.collapseID == content().collapseID)
    guard case .success(let web) = WebPushPayload.body(other, preview: true, encrypted: true) else {
      throw TestFailure("did not fit")
    }
    #expect(try parseObject(web.bytes)["to"] == .string("N0CALL-9"))
  }

  @Test func seqIdIsAnEmptyStringWithoutAMessageNumberAndCountIsDecimal() throws {
    var plain = content(count: 12)
    plain.seqId = nil
    let data = try fcmData(plain)
    #expect(data["seqId"] == "")
    #expect(data["count"] == "12")
    #expect(try apnsData(plain)["seqId"] == "")
  }

  @Test func noReservedKeyIsEverUsed() throws {
    for avatar in [PushAvatar.none, .cleared, .stored(Avatar(icon: "x", image: "y", hash: "z"))] {
      for key in try fcmData(content(avatar: avatar)).keys {
        #expect(!PushPayload.isReserved(key), "\(key)")
      }
    }
    for reserved in ["from", "notification", "message_type", "collapse_key", "google.x", "gcm.n", "GoogleX"] {
      #expect(PushPayload.isReserved(reserved))
    }
  }

  // MARK: gcm.message_id

  /// FlutterFire's iOS plugin hands a notification to the app's tap, launch and foreground handlers only
  /// when its userInfo has `gcm.message_id`: every APNs payload has one, FCM's never.
  @Test func everyAPNsPayloadCarriesATopLevelMessageIdAndFCMNever() throws {
    for avatar in [PushAvatar.none, .cleared, .stored(Avatar(icon: "x", image: Self.smallImage, hash: "z"))] {
      let payload = try apnsPayload(content(avatar: avatar), messageID: "0123456789abcdef:7")
      #expect(payload["gcm.message_id"] == .string("0123456789abcdef:7"))
      #expect(payload.keys.prefix(2) == ["aps", "gcm.message_id"])
      guard
        case .success(let fcm) = PushPayload.fcm(
          content(avatar: avatar), token: "t", preview: true, ttlSeconds: 60)
      else { throw TestFailure("did not fit") }
      #expect(!String(decoding: fcm.bytes, as: UTF8.self).contains("gcm."))
    }
    // The reserved-key rule is FCM's, for `data` only.
    #expect(PushPayload.isReserved(PushPayload.apnsMessageIDKey))
  }

  @Test func theMessageIdStillFitsWhenThePayloadIsCut() throws {
    let text = String(repeating: "Grüße 😀 ", count: 800)
    guard
      case .success(let built) = PushPayload.apns(
        content(text: text), preview: true, messageID: "0123456789abcdef:18446744073709551615")
    else { throw TestFailure("did not fit") }
    #expect(built.bytes.count <= 4096 && built.bodyShortened)
    #expect(
      try parseObject(built.bytes)["gcm.message_id"] == .string("0123456789abcdef:18446744073709551615"))
  }

  @Test func messageIdsAreUniquePerPushAndPerSender() {
    var first = PushMessageIDs(seed: 0xABC)
    var second = PushMessageIDs()
    var seen = Set<String>()
    for _ in 0..<10_000 {
      seen.insert(first.next())
      seen.insert(second.next())
    }
    #expect(seen.count == 20_000)
    var fixed = PushMessageIDs(seed: 0xABC)
    #expect(fixed.next() == "0000000000000abc:1")
    #expect(fixed.next() == "0000000000000abc:2")
  }

  // MARK: Provider structure

  @Test func fcmMessageCarriesTokenNotificationAndAndroidOptions() throws {
    let message = try fcmMessage(content())
    #expect(string(message["token"]) == "tok:en_1")
    let notification = try object(message["notification"])
    #expect(string(notification["title"]) == "KJ7ABC-7")
    #expect(string(notification["body"]) == "Hello {not a msgno} \"quoted\"")
    let android = try object(message["android"])
    #expect(string(android["priority"]) == "high")
    #expect(string(android["collapse_key"]) == "aprs-N0CALL-7")
    #expect(string(android["ttl"]) == "3600s")
    #expect(string(try object(android["notification"])["tag"]) == "aprs-N0CALL-7")
    #expect(message.keys.sorted() == ["android", "data", "notification", "token"])
  }

  @Test func apnsPayloadHasAnAlertAndHeadersHaveTheCollapseId() throws {
    let payload = try apnsPayload(content())
    let aps = try object(payload["aps"])
    let alert = try object(aps["alert"])
    #expect(string(alert["title"]) == "KJ7ABC-7")
    #expect(string(alert["body"]) == "Hello {not a msgno} \"quoted\"")
    #expect(string(aps["sound"]) == "default")
    #expect(string(aps["thread-id"]) == "N0CALL-7")
    // A low-priority push (subscription entries, what the station's radio answered) makes no sound.
    var quiet = content()
    quiet.priority = .low
    #expect(try object(apnsPayload(quiet)["aps"])["sound"] == nil)
    let headers = Dictionary(
      uniqueKeysWithValues: PushPayload.apnsHeaders(
        station: "N0CALL-7", bundleId: "org.example.app", expiration: 99))
    #expect(headers["apns-topic"] == "org.example.app")
    #expect(headers["apns-push-type"] == "alert")
    #expect(headers["apns-priority"] == "10")
    #expect(headers["apns-expiration"] == "99")
    #expect(headers["apns-collapse-id"] == "aprs-N0CALL-7")
  }

  @Test func collapseIdsAreUniquePerStationAndAtMost64Bytes() {
    let stations = ["N0CALL", "N0CALL-1", "N0CALL-10", "KJ7ABC-7", "W5AGO"]
    let ids = stations.map { PushPayload.collapseID(station: $0) }
    #expect(Set(ids).count == stations.count)
    #expect(PushPayload.collapseID(station: "N0CALL-7") == PushPayload.collapseID(station: "N0CALL-7"))
    let long = PushPayload.collapseID(station: String(repeating: "É", count: 100))
    #expect(long.utf8.count <= 64)
    #expect(ids.allSatisfy { $0.utf8.count <= 64 })
  }

  // MARK: Title and body

  @Test func oneMessageShowsSenderAndText() {
    let text = NotificationText.make(content(), preview: true)
    #expect(text == NotificationText(title: "KJ7ABC-7", body: "Hello {not a msgno} \"quoted\""))
  }

  @Test func severalMessagesShowTheCountAndWhoSentThem() {
    #expect(
      NotificationText.make(content(count: 3, senders: ["KJ7ABC-7", "N0CALL"]), preview: true)
        == NotificationText(title: "3 new APRS messages", body: "From KJ7ABC-7 and N0CALL"))
    #expect(
      NotificationText.make(
        content(count: 5, senders: ["W5AGO", "KJ7ABC-7", "N0CALL", "OH7LZB"]), preview: true)
        == NotificationText(title: "5 new APRS messages", body: "From KJ7ABC-7, W5AGO, N0CALL and 1 other"))
    #expect(NotificationText.make(content(count: 2), preview: true).body == "From KJ7ABC-7")
    #expect(NotificationText.list(["A", "B", "C", "D", "E"]) == "A, B, C and 2 others")
  }

  @Test func previewOffLeavesTheTextOutEverywhere() throws {
    let secret = "meet at the secret repeater"
    for count in [1, 4] {
      let pushed = content(count: count, text: secret)
      guard case .success(let fcm) = PushPayload.fcm(pushed, token: "t", preview: false, ttlSeconds: 60),
        case .success(let apns) = PushPayload.apns(pushed, preview: false, messageID: "m:1")
      else { throw TestFailure("did not fit") }
      for bytes in [fcm.bytes, apns.bytes] {
        #expect(!String(decoding: bytes, as: UTF8.self).contains("secret"))
      }
    }
    #expect(NotificationText.make(content(text: secret), preview: false).body == "New APRS message")
  }

  // MARK: Avatars

  @Test func noAvatarMeansNoAvatarKeys() throws {
    let data = try fcmData(content(avatar: .none))
    #expect(data.keys.sorted() == ["count", "fromCall", "seqId", "to"])
  }

  @Test func anIconOnlyAvatarSendsIconAndHash() throws {
    let data = try fcmData(content(avatar: .stored(Avatar(icon: "radio", image: nil, hash: "icon:radio"))))
    #expect(data["fromAvatarIcon"] == "radio")
    #expect(data["fromAvatarHash"] == "icon:radio")
    #expect(data["fromAvatarImage"] == nil)
    #expect(data["fromAvatarCleared"] == nil)
  }

  @Test func theImageRidesAlongUpTo3000CharactersOnly() throws {
    let fits = String(repeating: "A", count: 3000)
    let tooBig = String(repeating: "A", count: 3001)
    let with = try fcmData(content(avatar: .stored(Avatar(icon: nil, image: fits, hash: "h1"))))
    #expect(with["fromAvatarImage"] == fits)
    #expect(with["fromAvatarIcon"] == nil)
    let without = try fcmData(content(avatar: .stored(Avatar(icon: nil, image: tooBig, hash: "h2"))))
    #expect(without["fromAvatarImage"] == nil)
    #expect(without["fromAvatarHash"] == "h2")
    #expect(
      try apnsData(content(avatar: .stored(Avatar(icon: nil, image: fits, hash: "h1"))))["fromAvatarImage"]
        == fits)
  }

  @Test func aClearedAvatarSendsOnlyTheTombstone() throws {
    let data = try fcmData(content(avatar: .cleared))
    #expect(data["fromAvatarCleared"] == "1")
    #expect(data["fromAvatarHash"] == nil && data["fromAvatarIcon"] == nil && data["fromAvatarImage"] == nil)
    #expect(try apnsData(content(avatar: .cleared))["fromAvatarCleared"] == "1")
  }

  // MARK: Size limit

  @Test func aHugeTextAndImageAreCutTo4096BytesImageFirst() throws {
    let text = String(repeating: "Grüße 😀 \"x\"\n", count: 800)
    let pushed = content(
      avatar: .stored(Avatar(icon: "radio", image: String(repeating: "B", count: 3000), hash: "h")),
      text: text)
    for build in [
      PushPayload.fcm(pushed, token: String(repeating: "t", count: 160), preview: true, ttlSeconds: 3600),
      PushPayload.apns(pushed, preview: true, messageID: "m:1"),
    ] {
      guard case .success(let built) = build else { throw TestFailure("did not fit") }
      #expect(built.bytes.count <= 4096)
      #expect(built.bytes.count > 3900, "cut no more than needed")
      #expect(built.imageDropped)
      #expect(built.bodyShortened)
      #expect(built.text.body.hasSuffix("…"))
      #expect(text.hasPrefix(String(built.text.body.dropLast())))
      // Still valid JSON, valid UTF-8, the icon and hash kept.
      let document = String(decoding: built.bytes, as: UTF8.self)
      #expect(Array(document.utf8) == built.bytes)
      #expect(!document.contains("BBBB"))
      #expect(document.contains("\"fromAvatarHash\":\"h\""))
      _ = try parseObject(built.bytes)
    }
  }

  @Test func droppingTheImageIsEnoughWhenTheTextIsModest() throws {
    let text = String(repeating: "m", count: 1500)
    let pushed = content(
      avatar: .stored(Avatar(icon: nil, image: String(repeating: "C", count: 2900), hash: "h")), text: text)
    guard case .success(let built) = PushPayload.fcm(pushed, token: "t", preview: true, ttlSeconds: 60) else {
      throw TestFailure("did not fit")
    }
    #expect(built.imageDropped)
    #expect(!built.bodyShortened)
    #expect(built.text.body == text)
    #expect(built.bytes.count <= 4096)
  }

  @Test func escapedCharactersAreCountedWhenShortening() throws {
    let text = String(repeating: "\"\u{01}", count: 3000)
    guard case .success(let built) = PushPayload.apns(content(text: text), preview: true, messageID: "m:1")
    else {
      throw TestFailure("did not fit")
    }
    #expect(built.bytes.count <= 4096)
    #expect(built.bytes.count > 4000)
    #expect(!built.imageDropped)
  }

  @Test func aSmallPushIsLeftAlone() throws {
    guard case .success(let built) = PushPayload.apns(content(), preview: true, messageID: "m:1") else {
      throw TestFailure("did not fit")
    }
    #expect(!built.imageDropped && !built.bodyShortened)
    #expect(built.bytes.count < 400)
  }
}
