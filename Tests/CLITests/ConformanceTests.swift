import APRS
import JSON
import Testing

@testable import aprs_cloud

/// The conformance runner's core against a scripted server (``ConformanceFakeServer``): every check passes on
/// the contract, and each changed behaviour fails exactly the check named after its section.
@Suite struct ConformanceTests {
  static let station = try! StationAddress(parsing: ConformanceRun.defaultStation)

  private func run(_ server: ConformanceFakeServer, station: StationAddress = station) throws -> (
    ConformanceRun, [CheckResult]
  ) {
    let run = ConformanceRun(transport: server, station: station, runID: "0badc0de")
    return (run, try run.run())
  }

  @Test func everyCheckPassesOnTheContractAndTheRunLeavesNothingBehind() throws {
    let server = ConformanceFakeServer()
    let (run, results) = try run(server)
    #expect(results.map(\.name) == ConformanceCheck.allCases.map(\.rawValue))
    for result in results { #expect(result.status == .pass, "\(result.name): \(result.reason)") }
    #expect(ConformanceReport.exitStatus(results) == .success)
    #expect(server.stations.isEmpty, "\(server.stations)")
    #expect(server.avatars.isEmpty)
    #expect(run.notes.isEmpty, "\(run.notes)")
    #expect(results.first { $0.name == "sync-cursor" }?.section == "docs/protocol.md#the-cursor")
  }

  @Test(arguments: ConformanceFakeServer.Behaviour.allCases)
  func aChangedBehaviourFailsItsCheckAndNoOther(_ behaviour: ConformanceFakeServer.Behaviour) throws {
    let server = ConformanceFakeServer(broken: behaviour)
    let (_, results) = try run(server)
    let failed = results.filter { $0.status == .fail }
    #expect(failed.map(\.name) == [behaviour.check.rawValue], "\(failed.map { "\($0.name): \($0.reason)" })")
    #expect(ConformanceReport.exitStatus(results) == .failure)
    // The cleanup leaves nothing, unless the server itself will not drop a station.
    if behaviour != .emptyTokenKeepsStation { #expect(server.stations.isEmpty, "\(server.stations)") }
  }

  @Test func aStationThatExistedKeepsEverythingButTheRunsDevice() throws {
    let server = ConformanceFakeServer()
    server.stations["CONFRM-15"] = ["their-phone"]
    server.avatars["CONFRM-15"] = "icon:car"
    let (run, results) = try run(server)
    let byName = Dictionary(uniqueKeysWithValues: results.map { ($0.name, $0) })
    #expect(byName["avatars"]?.status == .skip)
    #expect(byName["avatars"]?.reason.contains("existed before the run") == true)
    // The spare station the run made is still unregistered whole.
    #expect(byName["unregister-empty-token"]?.status == .pass)
    #expect(results.allSatisfy { $0.status != .fail }, "\(results.filter { $0.status == .fail })")
    #expect(server.stations == ["CONFRM-15": ["their-phone"]])
    #expect(server.avatars["CONFRM-15"] == "icon:car")
    #expect(run.notes.contains { $0.hasPrefix("CONFRM-15 was registered before the run") })
    // No whole-station unregister of the station that was there.
    let wipes = server.requests.filter {
      $0.path == "/v1/unregister" && String(decoding: $0.body ?? [], as: UTF8.self).contains("\"ssid\":15")
        && !String(decoding: $0.body ?? [], as: UTF8.self).contains("conformance-0badc0de")
    }
    #expect(wipes.isEmpty)
  }

  @Test func withoutLongPollOrAReachableRateLimitTheChecksSkipWithTheReason() throws {
    let server = ConformanceFakeServer()
    server.features = ["settings", "claim"]
    server.heartbeatBudget = 1000
    let (_, results) = try run(server)
    let byName = Dictionary(uniqueKeysWithValues: results.map { ($0.name, $0) })
    #expect(byName["long-poll"]?.status == .skip)
    #expect(byName["long-poll"]?.reason.contains("no longpoll feature") == true)
    #expect(byName["limits-retry-after"]?.status == .skip)
    #expect(byName["limits-retry-after"]?.reason.contains("64 heartbeats") == true)
    #expect(ConformanceReport.exitStatus(results) == .success)
    let beats = server.requests.filter { $0.path == "/v1/heartbeat" }.count
    #expect(beats <= ConformanceRun.rateProbeLimit + 8, "a bounded probe: \(beats) heartbeats")
  }

  @Test func aServerThatDoesNotAnswerThrowsBeforeAnythingIsSent() {
    struct Silent: ConformanceTransport {
      func exchange(_ request: ConformanceRequest) throws(ConformanceTransportError) -> ConformanceAnswer {
        throw ConformanceTransportError(description: "Connection refused")
      }
    }
    let run = ConformanceRun(transport: Silent(), station: Self.station, runID: "1")
    #expect(throws: ConformanceTransportError.self) { try run.run() }
  }

  @Test func theReportPrintsEachCheckWithItsSectionAndJSONHasEveryField() throws {
    let results = [
      CheckResult(name: "info", section: "docs/protocol.md#server-information", status: .pass, reason: "ok"),
      CheckResult(
        name: "long-poll", section: "docs/protocol.md#long-poll", status: .skip, reason: "no longpoll"),
      CheckResult(
        name: "sync-cursor", section: "docs/protocol.md#the-cursor", status: .fail, reason: "went back"),
    ]
    let lines = ConformanceReport.lines(results, notes: ["a note"])
    #expect(lines.contains("PASS info        (docs/protocol.md#server-information): ok\n"))
    #expect(lines.contains("FAIL sync-cursor (docs/protocol.md#the-cursor): went back\n"))
    #expect(lines.hasSuffix("note: a note\n3 checks: 1 PASS, 1 FAIL, 1 SKIP\n"))
    let document = try JSONParser.parse(
      Array(ConformanceReport.json(results, notes: [], server: "http://x", station: "A-1").utf8))
    guard case .object(let object) = document, case .array(let checks)? = object["checks"] else {
      Issue.record("not a JSON object with checks")
      return
    }
    #expect(object.keys == ["server", "station", "checks", "notes", "passed", "failed", "skipped"])
    #expect(checks.count == 3)
    #expect(checks[2].members?.keys == ["name", "section", "status", "reason"])
    #expect(checks[2].members?["status"] == .string("FAIL"))
    #expect(ConformanceReport.exitStatus(results) == .failure)
    #expect(ConformanceReport.exitStatus(Array(results.prefix(2))) == .success)
  }

  @Test func theURLAndTheSpareStationAreChecked() throws {
    #expect(try ConformanceCommand.baseURL("http://127.0.0.1:8080/") == "http://127.0.0.1:8080")
    #expect(try ConformanceCommand.baseURL("https://example.org/aprs") == "https://example.org/aprs")
    #expect(throws: (any Error).self) { try ConformanceCommand.baseURL("ftp://example.org") }
    #expect(throws: (any Error).self) { try ConformanceCommand.baseURL("http://example.org/?a=1") }
    #expect(ConformanceRun.spare(for: try StationAddress(parsing: "CONFRM-15")).description == "CONFRM-14")
    #expect(ConformanceRun.spare(for: try StationAddress(parsing: "N0CALL")).description == "N0CALL-15")
    #expect(ConformanceRun.spare(for: try StationAddress(parsing: "ABCDEFG")).description == "ABCDEFG-1")
    #expect(ConformanceCommand.randomRunID().count == 8)
  }

  @Test func theCommandsUsageNamesEveryCheckAndItsExitStatuses() throws {
    let help = try runCLI(["conformance", "--help"])
    #expect(help.status == 0)
    for check in ConformanceCheck.allCases { #expect(help.stdout.contains(check.rawValue), "\(check)") }
    #expect(help.stdout.contains("Exit status: 0 when no check FAILed"))
    #expect(try runCLI(["conformance"]).status == 2)
    #expect(try runCLI(["conformance", "ftp://x"]).status == 2)
    #expect(try runCLI(["conformance", "http://127.0.0.1:1", "--callsign", "N0 CALL"]).status == 2)
  }
}
