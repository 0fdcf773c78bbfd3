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
    let database = try settings.openReadOnly()
    defer { closeInspected(database) }
    let record: StationRecord?
    let stationSettings: StationSettings?
    let devices: [DeviceRecord]
    let messages: Int
    do throws(StoreError) {
      record = try database.station(address)
      stationSettings = try database.stationSettings(address)
      devices = try database.devices(of: address)
      messages = try database.recentMessages(station: address, limit: max(1, settings.ringSize)).count
    } catch {
      throw CommandFailure("\(settings.database): \(error)")
    }
    guard let record, let stationSettings else {
      throw CommandFailure("\(Format.printable(address)) is not registered")
    }
    let now = epochMilliseconds()
    let live = record.heartbeatAt >= now - settings.stationExpiryMs
    print(
      renderStation(
        record, settings: stationSettings, devices: devices.count, messages: messages, live: live, now: now),
      terminator: "")
    return .success
  }

  /// One station as `key  value` lines.
  static func renderStation(
    _ record: StationRecord, settings: StationSettings, devices: Int, messages: Int, live: Bool, now: Int64
  ) -> String {
    let rows: [[String]] = [
      ["station", record.address],
      ["platform", record.platform?.rawValue ?? "-"],
      ["state", live ? "live" : "expired"],
      ["last heard", Format.timeAndAge(record.heartbeatAt, now: now)],
      ["devices", String(devices)],
      ["messages", String(messages)],
      ["ack policy", settings.ackPolicy.rawValue],
      ["blocked", calls(settings.blocked)],
      [
        "muted until",
        settings.mutedUntil > now ? Format.timeAndAge(settings.mutedUntil, now: now) : "not muted",
      ],
      ["quiet hours", settings.quietHours.map(quietHours) ?? "none"],
      ["quiet bypass", calls(settings.quietBypass)],
    ]
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
