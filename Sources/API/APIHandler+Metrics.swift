import APRS
import CompanionFiles
import Platform
import Store

extension APIHandler {
  /// The metric name and help of a listener counter (counted since the listener started).
  static func metric(of counter: ListenerCounter) -> (name: String, help: String) {
    switch counter {
    case .linesRead:
      (
        "aprs_cloud_listener_lines_read_total",
        "Lines read from APRS-IS (packets, server comments and over-long lines)."
      )
    case .messagesStored:
      ("aprs_cloud_listener_messages_stored_total", "Messages stored for registered stations.")
    case .duplicates:
      (
        "aprs_cloud_listener_duplicates_total",
        "Retransmitted copies of stored messages: not stored or pushed again (still ACKed)."
      )
    case .receipts:
      (
        "aprs_cloud_listener_receipts_total",
        "Acks and rejs recorded for messages that registered stations sent."
      )
    case .acksSent:
      ("aprs_cloud_listener_acks_sent_total", "ACK lines sent to APRS-IS for stored messages.")
    case .acksSuppressed:
      (
        "aprs_cloud_listener_acks_suppressed_total",
        "ACKs held back because the same message was ACKed less than 30 s before."
      )
    case .acksDropped:
      (
        "aprs_cloud_listener_acks_dropped_total",
        "ACKs not sent: no connection, or the outgoing buffer was full."
      )
    case .drops:
      ("aprs_cloud_listener_lines_dropped_total", "Packet lines dropped because the storage queue was full.")
    case .invalidLines:
      (
        "aprs_cloud_listener_invalid_lines_total",
        "Lines that are not TNC2 packets (over-long ones included)."
      )
    case .tooLong:
      ("aprs_cloud_listener_too_long_lines_total", "Lines over 512 bytes, skipped.")
    case .skipped:
      (
        "aprs_cloud_listener_skipped_lines_total",
        "Packets that led to nothing: not a message for a registered station, bulletins, ..."
      )
    case .notForUs:
      (
        "aprs_cloud_listener_not_for_us_total",
        "Messages, acks and rejs for addressees that are not registered (let through by the filter's prefixes"
          + " or APRS-IS's own rules), dropped; also in skipped_lines_total."
      )
    case .reconnects:
      ("aprs_cloud_listener_reconnects_total", "APRS-IS connections that ended and were made again.")
    case .blocked:
      (
        "aprs_cloud_listener_messages_total",
        "Messages for registered stations by what became of them: stored, duplicate (a copy of a stored one)"
          + " or blocked (the addressee blocks the sender: not stored, ACKed or pushed)"
          + " or banned (the operator banned the sender: the same)."
      )
    case .banned: metric(of: .blocked)
    case .bulletinEntries, .groupEntries, .nwsEntries, .watchEntries, .netEntries:
      (
        "aprs_cloud_listener_subscription_entries_total",
        "Subscription entries stored for registered stations, by kind (bulletin, group, nws, watch, net)."
      )
    case .airAnswered:
      (
        "aprs_cloud_listener_acks_saved_by_radio_total",
        "Messages to stations with ackPolicy fallback that the station's own radio answered within the wait:"
          + " no ACK from this server."
      )
    case .fallbackAcks:
      (
        "aprs_cloud_listener_fallback_acks_total",
        "ACKs this server sent for stations with ackPolicy fallback because their radio was not heard"
          + " answering within the wait."
      )
    }
  }

