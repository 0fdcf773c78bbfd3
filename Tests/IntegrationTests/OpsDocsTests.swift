import Foundation
import TestSupport
import Testing

/// The blocks of docs/operating.md that need the real web stack (`health`, `metrics`, `logs`), run as
/// written with the host name pointed at a test port; and the backup units it installs. The other
/// blocks are run by Tests/CLITests/DocsOpsTests.swift.
@Suite struct OpsDocsTests {
  /// The `sh` block after `<!-- run by test: NAME … -->` in the guide.
  static func block(_ name: String) throws -> String {
    let guide = try String(contentsOfFile: TestPaths.packageRoot + "/docs/operating.md", encoding: .utf8)
    let lines = guide.components(separatedBy: "\n")
    let markers = lines.indices.filter { lines[$0].hasPrefix("<!-- run by test: \(name) ") }
    try #require(markers.count == 1, "docs/operating.md has \(markers.count) blocks named \(name)")
    var index = markers[0] + 1
    try #require(lines[index] == "```sh")
    var text = ""
    index += 1
    while !lines[index].hasPrefix("```") {
      text += lines[index] + "\n"
      index += 1
    }
    return text
  }

  /// Runs a block with bash (`set -euo pipefail`), after `prelude`.
  static func run(_ block: String, prelude: String = "", environment extra: [String: String] = [:]) throws
    -> ProcessOutput
  {
    var environment = ProcessInfo.processInfo.environment
    for (key, value) in extra { environment[key] = value }
    return try runProcess(
      "/bin/bash", ["-c", "set -euo pipefail\n" + prelude + block], environment: environment)
  }

  /// `https://aprs.example.org/…` to the site on `port` at 127.0.0.1, trusting its test certificate;
  /// the private metrics listener (`127.0.0.1:9180`) to `metricsPort`.
  static func pointed(_ block: String, port: Int, metricsPort: Int = 9180) -> String {
    block.replacingOccurrences(
      of: "--resolve aprs.example.org:443:127.0.0.1", with: "-k --resolve aprs.example.org:\(port):127.0.0.1"
    )
    .replacingOccurrences(of: "https://aprs.example.org/", with: "https://aprs.example.org:\(port)/")
    .replacingOccurrences(of: "http://127.0.0.1:9180/", with: "http://127.0.0.1:\(metricsPort)/")
  }

  @Test func healthAndMetricsAnswerOnTheSiteAsDocumented() throws {
    let prefix = try NginxPrefix("site")
    defer { prefix.remove() }
    let site = try RenderedSite(prefix: prefix)
    let responder = try TestStack.launch(
      try TestPaths.executable("aprs-cloud-fcgi"),
      ["--listen", site.socket, "--db", prefix.directory + "/aprs-cloud.sqlite"],
      output: prefix.directory + "/responder.log")
    defer { TestStack.terminate(responder) }
    #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: site.socket) })
    let https = "https://127.0.0.1:\(site.httpsPort)"
    let nginx = try prefix.start(site.config, readyURL: https + "/", curlArguments: ["-k"])
    defer { TestStack.terminate(nginx) }

    let health = try Self.run(Self.pointed(try Self.block("health"), port: site.httpsPort))
    #expect(health.status == 0, "\(health.stderrText)")
    #expect(
      health.stdoutText.hasPrefix("{") && health.stdoutText.contains(#""database":"#), "\(health.stdoutText)")

    let metricsBlock = try Self.block("metrics")
    #expect(metricsBlock.contains("http://127.0.0.1:9180/metrics"), "the private listener, as documented")
    let metrics = try Self.run(
      Self.pointed(metricsBlock, port: site.httpsPort, metricsPort: site.metricsPort))
    #expect(metrics.status == 0, "\(metrics.stderrText)")
    #expect(
      metrics.stdoutText.split(separator: "\n").sorted() == [
        "aprs_cloud_listener_connected 0", "aprs_cloud_outbox_pending 0", "aprs_cloud_stations_live 0",
      ], "\(metrics.stdoutText)")

    // The whole document from the private listener parses too.
    let full = try Curl.request("GET", "http://127.0.0.1:\(site.metricsPort)/metrics")
    #expect(full.status == 200)
    _ = try PrometheusDocument(parsing: full.text)
    // The public servers answer /metrics 404 (nginx itself), and so does the real responder when a
    // request without the private listener's mark reaches it.
    expectAPIAnswer(try Curl.request("GET", https + "/metrics", arguments: ["-k", "--http2"]), status: 404)
    expectAPIAnswer(try Curl.request("GET", "http://127.0.0.1:\(site.httpPort)/metrics"), status: 404)
    let unmarked = try ResponderFastCGIConnection.request(unixPath: site.socket, "GET", "/metrics").reply()
    #expect(unmarked.status == 404 && unmarked.errorText?.isEmpty == false, "\(unmarked.bodyText)")
  }

