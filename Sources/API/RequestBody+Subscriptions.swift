import APRS
import JSON
import Store

extension RequestBody {
  /// `subscriptions` of `POST /v1/settings`: nil when absent; otherwise the whole new list (at most
  /// ``Subscription/maximumPerStation`` objects), each `{"kind", …, "id"?, "bypass"?}`:
  /// - `bulletin`: `match`, a ``BulletinPattern`` (`BLN*`, `BLN?WX`);
  /// - `group`: `call`, a tactical, group or net call (1–9 letters or digits, an optional SSID);
  /// - `nws`: `zones`, 1–50 NWS county or zone codes (`OHC081`, `PAZ125`; the original server's `OH_C081` is
  ///   `OHC081`) or BOM areas as WXSVR-AU names them (`NSW_FW001`, `TAS_MW002`), stored canonical
  ///   (``NWSZones/canonical(_:)``);
  /// - `watch`: `call`, and `heardAfter` / `silentFor` (s, 300 to 30 days) and `emergency`, at least one of them;
  /// - `net`: `server` (`ANSRVR` or `CQSRVR`), `group` (1–9 letters or digits), `join` (`silent` or `post`; by
  ///   default ANSRVR's silent join, CQSRVR's post: it has no silent one), `text` (what a `post` join posts;
  ///   `QRV` when absent), `renew` (default true) and `digest` (s, 0 to 86400, default 600): ``netRule(_:field:)``.
  /// `id` keeps a subscription the station has. Anything wrong is a 400 naming it (`subscriptions[2].zones[0]`).
  func subscriptionDrafts() throws(APIError) -> [SubscriptionDraft]? {
    guard let value = self["subscriptions"] else { return nil }
    guard case .array(let items) = value else {
      throw .badRequest("subscriptions must be an array of objects, not \(value.typeName)")
    }
    guard items.count <= Subscription.maximumPerStation else {
      throw .badRequest(
        "subscriptions holds \(items.count) subscriptions; at most \(Subscription.maximumPerStation)")
    }
    var drafts: [SubscriptionDraft] = []
    var ids = Set<String>()
    for (index, item) in items.enumerated() {
      let draft = try Self.subscriptionDraft(item, field: "subscriptions[\(index)]")
      if let id = draft.id, !ids.insert(id).inserted {
        throw .badRequest("subscriptions[\(index)].id: subscription \(id) is named twice")
      }
      drafts.append(draft)
    }
    return drafts
  }

