import JSON

/// How a run's results are printed: one line per check, or one JSON document (`--json`).
enum ConformanceReport {
  /// `PASS info (docs/protocol.md#server-information): <reason>` lines, then the notes and a summary line.
  static func lines(_ results: [CheckResult], notes: [String]) -> String {
    let width = results.map(\.name.count).max() ?? 0
    var text = ""
    for result in results {
      let name = result.name + String(repeating: " ", count: max(0, width - result.name.count))
      text += "\(result.status.rawValue) \(name) (\(result.section)): \(result.reason)\n"
    }
    for note in notes { text += "note: \(note)\n" }
    text += summary(results) + "\n"
    return text
  }

  /// `16 checks: 14 PASS, 0 FAIL, 2 SKIP`.
  static func summary(_ results: [CheckResult]) -> String {
    let count = { (status: CheckStatus) in results.filter { $0.status == status }.count }
    return "\(results.count) checks: \(count(.pass)) PASS, \(count(.fail)) FAIL, \(count(.skip)) SKIP"
  }

  /// `{"server":…,"station":…,"checks":[{"name","section","status","reason"}…],"notes":[…],"passed":n,
  /// "failed":n,"skipped":n}` and a newline.
  static func json(_ results: [CheckResult], notes: [String], server: String, station: String) -> String {
    var writer = JSONWriter()
    writer.beginObject()
    writer.key("server")
    writer.string(server)
    writer.key("station")
    writer.string(station)
    writer.key("checks")
    writer.beginArray()
    for result in results {
      writer.beginObject()
      writer.key("name")
      writer.string(result.name)
      writer.key("section")
      writer.string(result.section)
      writer.key("status")
      writer.string(result.status.rawValue)
      writer.key("reason")
      writer.string(result.reason)
      writer.endObject()
    }
    writer.endArray()
    writer.key("notes")
    writer.beginArray()
    for note in notes { writer.string(note) }
    writer.endArray()
    for (key, status) in [("passed", CheckStatus.pass), ("failed", .fail), ("skipped", .skip)] {
      writer.key(key)
      writer.int(results.filter { $0.status == status }.count)
    }
    writer.endObject()
    return writer.string + "\n"
  }

  /// 0 when no check failed (a SKIP is no failure), else 1.
  static func exitStatus(_ results: [CheckResult]) -> ExitStatus {
    results.contains { $0.status == .fail } ? .failure : .success
  }
}
