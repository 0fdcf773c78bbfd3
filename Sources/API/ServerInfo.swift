/// What `GET /v1/info` says about this server (docs/protocol.md, "Server information"): its name and version, the
/// version of the `/v1` protocol it speaks, the features it offers, the longest long-poll `wait`, and the VAPID
/// public key when Web Push is on. The responder fills it from its configuration and the listener's public key
/// file.
public struct ServerInfo: Sendable {
  /// The `server` member.
  public static let name = "aprs-cloud"

  /// The `protocolVersion` member: the version of the `/v1` contract this build speaks, `"MAJOR.MINOR"`
  /// (docs/protocol.md "Versions" lists what each one added). A minor version only adds (new endpoints, new
  /// opt-in fields, new features); what a client of an older one gets never changes. `features` still says what
  /// is switched on here.
  public static let protocolVersion = "1.6"

  /// The `version` member.
  public var version = "0.1"
  /// `/v1/sync` takes `wait` (the `longpoll` feature).
  public var longPoll = false
  /// The longest `wait`, seconds (`maxWait`).
  public var maxWaitSeconds = 300
  /// `POST /v1/send` is on (`[send] enabled`; the `send` feature).
  public var send = false
  /// `POST /v1/settings` (every build has it; the `settings` feature).
  public var settings = true
  /// `[messaging.webpush]` is on: with a VAPID public key, `webpush` and `unifiedpush` are features.
  public var webPush = false
  /// The VAPID public key (unpadded base64url of the 65-byte point) as the listener published it, read at each
  /// request (the listener may make it after the responder started); nil while there is none.
  public var vapidPublicKey: @Sendable () -> String? = { nil }
  /// The forward target types `/v1/settings` `forward` takes here (the `forward` member): `ntfy` and `webhook`
  /// while `[forward]` is on, `email` first when the listener has an SMTP server; empty (no member) when off.
  public var forwardTypes: [String] = []

  public init() {}

  /// The features, in docs/protocol.md's order, then `claim` (every build has `POST /v1/claim`); `send` only when it is on and the listener's login `transmits`;
  /// Web Push and UnifiedPush only once a VAPID key is known (a client cannot subscribe without it).
  public func features(vapidPublicKey key: String?, transmits: Bool = true) -> [String] {
    var features: [String] = []
    if longPoll { features.append("longpoll") }
    if send && transmits { features.append("send") }
    if webPush && key != nil { features += ["webpush", "unifiedpush"] }
    if settings { features.append("settings") }
    features.append("claim")
    return features
  }
}
