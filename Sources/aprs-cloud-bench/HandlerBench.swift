import API
import Store

#if canImport(Glibc)
  import Glibc
#endif

/// `handler DB`: the API handler's own cost per request (no FastCGI, no nginx) for an empty sync,
/// a sync of 50 messages and a heartbeat: the part of the responder benchmark that is ours alone.
enum HandlerBench: Benchmark {
  static let name = "handler"
  static let usage = "handler DB [ITERATIONS]   µs per request inside APIHandler (DB: made by `seed`)"

  static func run(_ arguments: [String]) -> Int32 {
    guard (1...2).contains(arguments.count) else {
      printError("usage: aprs-cloud-bench \(usage)")
      return 2
    }
    let iterations = arguments.count == 2 ? Int(arguments[1]) ?? 20_000 : 20_000
    do {
      let database = try Database(path: arguments[0])
      defer { database.close() }
      var config = APIConfig()
      config.heartbeatsPerHour = 1_000_000_000
      let handler = APIHandler(database: database, config: config, clock: { 1_800_000_000_000 })
      let cases: [(String, String, String)] = [
        ("empty sync", "/v1/sync", #"{"callsign":"N0CALL","ssid":8,"since":1900000000000,"auth":"13023"}"#),
        ("sync, 50 messages", "/v1/sync", #"{"callsign":"N0CALL","ssid":7,"since":0,"auth":"13023"}"#),
        (
          "heartbeat", "/v1/heartbeat",
          #"{"callsign":"N0CALL","ssid":8,"platform":"android","pushToken":"bench:APA91b-token","auth":"13023"}"#
        ),
      ]
      for (label, path, body) in cases {
        let request = APIRequest(method: "POST", path: path, body: Array(body.utf8))
        let clock = ContinuousClock()
        var status = 0
        let elapsed = clock.measure {
          for _ in 0..<iterations { status = handler.handle(request).status }
        }
        let micros = seconds(elapsed) * 1e6 / Double(iterations)
        print("handler \(label): \(fixed(micros, decimals: 1)) µs per request (status \(status))")
      }
      return 0
    } catch {
      printError("handler: \(error)")
      return 1
    }
  }
}
