import Config
import JSON
import Store

extension RequestBody {
  /// `forward` of `POST /v1/settings` (docs/api.md "Forwarding"): nil when absent; otherwise the whole new list (at most
  /// ``Store/ForwardTarget/maximumPerStation`` objects), each
  /// - `{"type":"email","to":"me@example.org"}` (only when the server has an SMTP server);
  /// - `{"type":"ntfy","url":"https://…","token"?:"…","priority"?:1–5}`;
  /// - `{"type":"webhook","url":"https://…","secret":"16–256 printable ASCII characters"}`;
  /// with `always` (bool) and `id` (keeps a target the station has; then `type` and the address may be left out).
  /// URLs are `https://`, at most 1024 bytes, without user info or a fragment, an ntfy URL without a query
  /// (``urlQueryProblem(_:kind:)``), and (unless `allowPrivate`) not on `localhost` or a loopback or private address
  /// literal. Anything wrong is a 400 naming it (`forward[2].url`).
  func forwardDrafts(emailAvailable: Bool, allowPrivate: Bool) throws(APIError) -> [ForwardDraft]? {
    guard let value = self["forward"] else { return nil }
    guard case .array(let items) = value else {
      throw .badRequest("forward must be an array of objects, not \(value.typeName)")
    }
    guard items.count <= ForwardTarget.maximumPerStation else {
      throw .badRequest(
        "forward holds \(items.count) targets; at most \(ForwardTarget.maximumPerStation)")
    }
    var drafts: [ForwardDraft] = []
    for (index, item) in items.enumerated() {
      drafts.append(
        try Self.forwardDraft(
          item, field: "forward[\(index)]", emailAvailable: emailAvailable, allowPrivate: allowPrivate))
    }
    return drafts
  }

  /// Why a forward URL's query is refused, as the end of a sentence, or nil (a fragment never passes
  /// `WebPushEndpoint`).
  ///
  /// An ntfy URL takes no query: the title, tags and priority go as headers and the access token as `token` (sent
  /// as `Authorization`, answered only as a hint), while a query would keep ntfy's `?auth=` token in the URL,
  /// stored and answered in full. A webhook keeps its query: some receivers take their own key there (Azure
  /// Functions' `?code=`, Google Chat's `?key=…&token=…`) and the webhook has no other field for it.
  static func urlQueryProblem(_ url: String, kind: ForwardKind?) -> String? {
    guard kind == .ntfy, url.utf8.contains(UInt8(ascii: "?")) else { return nil }
    return "must have no query (?…): send an access token as token, not as ?auth= in the URL"
  }

  private static func forwardDraft(
    _ value: JSONValue, field: String, emailAvailable: Bool, allowPrivate: Bool
  ) throws(APIError) -> ForwardDraft {
    guard case .object(let object) = value else {
      throw .badRequest("\(field) must be an object with a type, not \(value.typeName)")
    }
    func text(_ key: String, maxLength: Int) throws(APIError) -> String? {
      guard let member = object[key], member != .null else { return nil }
      guard case .string(let string) = member, !string.isEmpty, string.utf8.count <= maxLength else {
        throw .badRequest("\(field).\(key) must be a non-empty string of at most \(maxLength) bytes")
      }
      return string
    }
    func printable(_ key: String, minLength: Int, maxLength: Int) throws(APIError) -> String? {
      guard let given = try text(key, maxLength: maxLength) else { return nil }
      guard given.utf8.count >= minLength, given.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
        throw .badRequest(
          "\(field).\(key) must be \(minLength) to \(maxLength) printable ASCII characters without spaces")
      }
      return given
    }
    var draft = ForwardDraft()
    draft.id = try text("id", maxLength: 16)
    if let member = object["always"], member != .null {
      guard case .bool(let always) = member else {
        throw .badRequest("\(field).always must be true or false, not \(member.typeName)")
      }
      draft.always = always
    }
    if let typeText = try text("type", maxLength: 16) {
      guard let kind = ForwardKind(rawValue: typeText) else {
        throw .badRequest(#"\#(field).type must be "email", "ntfy" or "webhook""#)
      }
      draft.kind = kind
    } else if draft.id == nil {
      throw .badRequest("\(field).type is required")
    }
    switch draft.kind {
    case .email:
      guard emailAvailable else {
        throw .badRequest("\(field).type: this server does not forward to email (no SMTP server configured)")
      }
      if let to = try text("to", maxLength: 254) {
        guard PushConfig.isMailAddress(to) else {
          throw .badRequest("\(field).to must be a mail address such as me@example.org")
        }
        draft.address = to
      } else if draft.id == nil {
        throw .badRequest("\(field).to is required")
      }
    case .ntfy, .webhook:
      if let url = try text("url", maxLength: WebPushEndpoint.maxBytes) {
        guard let endpoint = WebPushEndpoint(url) else {
          throw .badRequest(
            "\(field).url must be an https:// URL of at most \(WebPushEndpoint.maxBytes) bytes, without user info or a"
              + " fragment"
          )
        }
        if endpoint.isPrivateHost && !allowPrivate {
          throw .badRequest(
            "\(field).url is on this machine or a private network; forwarding goes to public hosts")
        }
        if let problem = Self.urlQueryProblem(url, kind: draft.kind) {
          throw .badRequest("\(field).url \(problem)")
        }
        draft.address = url
      } else if draft.id == nil {
        throw .badRequest("\(field).url is required")
      }
      if draft.kind == .webhook {
        draft.secret = try printable("secret", minLength: 16, maxLength: 256)
        if draft.secret == nil && draft.id == nil {
          throw .badRequest("\(field).secret is required: 16 to 256 printable ASCII characters")
        }
      } else {
        draft.secret = try printable("token", minLength: 1, maxLength: 256)
      }
    case nil:
      for key in ["to", "url", "secret", "token"] where object[key] != nil {
        throw .badRequest("\(field).\(key) needs the target's type")
      }
    }
    if let member = object["priority"], member != .null {
      guard case .number(let number) = member, let priority = number.int64, (1...5).contains(priority) else {
        throw .badRequest("\(field).priority must be a whole number from 1 to 5")
      }
      draft.priority = Int(priority)
    }
    return draft
  }
}
