#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One `aprs-cloud-bench` subcommand.
protocol Benchmark {
  /// The subcommand, e.g. `parse`.
  static var name: String { get }
  /// One line: the subcommand and its arguments.
  static var usage: String { get }
  /// Runs with the arguments after the subcommand; returns the exit status.
  static func run(_ arguments: [String]) -> Int32
}

/// Writes a line to standard error.
func printError(_ message: String) {
  let line = Array((message + "\n").utf8)
  _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// Ends the process with `status`.
func exitProcess(_ status: Int32) -> Never {
  exit(status)
}

/// The whole content of a file, or nil when it cannot be read.
func readFile(_ path: String) -> [UInt8]? {
  guard let file = fopen(path, "rb") else { return nil }
  defer { fclose(file) }
  var content: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 1 << 16)
  while true {
    let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
    if count > 0 { content.append(contentsOf: chunk[0..<count]) }
    if count < chunk.count { break }
  }
  return ferror(file) == 0 ? content : nil
}

/// Seconds in a duration, as a floating-point number.
func seconds(_ duration: Duration) -> Double {
  Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

/// `value` with exactly `decimals` digits after the point (no Foundation `String(format:)` here).
func fixed(_ value: Double, decimals: Int) -> String {
  var scale = 1.0
  for _ in 0..<decimals { scale *= 10 }
  let scaled = Int((value * scale).rounded())
  let whole = scaled / Int(scale)
  let fraction = String(scaled % Int(scale))
  guard decimals > 0 else { return String(whole) }
  return "\(whole)." + String(repeating: "0", count: decimals - fraction.count) + fraction
}
