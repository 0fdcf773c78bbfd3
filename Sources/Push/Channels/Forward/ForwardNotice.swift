import Store

/// What the push to a station's own devices says when one of its forward targets was disabled (docs/api.md
/// "Forwarding (email, ntfy, webhooks)"): which target, where it delivered, and the service's answer. Sent once, when the target is
/// disabled, to the devices registered with the station key.
public struct ForwardNotice: Sendable, Equatable {
  /// The target's id (data key `target`).
  public var id: String
  /// Its type.
  public var kind: ForwardKind
  /// Where it delivered, as shown: the mail address, or the URL's origin (its path may be a secret: an ntfy topic,
  /// a webhook's token).
  public var place: String
  /// Why it was disabled (the service's answer, as the settings answer shows it).
  public var reason: String

  public init(id: String, kind: ForwardKind, place: String, reason: String) {
    self.id = id
    self.kind = kind
    self.place = place
    self.reason = reason
  }

  /// The notice of `target` disabled for `reason`.
  init(_ target: ForwardTarget, reason: String) {
    self.init(
      id: target.id, kind: target.kind,
      place: target.kind == .email ? target.address : CurlMulti.origin(of: target.address), reason: reason)
  }

  /// The banner, whatever the previews (it carries no message text): `N0CALL-7: forwarding to ntfy stopped`.
  func text(station: String) -> NotificationText {
    NotificationText(
      title: "\(station): forwarding to \(kind.rawValue) stopped",
      body:
        "\(place): \(reason). Nothing more is forwarded there until the target is changed in the station's"
        + " settings.")
  }

  /// The data map: `kind` `forwardDisabled`, `to` (the station), `target` (the target's id).
  func data(station: String) -> [(key: String, value: String)] {
    [("kind", "forwardDisabled"), ("to", station), ("target", id)]
  }
}