  @Test func theLogLinesAreFoundAsDocumented() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    #expect(try stack.post("/v1/sync", json: #"{"callsign":"N0CALL","ssid":7,"auth":"99999"}"#).status == 401)
    #expect(try stack.post("/v1/nope", json: "{}").status == 404)
    #expect(try stack.post("/v1/sync", json: #"{"callsign":"N0CALL","ssid":7,"auth":"13023"}"#).status == 200)
    // journalctl prints what the responder wrote to stderr; here that is its log file.
    let prelude = "journalctl() { cat \"$RESPONDER_LOG\"; }\n"
    let logs = try Self.run(
      try Self.block("logs"), prelude: prelude,
      environment: ["RESPONDER_LOG": stack.directory + "/responder.log"])
    #expect(logs.status == 0, "\(logs.stderrText)")
    let lines = logs.stdoutText.split(separator: "\n")
    #expect(lines.count == 2, "\(logs.stdoutText)")
    #expect(lines.allSatisfy { $0.contains(" level=info msg=\"request\" method=POST path=/v1/") })
    #expect(lines.contains { $0.contains("status=401") } && lines.contains { $0.contains("status=404") })
    #expect(!logs.stdoutText.contains("99999"), "a passcode is never logged")
  }

  /// A configuration error is exit status 2 for both services, and their units do not restart on it (no
  /// restart can fix it; anything else still restarts). Every `Documentation=` of the units is a file the
  /// operating guide's deploy steps (docs/operating.md) install.
  @Test func theServicesStayDownOnAConfigurationErrorAndTheirDocumentationIsInstalled() throws {
    let directory = try makeTemporaryDirectory("config-error")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let config = directory + "/aprs-cloud.ini"
    try "[server]\nlogLevel = loud\n".write(toFile: config, atomically: true, encoding: .utf8)
    var environment = ProcessInfo.processInfo.environment
    for name in ["APRS_CLOUD_CONFIG", "GATEWAY_INTERFACE"] { environment[name] = nil }
    let database = ["--db", directory + "/aprs-cloud.sqlite"]
    for (binary, unit, rest) in [
      ("aprs-listener", "aprs-listener.service", database),
      ("aprs-cloud-fcgi", "aprs-cloud-fcgi.service", database + ["--listen", directory + "/fcgi.sock"]),
    ] {
      for arguments in [["--config", config], ["--config", directory + "/missing.ini"], ["--no-such-flag"]] {
        let result = try runProcess(
          try TestPaths.executable(binary), arguments + rest, environment: environment, timeout: 10)
        #expect(result.status == 2, "\(binary) \(arguments): \(result.stderrText)")
      }
      let text = try String(contentsOfFile: TestPaths.nginxDirectory + "/systemd/" + unit, encoding: .utf8)
      let service = text.components(separatedBy: "[Service]")[1].components(separatedBy: "\n[")[0]
      #expect(service.contains("\nRestartPreventExitStatus=2\n"), "\(unit)")
    }

    let guide = try String(contentsOfFile: TestPaths.packageRoot + "/docs/operating.md", encoding: .utf8)
    let units = try FileManager.default.contentsOfDirectory(atPath: TestPaths.nginxDirectory + "/systemd")
    var documented = 0
    for unit in units {
      let text = try String(contentsOfFile: TestPaths.nginxDirectory + "/systemd/" + unit, encoding: .utf8)
      for line in text.split(separator: "\n") where line.hasPrefix("Documentation=") {
        for link in line.dropFirst("Documentation=".count).split(separator: " ")
        where link.hasPrefix("file://") {
          let path = link.dropFirst("file://".count)
          // The deploy steps install README.md and docs/*.md into one folder; the units name one of them.
          let url = URL(fileURLWithPath: String(path))
          let folder = url.deletingLastPathComponent().path
          #expect(
            guide.contains("install -D -m 644 -t \(folder) README.md docs/*.md\n"), "\(unit): \(path)")
          #expect(
            FileManager.default.fileExists(atPath: TestPaths.packageRoot + "/docs/" + url.lastPathComponent),
            "\(unit): \(path)")
          documented += 1
        }
      }
    }
    #expect(documented >= 4, "the services and the backup name their documentation")
  }

  /// The backup units docs/operating.md installs: `systemd-analyze verify`, and the command they run.
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")))
  func theBackupUnitsVerify() throws {
    let directory = try makeTemporaryDirectory("units")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let names = ["aprs-cloud-backup.service", "aprs-cloud-backup.timer"]
    for name in names {
      let text = try String(contentsOfFile: TestPaths.nginxDirectory + "/systemd/" + name, encoding: .utf8)
      try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
    }
    let verify = try runProcess(
      "/usr/bin/systemd-analyze", ["verify", "--man=no"] + names.map { directory + "/" + $0 })
    #expect(verify.status == 0, "\(verify.stdoutText)\(verify.stderrText)")
    #expect(
      verify.stderrText.isEmpty && verify.stdoutText.isEmpty, "\(verify.stdoutText)\(verify.stderrText)")
    let service = try String(contentsOfFile: directory + "/aprs-cloud-backup.service", encoding: .utf8)
    #expect(
      service.contains(
        "/usr/local/bin/aprs-cloud backup --db /var/lib/aprs-cloud/aprs-cloud.sqlite \"/var/backups/aprs-cloud/aprs-cloud-$(date +%%u).sqlite\""
      ))
    // The two services share the database directory through their group.
    for unit in ["aprs-cloud-fcgi.service", "aprs-listener.service"] {
      let text = try String(contentsOfFile: TestPaths.nginxDirectory + "/systemd/" + unit, encoding: .utf8)
      #expect(text.contains("\nGroup=aprs-cloud\n") && text.contains("\nUMask=0007\n"), "\(unit)")
      #expect(!text.contains("\nStateDirectory="), "\(unit)")
    }
  }
}
