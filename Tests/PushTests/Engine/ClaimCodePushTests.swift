import JSON
import TestSupport
import Testing

@testable import Push
@testable import Store

/// Claim codes (docs/design.md "Who may do what"): one code per device the station had before the claim, in the
/// banner only, stored as its salted hash; the vectors are HMAC-SHA256 from Python's `hmac`, an implementation
/// independent of ours.
@Suite struct ClaimCodePushTests {
  static let notice = PushContent(
    station: "N0CALL-7", fromCall: "N0CALL-7", seqId: nil, text: "", count: 0,
    kind: .claimCode(ClaimNotice(code: "042137", takesBack: false, validMinutes: 10)))

  @Test func theStoredHashIsHMACSHA256OfTheDigitsUnderTheSalt() {
    #expect(
      ClaimCodeMaker.hash("123456", salt: "00112233445566778899aabbccddeeff")
        == "30f7a6688fb48259721b66148b60eed7aa03599f64109d77bea44cb06d4c8251")
    #expect(
      ClaimCodeMaker.hash("000042", salt: "0123456789abcdef0123456789abcdef")
        == "22c6170ea67434c69a2ca4988858d0fec4bbbea8e941757793a228f3b4eb1d54")
    var seen: Set<String> = []
    for _ in 0..<50 {
      let code = ClaimCodeMaker.make()
      #expect(code.digits.utf8.count == 6 && code.digits.utf8.allSatisfy { (0x30...0x39).contains($0) })
      #expect(code.salt.utf8.count == 32)
      #expect(code.hash == ClaimCodeMaker.hash(code.digits, salt: code.salt))
      seen.insert(code.salt)
    }
    #expect(seen.count == 50)
  }

  @Test func theCodeIsInTheBannerOfEveryProviderAndNeverInTheData() throws {
    let text = NotificationText.make(Self.notice, preview: false)
    #expect(text.title == "N0CALL-7: claim code 042137")
    #expect(text.body.contains("enter 042137"))
    #expect(text.body.contains("If not, ignore this"))
    #expect(PushPayload.data(Self.notice).map(\.value) == ["claim", "N0CALL-7"])
    #expect(Self.notice.collapseName == "N0CALL-7-claim")
    guard
      case .success(let fcm) = PushPayload.fcm(Self.notice, token: "t", preview: false, ttlSeconds: 600),
      case .success(let apns) = PushPayload.apns(Self.notice, preview: false, messageID: "m:1"),
      case .success(let web) = WebPushPayload.body(Self.notice, preview: false, encrypted: true)
    else {
      Issue.record("a claim notice did not fit")
      return
    }
    for bytes in [fcm.bytes, apns.bytes, web.bytes] {
      let json = String(decoding: bytes, as: UTF8.self)
      // Twice in the banner (title and body), nowhere else.
      #expect(json.components(separatedBy: "042137").count == 3, "\(json)")
    }
  }

  @Test func aRoundGoesToTheDevicesOlderThanTheClaimEachWithItsOwnCode() throws {
    let rig = try PushRig(ios: false)
    defer { rig.close() }
    let start = rig.clock.now()
    try rig.register(
      "N0CALL-7", [(.android, "phone-old-1"), (.android, "phone-old-2")], at: start - 3_600_000)
    let keyHash = String(repeating: "ab", count: 32)
    #expect(
      try rig.database.claimStation(
        "N0CALL-7", keyHash: keyHash, proof: .provisional, client: "203.0.113.9", now: start)
        == .claimed(at: start, proof: .provisional))
    // The claimant's own device came after the claim: it gets no code.
    try rig.register("N0CALL-7", [(.android, "squatter-phone")], at: start + 1000)
    try rig.start()
    #expect(try rig.fake.wait("fcm", count: 2, status: 200))
    let requests = try rig.fake.requests("fcm")
    #expect(requests.count == 2)
    var tokens: Set<String> = []
    var digits: [String: String] = [:]
    for request in requests {
      let token = try #require(request.string(at: ["body", "message", "token"]))
      tokens.insert(token)
      let title = try #require(request.string(at: ["body", "message", "notification", "title"]))
      let code = String(try #require(title.split(separator: " ").last))
      #expect(code.utf8.count == 6)
      digits[token] = code
      #expect(request.string(at: ["body", "message", "data", "kind"]) == "claim")
      #expect(request.string(at: ["body", "message", "android", "collapse_key"]) == "aprs-N0CALL-7-claim")
    }
    #expect(tokens == ["phone-old-1", "phone-old-2"])
    // Stored: one salted hash per device, never the digits; the round is no longer due.
    #expect(try eventually { try rig.database.dueClaimRequests().isEmpty })
    let codes = try rig.database.claimCodes("N0CALL-7", keyHash: keyHash)
    #expect(Set(codes.map(\.token)) == tokens)
    for code in codes {
      let entered = try #require(digits[code.token])
      #expect(code.codeHash == ClaimCodeMaker.hash(entered, salt: code.salt))
      #expect(code.codeHash != entered && code.salt != entered)
    }
    let request = try #require(try rig.database.claimRequest("N0CALL-7", keyHash: keyHash))
    #expect(request.codesPushed == 1)
    #expect((request.codesExpireAt ?? 0) >= start + ClaimRequest.codeLifetimeMs)
    // No outbox row, no stored message: the code is in no sync.
    #expect(try rig.pending().isEmpty)
    #expect(try rig.database.recentMessages(station: "N0CALL-7", limit: 10).isEmpty)
  }
}

/// Bidirectional controls in a message are shown escaped in every provider's banner (the data keep the text).
@Suite struct BannerBidiTests {
  @Test func aRightToLeftOverrideIsEscapedInTheBanner() throws {
    let content = PushContent(
      station: "N0CALL-7", fromCall: "KJ7ABC-7", seqId: "1", text: "pay \u{202E}gnp.exe", count: 1)
    guard case .success(let fcm) = PushPayload.fcm(content, token: "t", preview: true, ttlSeconds: 60) else {
      Issue.record("did not fit")
      return
    }
    #expect(fcm.text.body == "pay <U+202E>gnp.exe")
    guard case .success(let web) = WebPushPayload.body(content, preview: true, encrypted: true) else {
      Issue.record("did not fit")
      return
    }
    #expect(web.text.body == "pay <U+202E>gnp.exe")
  }
}
