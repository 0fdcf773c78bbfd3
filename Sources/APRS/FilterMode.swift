/// Where the listener's APRS-IS filter has to go, by size (APRS-IS.md "Filters").
public enum FilterMode: String, Hashable, Sendable {
  /// The spec fits a live `#filter` line (at most ``FilterPlan/maximumLiveLineLength`` bytes): change it on
  /// the open connection.
  case live
  /// Too long for `#filter`, but fits the login line (``FilterPlan/maximumLoginLineLength``): reconnect to
  /// change it.
  case login
  /// Too long even for the login line: take the full feed (port 10152) and filter locally.
  case fullFeed
}
