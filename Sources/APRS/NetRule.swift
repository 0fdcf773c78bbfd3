/// A net membership a station subscribes to (subscription kind `net`, docs/protocol.md "Nets and rooms"): the
/// service and group, how the station joins, whether its membership is renewed, and how often its room may push.
public struct NetRule: Hashable, Sendable {
  /// How the station joins the group.
  public enum Join: String, Hashable, Sendable, CaseIterable {
    /// Without posting: the service's silent join (ANSRVR `K GROUP`). A service without one (CQSRVR) cannot be
    /// joined silently.
    case silent
    /// By posting ``NetRule/text`` to the group (`CQ GROUP text`).
    case post
  }

  /// The shortest `digest` (s): 0, every entry pushed as it comes.
  public static let minimumDigestSeconds = 0
  /// The longest `digest` (s): a day.
  public static let maximumDigestSeconds = 86_400
  /// `digest` when not given (s): ten minutes, about a dozen pushes in a two-hour net.
  public static let defaultDigestSeconds = 600
  /// The text a `post` join posts when none is given: `QRV` ("I am ready"), the operator's word for being on.
  public static let defaultJoinText = "QRV"

  /// The service.
  public var service: NetService
  /// The group, upper case (``NetService/groupName(_:)``).
  public var group: String
  /// How the station joins.
  public var join: Join
  /// What a `post` join posts; nil for a silent join.
  public var text: String?
  /// Whether the listener renews the membership before the service lets it lapse (``NetService/membershipMs``),
  /// while the station is active.
  public var renew: Bool
  /// The least time between two pushes of the room (s, 0…86400).
  public var digestSeconds: Int

  public init(
    service: NetService, group: String, join: Join, text: String? = nil, renew: Bool = true,
    digestSeconds: Int = NetRule.defaultDigestSeconds
  ) {
    self.service = service
    self.group = group
    self.join = join
    self.text = join == .post ? (text ?? Self.defaultJoinText) : nil
    self.renew = renew
    self.digestSeconds = digestSeconds
  }

  /// The room, `SERVICE/GROUP` (`ANSRVR/HOTG`).
  public var room: NetRoom { NetRoom(service: service, group: group) }

  /// The text of the join: the silent join, or the post.
  public var joinText: String? {
    switch join {
    case .silent: service.silentJoinText(group: group)
    case .post: service.postText(group: group, text: text ?? Self.defaultJoinText)
    }
  }
}

/// A net's room, `SERVICE/GROUP` (`ANSRVR/HOTG`): how entries, sends and memberships name a group of a service.
public struct NetRoom: Hashable, Sendable, CustomStringConvertible {
  /// The service.
  public var service: NetService
  /// The group, upper case.
  public var group: String

  public init(service: NetService, group: String) {
    self.service = service
    self.group = group
  }

  /// `room` parsed (any case): a known service, `/`, a group name; nil otherwise.
  public init?(_ room: some StringProtocol) {
    let parts = room.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, let service = NetService(call: parts[0]),
      let group = NetService.groupName(String(parts[1]))
    else { return nil }
    self.init(service: service, group: group)
  }

  public var description: String { "\(service.call)/\(group)" }
}
