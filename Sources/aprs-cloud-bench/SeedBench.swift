import Store

/// `seed DB STATION MESSAGES`: a database holding one registered station with that many messages,
/// for the responder benchmark (`Tests/bench/run`).
enum SeedBench: Benchmark {
  static let name = "seed"
  static let usage = "seed DB STATION MESSAGES   register STATION in DB and store MESSAGES messages for it"

  static func run(_ arguments: [String]) -> Int32 {
    guard arguments.count == 3, let count = Int(arguments[2]), count >= 0 else {
      printError("usage: aprs-cloud-bench \(usage)")
      return 2
    }
    let path = arguments[0]
    let address = arguments[1].uppercased()
    let parts = address.split(separator: "-")
    let base = String(parts[0])
    let ssid = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
    do {
      var options = StoreOptions()
      options.ringSize = max(50, count)
      let database = try Database(path: path, options: options)
      defer { database.close() }
      _ = try database.migrate()
      let now: Int64 = 1_800_000_000_000
      _ = try database.upsertStation(
        StationUpsert(
          address: address, base: base, ssid: ssid, platform: nil, pushToken: nil, ackMessages: false,
          isRegistration: true), now: now)
      let batch = (0..<count).map { index in
        IncomingMessage(
          station: address, direction: .received, peer: "KJ7ABC-\(index % 16)",
          text: "Benchmark message number \(index), a typical APRS length text.", msgno: String(index),
          dedupKey: "bench|\(address)|\(index)", dedupWindowMs: 3_600_000)
      }
      _ = try database.storeMessages(batch, now: now)
      return 0
    } catch {
      printError("seed: \(error)")
      return 1
    }
  }
}