  /// `GET /metrics`: Prometheus text (version 0.0.4) with the responder's own request counters and
  /// latency histograms, the database's counts, and the state and counters the listener, the push
  /// sender and the store's maintenance publish (`ListenerStatus`, `PushStatus`, `MaintenanceStatus`). Always 200: when the database does not answer,
  /// `aprs_cloud_database_up` is 0 and only the responder's own metrics follow.
  func metrics() -> APIResponse {
    let now = clock()
    var out = PrometheusText()
    if let requestMetrics { writeRequestMetrics(requestMetrics, now: now, to: &out) }
    do {
      let stats = try database.stats(now: now, expiryMs: config.stationExpiryMs)
      let listener = try database.listenerStatus()
      let push = try database.pushStatus()
      let maintenance = try database.maintenanceStatus()
      let limits = try database.limitStatus()
      let sends = try database.sendStatus()
      let bans = try database.bans(now: now)
      let forwardTargets = try database.forwardTargetCounts()
      let netMembers = try database.netMemberCounts()
      out.single(
        "aprs_cloud_database_up", "gauge", "1 when the database answered this scrape, 0 when it did not.", "1"
      )
      writeDatabaseMetrics(stats, maintenance: maintenance, now: now, to: &out)
      writeLimitMetrics(limits, to: &out)
      writeListenerMetrics(listener, lease: stats.lease, now: now, to: &out)
      writeBeaconMetrics(listenerBeacon(), to: &out)
      writePushMetrics(push, to: &out)
      writeForwardTargetMetrics(forwardTargets, to: &out)
      writeSendMetrics(sends, to: &out)
      out.family(
        "aprs_cloud_net_members", "gauge",
        "Stations' memberships of net groups in force (joined through this server and not left), by service.")
      for service in NetService.allCases {
        out.sample("aprs_cloud_net_members", [("service", service.call)], String(netMembers[service] ?? 0))
      }
      out.family("aprs_cloud_bans", "gauge", "The operator's bans in force (aprs-cloud ban), by kind.")
      for kind in BanKind.allCases {
        out.sample(
          "aprs_cloud_bans", [("kind", kind.rawValue)], String(bans.count { $0.target.kind == kind }))
      }
    } catch {
      out.single(
        "aprs_cloud_database_up", "gauge", "1 when the database answered this scrape, 0 when it did not.", "0"
      )
    }
    return APIResponse(status: 200, body: out.bytes, contentType: PrometheusText.contentType)
  }

  // MARK: The responder's own

  private func writeRequestMetrics(_ metrics: RequestMetrics, now: Int64, to out: inout PrometheusText) {
    let snapshot = metrics.snapshot()
    let perProcess =
      " Kept in memory by this responder process: starts from 0 when it restarts; in CGI mode every"
      + " request is its own process, so it only ever counts that one request."
    out.family(
      "aprs_cloud_http_requests_total", "counter",
      "Requests answered, by endpoint (the API path, or other) and HTTP status." + perProcess)
    for endpoint in RequestMetrics.endpointLabels {
      for (status, count) in (snapshot.requests[endpoint] ?? [:]).sorted(by: { $0.key < $1.key }) {
        out.sample(
          "aprs_cloud_http_requests_total", [("endpoint", endpoint), ("status", String(status))],
          String(count))
      }
    }
    out.family(
      "aprs_cloud_http_request_duration_seconds", "histogram",
      "Time from a request's arrival at the responder to its answer written, by endpoint." + perProcess)
    // Only endpoints that were asked for: 16 lines each.
    for endpoint in RequestMetrics.endpointLabels {
      guard let histogram = snapshot.latency[endpoint], histogram.count > 0 else { continue }
      var cumulative = 0
      for (index, bucket) in RequestMetrics.buckets.enumerated() {
        cumulative += histogram.buckets[index]
        out.sample(
          "aprs_cloud_http_request_duration_seconds_bucket", [("endpoint", endpoint), ("le", bucket.label)],
          String(cumulative))
      }
      out.sample(
        "aprs_cloud_http_request_duration_seconds_bucket", [("endpoint", endpoint), ("le", "+Inf")],
        String(histogram.count))
      out.sample(
        "aprs_cloud_http_request_duration_seconds_sum", [("endpoint", endpoint)],
        PrometheusText.number(Double(histogram.sumMicroseconds) / 1_000_000))
      out.sample(
        "aprs_cloud_http_request_duration_seconds_count", [("endpoint", endpoint)], String(histogram.count))
    }
    out.single(
      "aprs_cloud_http_requests_in_flight", "gauge",
      "Requests this responder process is answering now (this scrape included).", String(snapshot.inFlight))
    out.single(
      "aprs_cloud_http_requests_parked", "gauge",
      "Long polls (/v1/sync with wait) held now, waiting for a message or their deadline.",
      String(metrics.parked()))
    if let wakes = metrics.listenerWakes() {
      out.family(
        "aprs_cloud_listener_wakes_total", "counter",
        "Datagrams this responder sent to wake the listener after a commit it acts on; failed: none listened"
          + " (the listener looks every 30 s anyway).")
      out.sample("aprs_cloud_listener_wakes_total", [("result", "sent")], String(wakes.sent))
      out.sample("aprs_cloud_listener_wakes_total", [("result", "failed")], String(wakes.failed))
    }
    out.single(
      "aprs_cloud_responder_start_time_seconds", "gauge",
      "When this responder process started, epoch seconds.",
      PrometheusText.seconds(ms: metrics.startedAt))
    out.family(
      "aprs_cloud_responder_info", "gauge",
      "Always 1; mode is fastcgi or cgi (in CGI mode the request metrics are per process and meaningless).")
    out.sample(
      "aprs_cloud_responder_info", [("mode", metrics.mode), ("workers", String(metrics.workers))], "1")
  }

