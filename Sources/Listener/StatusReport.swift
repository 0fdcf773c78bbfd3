/// The listener's state as written to the database's `meta` table (keys `listener.*`), where `/health` (and later
/// `/metrics`) read it. Written every few seconds and on every state change, never per line.
public struct StatusReport: Sendable, Equatable {
  public var status: ConnectionStatus
  /// The login name in use.
  public var login: String
  /// Epoch ms of the last line read; nil before the first.
  public var lastLineAt: Int64?
  /// Lines per second over the last minute.
  public var lineRate: Double
  /// Counters since start, by their meta name (`linesRead`, `messagesStored`, …).
  public var counters: [(String, Int)]
  /// When this report was made (epoch ms).
  public var updatedAt: Int64
  /// When the listener started (epoch ms).
  public var startedAt: Int64

  public init(
    status: ConnectionStatus, login: String, lastLineAt: Int64?, lineRate: Double, counters: [(String, Int)],
    updatedAt: Int64, startedAt: Int64
  ) {
    self.status = status
    self.login = login
    self.lastLineAt = lastLineAt
    self.lineRate = lineRate
    self.counters = counters
    self.updatedAt = updatedAt
    self.startedAt = startedAt
  }

  public static func == (lhs: StatusReport, rhs: StatusReport) -> Bool {
    lhs.metaValues.elementsEqual(rhs.metaValues) { $0 == $1 }
  }

  /// The meta key prefix.
  public static let prefix = "listener."

  /// The counters published, in order, as `listener.<name>`.
  public static let counterNames = [
    "linesRead", "messagesStored", "duplicates", "receipts", "acksSent", "acksSuppressed", "acksDropped",
    "drops",
    "invalidLines", "tooLong", "skipped", "reconnects",
  ]

  /// Every key and value to write.
  public var metaValues: [(key: String, value: String)] {
    var values: [(key: String, value: String)] = [
      ("listener.state", status.state),
      ("listener.connected", status.connected ? "1" : "0"),
      ("listener.verified", status.verified ? "1" : "0"),
      ("listener.receiveOnly", status.receiveOnly ? "1" : "0"),
      ("listener.server", status.server ?? ""),
      ("listener.login", login),
      ("listener.filterMode", status.filterMode.rawValue),
      ("listener.filterSize", String(status.filterStations)),
      ("listener.filterBytes", String(status.filterBytes)),
      ("listener.lastLineAt", lastLineAt.map { String($0) } ?? ""),
      ("listener.lineRate", Self.decimal(lineRate)),
      ("listener.updatedAt", String(updatedAt)),
      ("listener.startedAt", String(startedAt)),
    ]
    for (name, value) in counters { values.append(("listener." + name, String(value))) }
    return values
  }

  /// `value` with two decimals, without Foundation (`12.50`).
  static func decimal(_ value: Double) -> String {
    guard value.isFinite, value > 0 else { return "0.00" }
    let hundredths = Int((value * 100).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + String(fraction)
  }
}