  private static func subscriptionDraft(_ value: JSONValue, field: String) throws(APIError)
    -> SubscriptionDraft
  {
    guard case .object(let object) = value else {
      throw .badRequest("\(field) must be an object with a kind, not \(value.typeName)")
    }
    func text(_ key: String, maxLength: Int) throws(APIError) -> String? {
      guard let member = object[key], member != .null else { return nil }
      guard case .string(let string) = member, string.utf8.count <= maxLength else {
        throw .badRequest("\(field).\(key) must be a string of at most \(maxLength) bytes")
      }
      return string
    }
    func flag(_ key: String) throws(APIError) -> Bool? {
      guard let member = object[key], member != .null else { return nil }
      guard case .bool(let bool) = member else {
        throw .badRequest("\(field).\(key) must be true or false, not \(member.typeName)")
      }
      return bool
    }
    func seconds(_ key: String) throws(APIError) -> Int? {
      guard let member = object[key], member != .null else { return nil }
      let range = Int64(WatchRule.minimumSeconds)...Int64(WatchRule.maximumSeconds)
      guard case .number(let number) = member, let integer = number.int64, range.contains(integer) else {
        throw .badRequest(
          "\(field).\(key) must be a number of seconds from \(WatchRule.minimumSeconds) to"
            + " \(WatchRule.maximumSeconds)")
      }
      return Int(integer)
    }
    func call(_ key: String) throws(APIError) -> String {
      guard let given = try text(key, maxLength: 32) else { throw .badRequest("\(field).\(key) is required") }
      guard let list = try? CallList(validating: [given], field: key), let first = list.calls.first else {
        throw .badRequest("\(field).\(key) must be a call like SLCARES or KJ7ABC-7")
      }
      return StationAddress.canonical(first)
    }
    let id = try text("id", maxLength: 16)
    let bypass = try flag("bypass") ?? false
    guard let kindText = try text("kind", maxLength: 16) else {
      throw .badRequest("\(field).kind is required")
    }
    guard let kind = SubscriptionKind(rawValue: kindText) else {
      throw .badRequest(#"\#(field).kind must be "bulletin", "group", "nws", "watch" or "net""#)
    }
    let rule: SubscriptionRule
    switch kind {
    case .bulletin:
      guard let match = try text("match", maxLength: 16) else {
        throw .badRequest("\(field).match is required")
      }
      do {
        rule = .bulletin(try BulletinPattern(match))
      } catch {
        throw .badRequest(
          "\(field).match must be a bulletin addressee pattern such as BLN* or BLN?WX (BLN, then letters, digits,"
            + " ? or *; at most 9 characters)")
      }
    case .group:
      rule = .group(call: try call("call"))
    case .nws:
      guard case .array(let elements)? = object["zones"], (1...50).contains(elements.count) else {
        throw .badRequest("\(field).zones must be an array of 1 to 50 zone codes such as OHC081")
      }
      var zones = Set<String>()
      for (index, element) in elements.enumerated() {
        guard case .string(let code) = element, let zone = NWSZones.canonical(code) else {
          throw .badRequest(
            "\(field).zones[\(index)] must be a county or zone code: two letters, C or Z, three digits (OHC081),"
              + " or a BOM area: a state, _, CW, MW, PW, FW or ME, three digits (NSW_FW001)")
        }
        zones.insert(zone)
      }
      rule = .nws(zones: zones)
    case .watch:
      let watch = WatchRule(
        call: try call("call"), heardAfter: try seconds("heardAfter"), silentFor: try seconds("silentFor"),
        emergency: try flag("emergency") ?? false)
      guard watch.heardAfter != nil || watch.silentFor != nil || watch.emergency else {
        throw .badRequest("\(field) watches nothing: give heardAfter, silentFor or emergency:true")
      }
      rule = .watch(watch)
    case .net:
      rule = .net(try netRule(object, field: field))
    }
    return SubscriptionDraft(id: id, rule: rule, bypass: bypass)
  }

  /// The fields of a `net` subscription (docs/protocol.md "Nets and rooms"); anything wrong is a 400 naming it.
  private static func netRule(_ object: JSONObject, field: String) throws(APIError) -> NetRule {
    func text(_ key: String, maxLength: Int) throws(APIError) -> String? {
      guard let member = object[key], member != .null else { return nil }
      guard case .string(let string) = member, string.utf8.count <= maxLength else {
        throw .badRequest("\(field).\(key) must be a string of at most \(maxLength) bytes")
      }
      return string
    }
    guard let serverText = try text("server", maxLength: 16) else {
      throw .badRequest(#"\#(field).server is required: "ANSRVR" or "CQSRVR""#)
    }
    guard let service = NetService(call: serverText) else {
      throw .badRequest(#"\#(field).server must be "ANSRVR" or "CQSRVR", the net services this server knows"#)
    }
    guard let groupText = try text("group", maxLength: 16) else {
      throw .badRequest("\(field).group is required")
    }
    guard let group = NetService.groupName(groupText) else {
      throw .badRequest("\(field).group must be one word of 1 to 9 letters or digits, such as HOTG")
    }
    var join: NetRule.Join = service.silentJoinText(group: group) == nil ? .post : .silent
    if let joinText = try text("join", maxLength: 16) {
      guard let given = NetRule.Join(rawValue: joinText) else {
        throw .badRequest(#"\#(field).join must be "silent" or "post""#)
      }
      join = given
    }
    if join == .silent, service.silentJoinText(group: group) == nil {
      throw .badRequest(
        #"\#(field).join: \#(service.call) has no silent join (a member registers by posting); use "post""#)
    }
    var postText: String?
    if let given = try text("text", maxLength: 256) {
      guard join == .post else {
        throw .badRequest("\(field).text is what a post join posts; join is silent")
      }
      var trimmed = given
      while trimmed.unicodeScalars.last == " " { trimmed.unicodeScalars.removeLast() }
      if let problem = OutgoingMessage.textProblem(trimmed) { throw .badRequest("\(field).text: \(problem)") }
      guard service.postText(group: group, text: trimmed) != nil else {
        throw .badRequest(
          "\(field).text is too long: CQ \(group) and the text must fit \(NetService.maximumTextLength) characters"
        )
      }
      postText = trimmed
    }
    var renew = true
    if let member = object["renew"], member != .null {
      guard case .bool(let bool) = member else {
        throw .badRequest("\(field).renew must be true or false, not \(member.typeName)")
      }
      renew = bool
    }
    var digest = NetRule.defaultDigestSeconds
    if let member = object["digest"], member != .null {
      let range = Int64(NetRule.minimumDigestSeconds)...Int64(NetRule.maximumDigestSeconds)
      guard case .number(let number) = member, let integer = number.int64, range.contains(integer) else {
        throw .badRequest(
          "\(field).digest must be a number of seconds from \(NetRule.minimumDigestSeconds) to"
            + " \(NetRule.maximumDigestSeconds)")
      }
      digest = Int(integer)
    }
    return NetRule(
      service: service, group: group, join: join, text: postText, renew: renew, digestSeconds: digest)
  }
}
