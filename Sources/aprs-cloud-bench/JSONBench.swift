import JSON

/// `json [SECONDS]`: the JSON parser on hostile and ordinary shapes. Each case is parsed once to warm up, then
/// repeatedly for about SECONDS (default 0.2) of wall time; the line shows the mean per parse. Cases: one object
/// of 250, 500 and 1,000 distinct keys (parsed), a 9,000-key body of about 60 KB (refused by the member cap),
/// and 16, 32 and 64 KB of 100-key objects in an array (parsed; the µs per KB shows the growth is linear).
enum JSONBench: Benchmark {
  static let name = "json"
  static let usage = "json [SECONDS]   µs per parse: wide objects, a 9,000-key body, 16/32/64 KB documents"

  /// The goal for the wide-object and 9,000-key cases (from the hardening issue): under 1 ms each.
  static let goalMicros = 1_000.0

  static func run(_ arguments: [String]) -> Int32 {
    guard arguments.count <= 1 else {
      printError("usage: aprs-cloud-bench \(usage)")
      return 2
    }
    guard let budget = arguments.isEmpty ? 0.2 : Double(arguments[0]), budget > 0 else {
      printError("aprs-cloud-bench json: SECONDS must be a positive number")
      return 2
    }
    var slowest = 0.0
    for count in [250, 500, 1_000] {
      let body = object(keys: count)
      let (micros, outcome) = measure(body, budget: budget)
      slowest = max(slowest, micros)
      print(
        "json object of \(count) distinct keys (\(body.count) bytes): \(fixed(micros, decimals: 1)) µs, \(outcome)"
      )
    }
    let hostile = object(keys: 9_000)
    let (micros, outcome) = measure(hostile, budget: budget)
    slowest = max(slowest, micros)
    print("json object of 9000 keys (\(hostile.count) bytes): \(fixed(micros, decimals: 1)) µs, \(outcome)")
    print(
      "slowest of the above: \(fixed(slowest, decimals: 1)) µs (goal: under \(Int(goalMicros)) µs each)")
    for kilobytes in [16, 32, 64] {
      let body = objects(filling: kilobytes * 1024)
      let (micros, outcome) = measure(body, budget: budget)
      let perKB = micros * 1024 / Double(body.count)
      print(
        "json \(kilobytes) KB of 100-key objects (\(body.count) bytes): \(fixed(micros, decimals: 1)) µs "
          + "= \(fixed(perKB, decimals: 2)) µs/KB, \(outcome)")
    }
    return 0
  }

  /// Mean µs per parse over about `budget` seconds (at least one parse after the warm-up), and what came out.
  static func measure(_ body: [UInt8], budget: Double) -> (micros: Double, outcome: String) {
    let outcome = describe(body)
    let clock = ContinuousClock()
    let start = clock.now
    var parses = 0
    var checksum = 0
    repeat {
      checksum &+= work(body)
      parses += 1
    } while seconds(start.duration(to: clock.now)) < budget
    if checksum == 0 { printError("(checksum 0)") }  // keeps the work observable
    return (seconds(start.duration(to: clock.now)) * 1e6 / Double(parses), outcome)
  }

  /// The measured work: one parse. Returns a number that depends on the result.
  @inline(never)
  static func work(_ body: [UInt8]) -> Int {
    do {
      switch try JSONParser.parse(body) {
      case .object(let object): return object.members.count
      case .array(let array): return array.count
      default: return 1
      }
    } catch {
      return 2
    }
  }

  /// "parsed" or "refused: <the error>".
  static func describe(_ body: [UInt8]) -> String {
    do {
      _ = try JSONParser.parse(body)
      return "parsed"
    } catch {
      return "refused: \(error)"
    }
  }

  /// `{"!":0,"#":0,…}` with `count` distinct keys, each the shortest unused string of printable ASCII
  /// (no quote or backslash): 93 one-byte keys, then two-byte keys, … — 9,000 keys make about 60 KB.
  static func object(keys count: Int) -> [UInt8] {
    let alphabet = (UInt8(0x21)...UInt8(0x7E)).filter { $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    var body: [UInt8] = [UInt8(ascii: "{")]
    for index in 0..<count {
      if index > 0 { body.append(UInt8(ascii: ",")) }
      body.append(UInt8(ascii: "\""))
      var rest = index
      var width = 1
      var span = alphabet.count
      while rest >= span {
        rest -= span
        width += 1
        span *= alphabet.count
      }
      var key: [UInt8] = []
      for _ in 0..<width {
        key.append(alphabet[rest % alphabet.count])
        rest /= alphabet.count
      }
      body.append(contentsOf: key)
      body.append(contentsOf: Array(#"":0"#.utf8))
    }
    body.append(UInt8(ascii: "}"))
    return body
  }

  /// `[{"k00":0,…,"k99":99},…]`: as many 100-key objects as fit in about `size` bytes.
  static func objects(filling size: Int) -> [UInt8] {
    var one: [UInt8] = [UInt8(ascii: "{")]
    for index in 0..<100 {
      if index > 0 { one.append(UInt8(ascii: ",")) }
      let digits = index < 10 ? "0\(index)" : "\(index)"
      one.append(contentsOf: Array(#""k\#(digits)":\#(index)"#.utf8))
    }
    one.append(UInt8(ascii: "}"))
    var body: [UInt8] = [UInt8(ascii: "[")]
    while body.count + one.count + 2 <= size {
      if body.count > 1 { body.append(UInt8(ascii: ",")) }
      body.append(contentsOf: one)
    }
    body.append(UInt8(ascii: "]"))
    return body
  }
}
