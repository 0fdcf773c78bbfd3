import Store

extension APIHandler {
  /// The `/v1/send` families of `/metrics`: sends by outcome (accepted, then each final state), copies
  /// transmitted, copies the transmit budget delayed, and the sends in flight. Counted in the database since it
  /// was created.
  func writeSendMetrics(_ sends: SendStatus, to out: inout PrometheusText) {
    out.family(
      "aprs_cloud_sends_total", "counter",
      "Messages sent through /v1/send, by outcome: accepted (stored for the listener), then acked, rejected,"
        + " expired (no answer after the last copy), cancelled (stopped by the station) or completed (a bulletin or"
        + " announcement whose schedule is over), since the database was created.")
    out.sample("aprs_cloud_sends_total", [("outcome", "accepted")], String(sends.accepted))
    for state in SendState.allCases where state != .pending {
      out.sample("aprs_cloud_sends_total", [("outcome", state.rawValue)], String(sends[state]))
    }
    out.single(
      "aprs_cloud_send_transmissions_total", "counter",
      "Copies of sent messages transmitted on APRS-IS (first copies and retries), since the database was created.",
      String(sends.transmissions))
    out.single(
      "aprs_cloud_bulletin_transmissions_total", "counter",
      "Copies of bulletins and announcements sent through /v1/send transmitted on APRS-IS (unnumbered, on the"
        + " bulletin schedule; also counted in aprs_cloud_send_transmissions_total), since the database was created.",
      String(sends.bulletinTransmissions))
    out.single(
      "aprs_cloud_send_copies_delayed_total", "counter",
      "Copies of sent messages that waited for the listener's transmit budget ([send] transmitBudgetPerMinute)"
        + " before going out, since the database was created.",
      String(sends.budgetDelayed))
    out.single(
      "aprs_cloud_sends_in_flight", "gauge",
      "Sent messages waiting for an answer (transmitted on their schedule until acked, rejected or expired), and"
        + " bulletins and announcements whose schedule still runs.",
      String(sends.inFlight))
  }
}
