/// What the listener calls itself on APRS-IS (`vers aprs-cloud 0.1` in the login line).
enum ListenerVersion {
  /// The software name in the login line's `vers`.
  static let softwareName = "aprs-cloud"
  /// The software version in the login line's `vers` (one word: aprsc refuses a name without a version).
  static let current = "0.1"
}