  // MARK: The database

  private func writeDatabaseMetrics(
    _ stats: DatabaseStats, maintenance: MaintenanceStatus, now: Int64, to out: inout PrometheusText
  ) {
    out.single(
      "aprs_cloud_stations", "gauge", "Registered stations, live or expired.", String(stats.stations))
    out.single(
      "aprs_cloud_stations_live", "gauge",
      "Stations heard (register or heartbeat) within stationExpiry: the ones the listener's filter holds.",
      String(stats.liveStations))
    out.family("aprs_cloud_devices", "gauge", "Push tokens stored, by platform.")
    for platform in DevicePlatform.allCases {
      out.sample(
        "aprs_cloud_devices", [("platform", platform.rawValue)], String(stats.devices[platform]?.total ?? 0))
    }
    out.family(
      "aprs_cloud_devices_live", "gauge",
      "Push tokens refreshed within stationExpiry (the ones pushes go to), by platform.")
    for platform in DevicePlatform.allCases {
      out.sample(
        "aprs_cloud_devices_live", [("platform", platform.rawValue)],
        String(stats.devices[platform]?.live ?? 0))
    }
    out.family(
      "aprs_cloud_messages", "gauge", "Messages stored now (the newest ringSize per station), by direction.")
    for direction in MessageDirection.allCases {
      out.sample(
        "aprs_cloud_messages", [("direction", direction.rawValue)], String(stats.messages[direction] ?? 0))
    }
    out.single(
      "aprs_cloud_last_message_timestamp_seconds", "gauge",
      "When the newest message still stored was stored (received or sent), epoch seconds; 0 when none is.",
      PrometheusText.seconds(ms: stats.lastMessageTimestamp))
    out.single(
      "aprs_cloud_messages_dropped_unpulled_total", "counter",
      "Messages evicted from a station's ring (or past its untilPulled max) before the station pulled them: the"
        + " dropped count of want inbox answers. Kept in the database, so it survives restarts.",
      String(stats.droppedUnpulled))
    out.single(
      "aprs_cloud_outbox_pending", "gauge", "Pushes waiting to be sent (outbox depth), retries included.",
      String(stats.outboxPending))
    out.single(
      "aprs_cloud_outbox_failed", "gauge", "Pushes given up on, kept until their message rolls off.",
      String(stats.outboxFailed))
    out.single(
      "aprs_cloud_outbox_oldest_pending_age_seconds", "gauge",
      "Age of the oldest pending push; 0 when none is pending.",
      PrometheusText.seconds(ms: stats.oldestPendingAt.map { max(0, now - $0) } ?? 0))
    out.single(
      "aprs_cloud_database_bytes", "gauge", "Size of the main database file.", String(stats.databaseBytes))
    out.single(
      "aprs_cloud_database_free_bytes", "gauge", "Unused space inside the main database file.",
      String(Int64(stats.freePages) * Int64(stats.pageSize)))
    out.single(
      "aprs_cloud_database_wal_bytes", "gauge",
      "Size of the write-ahead log (-wal file); it shrinks only when a truncating checkpoint runs.",
      String(database.walFileBytes()))
    out.single(
      "aprs_cloud_schema_version", "gauge", "The database's schema version (applied migrations).",
      String(stats.schemaVersion))
    out.single(
      "aprs_cloud_stations_pruned_total", "counter",
      "Stations deleted because they were not heard within their expiry (since the database was created).",
      String(maintenance.stationsPruned))
    out.single(
      "aprs_cloud_devices_pruned_total", "counter",
      "Push tokens deleted because they were not refreshed within the expiry (since the database was created).",
      String(maintenance.devicesPruned))
  }

