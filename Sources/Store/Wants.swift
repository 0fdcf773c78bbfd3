/// What a client opted in to (docs/protocol.md "Opt-in answers (`want`)"): the `want` array of `/v1/register` and
/// `/v1/sync`, parsed once (the API's `RequestBody.wants()`), and kept with the device a register creates
/// (`devices.wants`, this bit set) so the push sender knows what the device takes. Without a name, every answer
/// and push is exactly what the shipping app gets.
public struct Wants: OptionSet, Sendable, Hashable {
  public let rawValue: Int

  public init(rawValue: Int) { self.rawValue = rawValue }

  /// `"ssids"`: entries for other SSIDs of the call (settings `ssids`, `ackSsids`), each with `to`, and their
  /// pushes, naming `to`.
  public static let ssids = Wants(rawValue: 1 << 0)

  /// `"subscriptions"`: entries of the station's subscriptions (setting `subscriptions`: bulletins, groups, NWS
  /// zones, watched stations), each with its `type`, and their low-priority pushes.
  public static let subscriptions = Wants(rawValue: 1 << 1)

  /// `"inbox"`: answers paged (at most `Database.inboxPageSize` messages, `more:true` and the cursor to go on)
  /// and saying what was evicted unpulled (`dropped`, `oldestTimestamp`).
  public static let inbox = Wants(rawValue: 1 << 2)

  /// `"answeredBy"`: a received message the station's own radio answered (`ackPolicy:"fallback"`) carries
  /// `answeredBy:"air"`.
  public static let answeredBy = Wants(rawValue: 1 << 3)

  /// `"sent"`: the `sent` entries of what the station's own radio or other apps sent (`trackSent`), each with
  /// its `state` (`sent`, `acked`, `rejected`).
  public static let sent = Wants(rawValue: 1 << 4)

  /// `"rooms"`: the entries of the station's nets (subscription kind `net`): the service's fan-out and answers and
  /// the station's own sends to the service, each with `type:"net"` and its `room`, and the room's digest pushes.
  public static let rooms = Wants(rawValue: 1 << 5)

  /// The names this build knows, as `want` spells them.
  public static let names: [(name: String, wants: Wants)] = [
    ("ssids", .ssids), ("subscriptions", .subscriptions), ("inbox", .inbox), ("answeredBy", .answeredBy),
    ("sent", .sent), ("rooms", .rooms),
  ]

  /// The option `name` stands for; nil for a name this build does not know (ignored: clients may ask for what
  /// a newer server offers).
  public init?(name: some StringProtocol) {
    guard let known = Self.names.first(where: { $0.name == name }) else { return nil }
    self = known.wants
  }

  /// The names of the options set, in ``names`` order.
  public var nameList: [String] { Self.names.filter { contains($0.wants) }.map(\.name) }
}
