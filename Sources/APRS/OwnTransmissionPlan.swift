/// Which stations that asked to follow their own transmissions (`ackPolicy:"fallback"`: the listener hears the
/// station's radio answer through an igate) the `#filter` line follows, and which fell back (their messages are then
/// ACKed as under `ackPolicy:"server"`): what ``FilterPlanner/plan(maximumLineLength:extraAddressees:extraSenders:ownTransmissions:)``
/// decided, for `/health` and the station's settings answer.
public struct OwnTransmissionPlan: Hashable, Sendable {
  /// The stations whose own packets the line lets through (an exact `b/` entry of their own, or a `b/` entry that was
  /// there anyway: outgoing tracking, a watch), as addresses (`CALL` or `CALL-SSID`), sorted.
  public let followed: [String]
  /// The stations the line had no room for, in the planner's order of precedence (the oldest request first).
  public let fellBack: [String]

  /// Makes a value from its parts.
  public init(followed: [String], fellBack: [String]) {
    self.followed = followed
    self.fellBack = fellBack
  }

  /// No station asked.
  public static let none = OwnTransmissionPlan(followed: [], fellBack: [])
}
