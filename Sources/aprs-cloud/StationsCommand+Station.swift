import APRS
import Platform
import Store

extension StationsCommand {
  /// `aprs-cloud stations STATION`: one station, its devices and messages, and its settings.
  static func showStation(_ argument: String, _ parsed: Arguments) throws(CommandFailure) -> ExitStatus {
    if parsed.options["all"] != nil {
      throw CommandFailure("--all lists every station; leave it out with STATION", usage: true)
    }
    let address = argument.uppercased()
    let settings = try OperatorSettings.load(parsed)
    if parsed.options["release-claim"] != nil { return try releaseClaim(address, settings) }
    if parsed.options["approve-claim"] != nil { return try approveClaim(address, settings) }
    if let file = parsed.options["export"] { return try export(address, to: file, settings) }
    let database = try settings.openReadOnly()
    defer { closeInspected(database) }
    let record: StationRecord?
    let stationSettings: StationSettings?
    let devices: [DeviceRecord]
    let messages: Int
    let claim: ClaimState
    let audit: [AuditEntry]
    let subscriptions: [Subscription]
    let forward: [ForwardTarget]
    do throws(StoreError) {
      record = try database.station(address)
      claim = try database.stationClaim(address)
      audit = try database.auditTrail(of: address)
      stationSettings = try database.stationSettings(address)
      subscriptions = try database.subscriptions(of: address)
      forward = try database.forwardTargets(of: address)
      devices = try database.devices(of: address)
      // Both rings: the station's own messages and those for other SSIDs of its call (setting `ssids`).
      messages = try database.recentMessages(station: address, limit: max(1, 2 * settings.ringSize)).count
    } catch {
      throw CommandFailure("\(settings.database): \(error)")
    }
    let now = epochMilliseconds()
    guard let record, let stationSettings else {
      // An unregistered station may still have a trail (the unregister itself).
      if !audit.isEmpty { print(renderAudit(audit, now: now), terminator: "") }
      throw CommandFailure("\(Format.printable(address)) is not registered")
    }
    let live = record.heartbeatAt >= now - settings.stationExpiryMs
    print(
      renderStation(
        record, settings: stationSettings, claim: claim.claim, devices: devices.count,
        keyedDevices: devices.filter(\.keyed).count, messages: messages, live: live, now: now)
        + renderSubscriptions(subscriptions) + renderForward(forward) + renderAudit(audit, now: now),
      terminator: "")
    return .success
  }

  /// `--release-claim`: releases the claim of `address`, recorded in its audit trail as the operator's.
  private static func releaseClaim(_ address: String, _ settings: OperatorSettings) throws(CommandFailure)
    -> ExitStatus
  {
    try changeClaim(address, settings, done: "claim released; the next POST /v1/claim claims it anew") {
      (database, now) throws(StoreError) in try database.releaseClaim(address, now: now)
    }
  }

  /// `--approve-claim`: the operator proves the claim of `address` (provisional, or unproven from before claims
  /// were proven): it governs the station and no device can take it back; recorded in its audit trail.
  private static func approveClaim(_ address: String, _ settings: OperatorSettings) throws(CommandFailure)
    -> ExitStatus
  {
    try changeClaim(
      address, settings, done: "claim approved; it is proven, and no device can take the station back"
    ) {
      (database, now) throws(StoreError) in try database.approveClaim(address, now: now)
    }
  }

  /// Runs the operator's `change` of the claim of the registered station `address` (false: it was not claimed)
  /// and prints `done`.
  private static func changeClaim(
    _ address: String, _ settings: OperatorSettings, done: String,
    _ change: (Database, Int64) throws(StoreError) -> Bool
  ) throws(CommandFailure) -> ExitStatus {
    let database = try settings.openForWriting()
    defer { database.close() }
    let registered: Bool
    let changed: Bool
    do throws(StoreError) {
      registered = try database.station(address) != nil
      changed = registered ? try change(database, epochMilliseconds()) : false
    } catch {
      throw CommandFailure("\(settings.database): \(error)")
    }
    guard registered else { throw CommandFailure("\(Format.printable(address)) is not registered") }
    guard changed else { throw CommandFailure("\(Format.printable(address)) is not claimed") }
    print("\(address): \(done)")
    return .success
  }

  /// The audit trail as `AUDIT` rows, newest first, or nothing when it is empty.
  static func renderAudit(_ entries: [AuditEntry], now: Int64) -> String {
    guard !entries.isEmpty else { return "" }
    var rows = [["WHEN", "WHAT", "FROM", "DETAIL"]]
    for entry in entries {
      rows.append([
        Format.timeAndAge(entry.at, now: now), entry.action.rawValue, Format.printable(entry.client),
        entry.detail.isEmpty ? "-" : Format.printable(entry.detail),
      ])
    }
    return "\naudit trail (newest first):\n" + Format.table(rows)
  }

