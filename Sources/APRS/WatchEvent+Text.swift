extension WatchEvent {
  /// The event as one line for a person (a watch entry's `text`, a push's body): `heard after 2 h 5 min at
  /// 41.12345, -81.23456`, `silent for 2 h`, and an emergency with where it was found, the position and the
  /// text it was found in: `EMERGENCY (Mic-E) at …`, `EMERGENCY (position comment) at …: <comment>`,
  /// `EMERGENCY (status): <status>`, `EMERGENCY (object FIRE1): <text>`.
  public var text: String {
    switch self {
    case .heard(let report, let silenceMs):
      return "heard after " + Self.duration(ms: silenceMs) + Self.detail(report)
    case .silent(let silenceMs):
      return "silent for " + Self.duration(ms: silenceMs)
    case .emergency(let report):
      let place = report.emergencyIn.map { " (" + $0.description + ")" } ?? ""
      let found = report.emergencyText.map { $0.isEmpty ? "" : ": " + $0 } ?? ""
      return "EMERGENCY" + place + Self.detail(report) + found
    }
  }

  /// The report this event carries, if any.
  public var report: StationReport? {
    switch self {
    case .heard(let report, _), .emergency(let report): report
    case .silent: nil
    }
  }

  /// `45 min`, `2 h 5 min`, `3 d 4 h` (rounded down to the minute; at least `1 min`).
  public static func duration(ms: Int64) -> String {
    let minutes = max(1, ms / 60_000)
    let days = minutes / 1440
    let hours = minutes / 60 % 24
    let rest = minutes % 60
    if days > 0 { return "\(days) d" + (hours > 0 ? " \(hours) h" : "") }
    if hours > 0 { return "\(hours) h" + (rest > 0 ? " \(rest) min" : "") }
    return "\(rest) min"
  }

  /// `: <status>` for a status report, ` at <lat>, <lon>` for a position (5 decimals), else nothing.
  private static func detail(_ report: StationReport) -> String {
    if let status = report.status, !status.isEmpty { return ": " + status }
    guard let latitude = report.latitude, let longitude = report.longitude else { return "" }
    return " at " + fixed5(latitude) + ", " + fixed5(longitude)
  }

  /// A coordinate with 5 decimals (about a metre), without Foundation.
  private static func fixed5(_ value: Double) -> String {
    let units = Int64((abs(value) * 100_000).rounded())
    let fraction = String(units % 100_000)
    return (value < 0 && units != 0 ? "-" : "") + String(units / 100_000) + "."
      + String(repeating: "0", count: 5 - fraction.count) + fraction
  }
}