  // MARK: The limits

  /// This responder's setting of `limit` (as in its config).
  func setting(of limit: LimitName) -> Int64 {
    switch limit {
    case .registrationsPerHour: Int64(config.registrationsPerHour)
    case .heartbeatsPerHour: Int64(config.heartbeatsPerHour)
    case .avatarUploadsPerHour: Int64(config.avatarUploadsPerHour)
    case .newStationsPerAddressPerHour: Int64(config.newStationsPerAddressPerHour)
    case .newStationsPerNetworkPerHour: Int64(config.newStationsPerNetworkPerHour)
    case .newStationsPerWideNetworkPerHour: Int64(config.newStationsPerWideNetworkPerHour)
    case .avatarUploadsPerAddressPerHour: Int64(config.avatarUploadsPerAddressPerHour)
    case .maxStations: Int64(config.maxStations)
    case .devicesPerStation: Int64(config.devicesPerStation)
    case .avatarBytesTotal: config.avatarBytesTotal
    case .sendsPerAddressPerMinute: Int64(config.send.sendsPerAddressPerMinute)
    case .sendsPerMinuteGlobal: Int64(config.send.sendsPerMinuteGlobal)
    case .sendsPerNetworkPerMinute:
      Int64(SendLimits(globalPerMinute: config.send.sendsPerMinuteGlobal).share(SendLimits.networkShare))
    case .sendsPerStationPerMinute: Int64(config.send.perMinute)
    case .sendsInFlight: Int64(config.send.inFlight)
    case .bulletinsPerDay: Int64(config.send.bulletinsPerDay)
    case .keylessDevicesPerStation: Int64(config.keylessDevicesPerStation)
    case .claimsPerAddressPerHour: Int64(config.claimsPerAddressPerHour)
    case .claimsPerNetworkPerHour: Int64(config.claimsPerNetworkPerHour)
    }
  }

  /// This responder's setting of a long-poll cap (as in its config).
  func setting(of limit: ParkLimit) -> Int {
    switch limit {
    case .maxParked: config.maxParked
    case .maxParkedPerStation: config.maxParkedPerStation
    case .maxParkedPerAddress: config.maxParkedPerAddress
    }
  }