  /// One station as `key  value` lines.
  static func renderStation(
    _ record: StationRecord, settings: StationSettings, claim: StationClaim? = nil, devices: Int,
    keyedDevices: Int = 0, messages: Int, live: Bool, now: Int64
  ) -> String {
    let rows: [[String]] = [
      ["station", record.address],
      ["platform", record.platform?.rawValue ?? "-"],
      ["state", live ? "live" : "expired"],
      ["last heard", Format.timeAndAge(record.heartbeatAt, now: now)],
      [
        "claim",
        claim.map {
          "\($0.proof.rawValue), claimed \(Format.timeAndAge($0.claimedAt, now: now)); key last used"
            + " \(Format.timeAndAge($0.refreshedAt, now: now))"
        } ?? "unclaimed",
      ],
      ["devices", claim == nil ? String(devices) : "\(devices) (\(keyedDevices) with the key)"],
      ["messages", String(messages)],
      [
        "ack policy",
        settings.ackPolicy == .fallback
          ? "fallback (waits \(settings.fallbackWait) for the station's radio; answered by it: \(settings.airAnswered.rawValue) push)"
          : settings.ackPolicy.rawValue,
      ],
      ["track sent", settings.trackSent ? "yes (the station's radio's messages are stored)" : "no"],
      ["blocked", calls(settings.blocked)],
      [
        "muted until",
        settings.mutedUntil > now ? Format.timeAndAge(settings.mutedUntil, now: now) : "not muted",
      ],
      ["quiet hours", settings.quietHours.map(quietHours) ?? "none"],
      ["quiet bypass", calls(settings.quietBypass)],
      ["keyless", settings.keylessDevices == .allow ? "devices allowed" : "devices refused"],
      ["ssids", settings.ssids.storedText],
      ["ack ssids", settings.ackSsids.isEmpty ? "none" : settings.ackSsids.storedText],
      ["retention", retention(settings.retention)],
    ]
    return Format.table(rows)
  }

  /// `ring` or `until pulled, at most N`.
  static func retention(_ retention: Retention) -> String {
    switch retention {
    case .ring: "ring"
    case .untilPulled(let max): "until pulled, at most \(max)"
    }
  }

  /// The station's subscriptions (`POST /v1/settings`), one line each under a count; nothing when it has none.
  static func renderSubscriptions(_ subscriptions: [Subscription]) -> String {
    guard !subscriptions.isEmpty else { return "" }
    var rows = [["subscriptions", String(subscriptions.count)]]
    for subscription in subscriptions {
      var what: String
      switch subscription.rule {
      case .bulletin(let pattern): what = pattern.text
      case .group(let call): what = call
      case .nws(let zones): what = zones.sorted().joined(separator: " ")
      case .watch(let watch):
        var parts = [watch.call]
        if let seconds = watch.heardAfter { parts.append("heard after \(seconds) s") }
        if let seconds = watch.silentFor { parts.append("silent for \(seconds) s") }
        if watch.emergency { parts.append("emergencies") }
        what = parts.joined(separator: ", ")
      case .net(let net):
        var parts = [net.room.description, net.join == .silent ? "silent join" : "joined by posting"]
        if net.renew { parts.append("renewed") }
        parts.append(net.digestSeconds == 0 ? "every entry pushed" : "digest \(net.digestSeconds) s")
        what = parts.joined(separator: ", ")
      }
      if subscription.bypass { what += " (bypasses mute and quiet hours)" }
      rows.append(["  " + subscription.id, subscription.kind.rawValue, Format.printable(what)])
    }
    return Format.table(rows)
  }

  /// The station's forward targets (`POST /v1/settings` `forward`), one line each under a count, secrets masked
  /// (`…` and the last 4 characters), a failing or disabled one's status with its reason; nothing when it has none.
  static func renderForward(_ targets: [ForwardTarget]) -> String {
    guard !targets.isEmpty else { return "" }
    var rows = [["forward", String(targets.count)]]
    for target in targets {
      var what = target.address
      if let hint = target.secretHint { what += (target.kind == .webhook ? " secret " : " token ") + hint }
      if target.always { what += " (always, through mute and quiet hours)" }
      var status = target.status.name
      if let reason = target.status.reason { status += ": " + reason }
      rows.append(["  " + target.id, target.kind.rawValue, Format.printable(what), Format.printable(status)])
    }
    return Format.table(rows)
  }

  /// The calls separated by spaces, or `none`.
  private static func calls(_ list: CallList) -> String {
    list.isEmpty ? "none" : list.calls.joined(separator: " ")
  }

  /// `22:00-07:00 local (UTC+02:00)`.
  static func quietHours(_ quiet: QuietHours) -> String {
    func clock(_ minute: Int) -> String { twoDigits(minute / 60) + ":" + twoDigits(minute % 60) }
    let offset = abs(quiet.utcOffsetMinutes)
    let sign = quiet.utcOffsetMinutes < 0 ? "-" : "+"
    return clock(quiet.start) + "-" + clock(quiet.end) + " local (UTC" + sign + clock(offset) + ")"
  }

  private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
}

extension StationsCommand {
  /// `--export FILE`: writes the station's export document (``StationArchive``, as `POST /v1/export` answers it)
  /// to `file`, mode 0600 (it holds the claim's key hash), or to standard output for `-`.
  static func export(_ address: String, to file: String, _ settings: OperatorSettings) throws(CommandFailure)
    -> ExitStatus
  {
    let database = try settings.openReadOnly()
    defer { closeInspected(database) }
    let archive: StationArchive?
    do throws(StoreError) {
      archive = try database.exportStation(address)
    } catch {
      throw CommandFailure("\(settings.database): \(error)")
    }
    guard let archive else { throw CommandFailure("\(Format.printable(address)) is not registered") }
    let document = archive.jsonDocument(exportedAt: epochMilliseconds())
    if file == "-" {
      writeAll(1, document + [0x0A])
      return .success
    }
    do throws(OwnerOnlyFile.WriteError) {
      try OwnerOnlyFile.write(document, to: file, placement: .replace)
    } catch {
      throw CommandFailure("cannot write \(file): \(error.reason)")
    }
    printError(
      "exported \(archive.station): \(Format.contents(archive)) to \(file)")
    return .success
  }
}
