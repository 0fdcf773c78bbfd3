import Store

extension ListenerStatus {
  /// The status the listener publishes (`Database.publishListenerStatus`, every few seconds and on every state
  /// change, never per line): its connection's status, its login, when it read its last line (epoch ms, nil
  /// before the first), its line rate (lines per second over the last minute), its counters since start, and
  /// when this status was made and when the listener started (epoch ms), and whether copies of sent messages
  /// wait for the transmit budget, and the last hour minute by minute, and whose own transmissions the filter
  /// follows.
  init(
    connection status: ConnectionStatus, login: String, lastLineAt: Int64?, lineRate: Double,
    counts: ListenerCounts, updatedAt: Int64, startedAt: Int64, sendBudgetFull: Bool = false,
    history: ActivityHistory = ActivityHistory()
  ) {
    self.init(
      state: status.state, connected: status.connected, verified: status.verified,
      receiveOnly: status.receiveOnly, server: status.server, login: login, filterSize: status.filterStations,
      filterBytes: status.filterBytes, filterEntries: status.filterEntries,
      filterExactStations: status.filterExactStations, lastLineAt: lastLineAt,
      lineRate: lineRate, updatedAt: updatedAt, startedAt: startedAt, lastError: status.lastError,
      counts: counts, sendBudgetFull: sendBudgetFull, history: history,
      ownFollowed: status.ownTransmissions.followed, ownFellBack: status.ownTransmissions.fellBack)
  }
}