  private func writeLimitMetrics(_ limits: LimitStatus, to out: inout PrometheusText) {
    out.family(
      "aprs_cloud_limit_hits_total", "counter",
      "Requests refused by each limit (named as its config key; for devicesPerStation: push tokens replaced),"
        + " since the database was created; the [server] maxParked ones (long polls not held, or for"
        + " maxParkedPerStation answered early to make room for a newer one) since this responder process started."
    )
    for limit in LimitName.allCases {
      out.sample("aprs_cloud_limit_hits_total", [("limit", limit.rawValue)], String(limits[limit]))
    }
    for limit in ParkLimit.allCases {
      out.sample(
        "aprs_cloud_limit_hits_total", [("limit", limit.rawValue)],
        String(requestMetrics?.limitHits(limit) ?? 0))
    }
    out.family(
      "aprs_cloud_limit_setting", "gauge",
      "Each limit as this responder is configured ([ratelimit] per hour, [limits] counts and bytes,"
        + " [send] per minute, [server] long polls held).")
    for limit in LimitName.allCases {
      out.sample("aprs_cloud_limit_setting", [("limit", limit.rawValue)], String(setting(of: limit)))
    }
    for limit in ParkLimit.allCases {
      out.sample("aprs_cloud_limit_setting", [("limit", limit.rawValue)], String(setting(of: limit)))
    }
    out.single(
      "aprs_cloud_avatar_bytes", "gauge",
      "Bytes of avatar images stored, all stations together (held under [limits] avatarBytesTotal).",
      String(limits.avatarBytes))
  }

  // MARK: The listener

  private func writeListenerMetrics(
    _ listener: ListenerStatus, lease: LeaseRecord?, now: Int64, to out: inout PrometheusText
  ) {
    let running = lease.map { $0.expiresAt > now } ?? false
    func flag(_ value: Bool) -> String { running && value ? "1" : "0" }
    out.single(
      "aprs_cloud_listener_running", "gauge", "1 while a listener holds a fresh lease on the database.",
      running ? "1" : "0")
    out.single(
      "aprs_cloud_listener_connected", "gauge", "1 while the running listener is logged in to APRS-IS.",
      flag(listener.connected))
    out.single(
      "aprs_cloud_listener_verified", "gauge", "1 while the running listener's APRS-IS login is verified.",
      flag(listener.verified))
    out.single(
      "aprs_cloud_listener_receive_only", "gauge",
      "1 while nothing the listener sends gets through (no login, or an unverified one): no ACKs.",
      flag(listener.receiveOnly))
    out.single(
      "aprs_cloud_listener_send_budget_full", "gauge",
      "1 while the running listener's transmit budget ([send] transmitBudgetPerMinute) is spent and copies of"
        + " sent messages wait their turn.",
      flag(listener.sendBudgetFull))
    out.single(
      "aprs_cloud_listener_filter_stations", "gauge",
      "Registered stations the listener's APRS-IS filter covers.",
      String(listener.filterSize))
    out.single(
      "aprs_cloud_listener_filter_bytes", "gauge",
      "Length of the listener's one #filter line in bytes, CR LF included (at most 510).",
      String(listener.filterBytes))
    out.single(
      "aprs_cloud_listener_filter_entries", "gauge",
      "Entries on the listener's #filter line: exact stations and prefixes.", String(listener.filterEntries))
    out.single(
      "aprs_cloud_listener_filter_exact_stations", "gauge",
      "Stations matched by an exact entry of the filter rather than a prefix.",
      String(listener.filterExactStations))
    out.single(
      "aprs_cloud_listener_line_rate", "gauge", "Lines per second read from APRS-IS over the last minute.",
      PrometheusText.number(listener.lineRate))
    if let lastLine = listener.lastLineAt {
      out.single(
        "aprs_cloud_listener_last_line_age_seconds", "gauge", "Time since the listener read its last line.",
        PrometheusText.seconds(ms: max(0, now - lastLine)))
    }
    if let started = listener.startedAt {
      out.single(
        "aprs_cloud_listener_start_time_seconds", "gauge", "When the listener that published last started.",
        PrometheusText.seconds(ms: started))
    }
    if let updated = listener.updatedAt {
      out.single(
        "aprs_cloud_listener_published_age_seconds", "gauge",
        "Time since the listener last published its state (every few seconds while it runs).",
        PrometheusText.seconds(ms: max(0, now - updated)))
    }
    for counter in ListenerCounter.allCases
    where counter != .blocked && counter != .banned && !counter.isSubscriptionEntries {
      let metric = Self.metric(of: counter)
      out.single(
        metric.name, "counter", metric.help + " Since the listener started.", String(listener.counts[counter])
      )
    }
    // Every message for a registered station by outcome (the blocked ones are counted nowhere else).
    let messages = Self.metric(of: .blocked)
    out.family(messages.name, "counter", messages.help + " Since the listener started.")
    let outcomes: [(String, ListenerCounter)] = [
      ("stored", .messagesStored), ("duplicate", .duplicates), ("blocked", .blocked), ("banned", .banned),
    ]
    for (outcome, counter) in outcomes {
      out.sample(messages.name, [("outcome", outcome)], String(listener.counts[counter]))
    }
    let entries = Self.metric(of: .bulletinEntries)
    out.family(entries.name, "counter", entries.help + " Since the listener started.")
    for kind in SubscriptionKind.allCases {
      out.sample(
        entries.name, [("kind", kind.rawValue)], String(listener.counts[.subscriptionEntries(kind)]))
    }
    out.single(
      "aprs_cloud_listener_own_transmissions_followed", "gauge",
      "Stations whose own transmissions the filter follows (ackPolicy fallback, trackSent).",
      String(listener.ownFollowed.count))
    out.single(
      "aprs_cloud_listener_own_transmissions_fell_back", "gauge",
      "Stations that asked to have their own transmissions followed and that the filter's 510 bytes had no"
        + " room for: ACKed as under ackPolicy server, their radio's sends not stored.",
      String(listener.ownFellBack.count))
  }

  // MARK: The push sender

  private func writePushMetrics(_ push: PushStatus, to out: inout PrometheusText) {
    out.family(
      "aprs_cloud_push_provider_state", "gauge",
      "1 for each push provider's state: ok (sending), off (not configured or disabled), stopped (a"
        + " configuration fault; see the listener's log).")
    for provider in DevicePlatform.allCases {
      let state =
        switch push.state(of: provider) {
        case .ok: "ok"
        case .off: "off"
        case .stopped: "stopped"
        }
      for candidate in ["ok", "off", "stopped"] {
        out.sample(
          "aprs_cloud_push_provider_state", [("provider", provider.rawValue), ("state", candidate)],
          state == candidate ? "1" : "0")
      }
    }
    // Outcome counters: every outcome the sender publishes (also ones a sender of another version counts).
    out.family(
      "aprs_cloud_pushes_total", "counter",
      "Pushes by provider and outcome as the push sender counts them (accepted, retried, failed, ...), since it"
        + " started.")
    for provider in DevicePlatform.allCases {
      let outcomes = push.counters[provider].outcomes.map { name, count in
        (PrometheusText.snakeCase(name), String(count))
      }
      for (outcome, count) in outcomes.sorted(by: { $0.0 < $1.0 }) where !outcome.isEmpty {
        out.sample("aprs_cloud_pushes_total", [("provider", provider.rawValue), ("outcome", outcome)], count)
      }
    }
    out.family(
      "aprs_cloud_push_tokens_deleted_total", "counter",
      "Push tokens deleted because the provider called them invalid, since the push sender started.")
    for provider in DevicePlatform.allCases {
      out.sample(
        "aprs_cloud_push_tokens_deleted_total", [("provider", provider.rawValue)],
        String(push.counters[provider].tokensDeleted))
    }
    let messages = push.counters.messages
    let notifications = push.counters.notifications
    out.single(
      "aprs_cloud_push_messages_total", "counter",
      "Messages announced by pushes (a coalesced push announces several), since the push sender started.",
      String(max(0, messages)))
    out.single(
      "aprs_cloud_push_notifications_total", "counter",
      "Coalesced pushes sent (one per station burst), since the push sender started.",
      String(max(0, notifications)))
    out.single(
      "aprs_cloud_push_coalescing_ratio", "gauge",
      "Messages per push since the push sender started (push_messages_total / push_notifications_total; 0"
        + " before the first push).",
      notifications > 0 ? PrometheusText.number(Double(messages) / Double(notifications)) : "0")
    out.family(
      "aprs_cloud_subscription_pushes_total", "counter",
      "Subscription entries (bulletin, group, nws, watch) announced by pushes, by kind, since the push sender"
        + " started.")
    for kind in SubscriptionKind.allCases {
      out.sample(
        "aprs_cloud_subscription_pushes_total", [("kind", kind.rawValue)],
        String(max(0, push.counters.subscriptions[kind] ?? 0)))
    }
    out.family(
      "aprs_cloud_forwards_total", "counter",
      "Forwards to the stations' email, ntfy and webhook targets by type and outcome (delivered, retried, failed,"
        + " disabled, private_address, confirmation), since the push sender started.")
    for kind in ForwardKind.allCases {
      for outcome in ForwardOutcomeKind.allCases {
        out.sample(
          "aprs_cloud_forwards_total", [("type", kind.rawValue), ("outcome", outcome.rawValue)],
          String(max(0, push.counters[forward: kind, outcome])))
      }
    }
  }

  /// The stations' forward targets by type, status and the class of a failing or disabled one's reason
  /// (docs/api.md "Forwarding (email, ntfy, webhooks)"): every type's `active` and `unconfirmed` (with `reason=""`), and each failing or disabled
  /// class some target is in (`reason="unknown"` for a target disabled before classes were stored).
  private func writeForwardTargetMetrics(_ counts: [ForwardTargetCount], to out: inout PrometheusText) {
    out.family(
      "aprs_cloud_forward_targets", "gauge",
      "The stations' forward targets by type, status (active, unconfirmed, failing, disabled) and the class of a"
        + " failing or disabled one's reason (auth_refused, gone, address_refused, private_address, redirect,"
        + " throttled, mailbox_full, mail_deferred, mail_server, server_error, no_answer).")
    for kind in ForwardKind.allCases {
      for status in ["active", "unconfirmed"] {
        let count = counts.filter { $0.kind == kind && $0.status == status }.reduce(0) { $0 + $1.count }
        out.sample(
          "aprs_cloud_forward_targets", [("type", kind.rawValue), ("status", status), ("reason", "")],
          String(count))
      }
      for row in counts where row.kind == kind && (row.status == "failing" || row.status == "disabled") {
        out.sample(
          "aprs_cloud_forward_targets",
          [("type", kind.rawValue), ("status", row.status), ("reason", row.problem?.rawValue ?? "unknown")],
          String(row.count))
      }
    }
  }

  /// What the running listener's beacon says (``CompanionFiles/ListenerBeacon``): written without the database, so these
  /// hold while the disk is full or the write lock is held; zero when no fresh beacon is there.
  private func writeBeaconMetrics(_ beacon: ListenerBeacon?, to out: inout PrometheusText) {
    out.single(
      "aprs_cloud_listener_alive", "gauge",
      "1 while the listener process runs (its beacon is fresh), whatever its lease says.",
      beacon == nil ? "0" : "1")
    out.single(
      "aprs_cloud_listener_storage_failing", "gauge",
      "1 while the running listener cannot store what it reads (disk full, lock held, I/O error).",
      beacon?.storeFault == nil ? "0" : "1")
    out.single(
      "aprs_cloud_listener_failed_batches_total", "counter",
      "Batch transactions of the running listener that failed since it started (each is kept and retried).",
      String(beacon?.failedBatches ?? 0))
    out.single(
      "aprs_cloud_listener_held_lines", "gauge",
      "Lines the running listener read and holds for storing, not stored yet.", String(beacon?.heldLines ?? 0)
    )
    out.single(
      "aprs_cloud_listener_storage_dropped_lines_total", "counter",
      "Lines the running listener dropped, oldest first, because its queue was full while storing failed.",
      String(beacon?.droppedLines ?? 0))
  }
}
