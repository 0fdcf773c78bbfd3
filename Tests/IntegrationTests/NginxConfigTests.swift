import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A nginx configuration rendered into a temporary prefix, with helpers to check and run it.
struct NginxPrefix {
  let directory: String

  init(_ label: String) throws {
    directory = try makeTemporaryDirectory(label)
  }

  /// A minimal main nginx.conf whose `http {}` holds `httpContent`, everything written inside the
  /// prefix. As root, workers keep root's identity (they must read the test key and reach the socket).
  func mainConfig(http httpContent: String) -> String {
    """
    daemon off;
    pid \(directory)/nginx.pid;
    error_log \(directory)/nginx-error.log;
    \(geteuid() == 0 ? "user root;" : "")
    events { worker_connections 64; }
    http {
        client_body_temp_path \(directory)/client_body_temp;
        fastcgi_temp_path \(directory)/fastcgi_temp;
        proxy_temp_path \(directory)/proxy_temp;
        scgi_temp_path \(directory)/scgi_temp;
        uwsgi_temp_path \(directory)/uwsgi_temp;
        access_log \(directory)/nginx-access.log;
    \(httpContent)
    }

    """
  }

  func write(_ name: String, _ text: String) throws -> String {
    let path = directory + "/" + name
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  /// `nginx -t` on `config`.
  func check(_ config: String) throws -> ProcessOutput {
    try runProcess(
      try TestPaths.nginx(),
      ["-t", "-p", directory + "/", "-c", config, "-e", directory + "/nginx-error.log"])
  }

  /// Starts nginx on `config` and waits until `url` answers (bounded).
  func start(_ config: String, readyURL: String, curlArguments: [String] = []) throws -> Process {
    let process = try TestStack.launch(
      try TestPaths.nginx(), ["-p", directory + "/", "-c", config, "-e", directory + "/nginx-error.log"],
      output: directory + "/nginx.out")
    let ready = waitUntil(timeout: 15) {
      !process.isRunning || (try? Curl.request("GET", readyURL, arguments: curlArguments, timeout: 2)) != nil
    }
    guard ready, process.isRunning else {
      TestStack.terminate(process)
      let log = (try? String(contentsOfFile: directory + "/nginx-error.log", encoding: .utf8)) ?? ""
      throw TestFailure("nginx did not start: \(log)")
    }
    return process
  }

  func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// The VPS site (nginx/aprs-cloud-site.conf) with its production paths and ports replaced by ones in
/// `prefix`, and a throwaway certificate.
struct RenderedSite {
  let prefix: NginxPrefix
  let httpsPort: Int
  let httpPort: Int
  /// The private `/metrics` listener (127.0.0.1:9180 in the shipped file).
  let metricsPort: Int
  let socket: String
  let config: String

  init(prefix: NginxPrefix, socket: String? = nil) throws {
    self.prefix = prefix
    httpsPort = try freePort()
    httpPort = try freePort()
    metricsPort = try freePort()
    let socketPath = socket ?? prefix.directory + "/fcgi.sock"
    self.socket = socketPath
    let directory = prefix.directory
    let key = directory + "/key.pem"
    let certificate = directory + "/cert.pem"
    let openssl = try runProcess(
      "/usr/bin/openssl",
      [
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=localhost",
      ])
    try #require(openssl.status == 0, "openssl: \(openssl.stderrText)")

    var site = try String(contentsOfFile: TestPaths.nginxDirectory + "/aprs-cloud-site.conf", encoding: .utf8)
    let replacements: [(String, String)] = [
      ("/etc/nginx/aprs-cloud/", TestPaths.nginxDirectory + "/"),
      ("/etc/letsencrypt/live/aprs.example.org/fullchain.pem", certificate),
      ("/etc/letsencrypt/live/aprs.example.org/privkey.pem", key),
      ("/run/aprs-cloud/fcgi.sock", socketPath),
      ("/var/log/nginx/", directory + "/"),
      ("/var/www/letsencrypt", directory + "/www"),
      ("/var/www/aprs-cloud", TestPaths.nginxDirectory + "/www"),
      ("listen 443 ssl http2;", "listen 127.0.0.1:\(httpsPort) ssl http2;"),
      ("listen [::]:443 ssl http2;", ""),
      ("listen 80;", "listen 127.0.0.1:\(httpPort);"),
      ("listen [::]:80;", ""),
      ("listen 127.0.0.1:9180;", "listen 127.0.0.1:\(metricsPort);"),
    ]
    for (old, new) in replacements {
      try #require(site.contains(old), "aprs-cloud-site.conf no longer contains \(old)")
      site = site.replacingOccurrences(of: old, with: new)
    }
    let directives = site.split(separator: "\n").filter {
      !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#")
    }
    for production in ["/etc/", "/var/", "/run/"] {
      #expect(
        !directives.contains { $0.contains(production) },
        "a production path is left in the test copy: \(production)")
    }
    let sitePath = try prefix.write("site.conf", site)
    config = try prefix.write("nginx.conf", prefix.mainConfig(http: "    include \(sitePath);"))
  }
}

@Suite struct NginxConfigTests {
  @Test func localConfigRenderedByTheCLIPassesNginxT() throws {
    let prefix = try NginxPrefix("local")
    defer { prefix.remove() }
    let rendered = try runProcess(
      try TestPaths.executable("aprs-cloud"),
      [
        "nginx-config", "--http", "127.0.0.1:\(try freePort())", "--data", prefix.directory, "--nginx-dir",
        TestPaths.nginxDirectory,
      ])
    try #require(rendered.status == 0, "\(rendered.stderrText)")
    let text = rendered.stdoutText
    #expect(text.firstMatch(of: /@[A-Z_]+@/) == nil, "a placeholder is left")
    #expect(text.contains("include \"\(TestPaths.nginxDirectory)/aprs-cloud-http.conf\";"))
    #expect(text.contains("include \"\(TestPaths.nginxDirectory)/aprs-cloud-api.conf\";"))
    #expect(text.contains("include \"\(TestPaths.nginxDirectory)/aprs-cloud-metrics.conf\";"))
    #expect(text.contains("root \"\(TestPaths.nginxDirectory)/www\";"), "the web client beside the templates")
    #expect(text.contains("include \"\(TestPaths.nginxDirectory)/aprs-cloud-www.conf\";"))
    #expect(text.contains("listen 127.0.0.1:9180;"), "the default private metrics listener")
    #expect(text.contains("server \"unix:\(prefix.directory)/fcgi.sock\";"))
    #expect(text.contains("daemon off;"))
    for line in text.split(separator: "\n") where line.contains("_temp_path") || line.hasPrefix("pid") {
      #expect(line.contains(prefix.directory), "\(line) is outside the data directory")
    }
    let config = try prefix.write("nginx.conf", text)
    let check = try prefix.check(config)
    #expect(check.status == 0, "nginx -t: \(check.stderrText)")
  }

  @Test func siteConfigPassesNginxT() throws {
    let prefix = try NginxPrefix("site")
    defer { prefix.remove() }
    let site = try RenderedSite(prefix: prefix)
    let check = try prefix.check(site.config)
    #expect(check.status == 0, "nginx -t: \(check.stderrText)")
    #expect(!check.stderrText.contains("[warn]"), "\(check.stderrText)")
  }

  /// The snippet and the http part added to an existing server block that serves a site of its own:
  /// the API paths answer (JSON), the host's other paths stay the host's.
  @Test func snippetAddsTheAPIToAnExistingServer() throws {
    let prefix = try NginxPrefix("snippet")
    defer { prefix.remove() }
    let port = try freePort()
    let fake = try FakeFastCGI(socketPath: prefix.directory + "/fcgi.sock") { _ in FakeFastCGI.json(200, "{}")
    }
    defer { fake.stop() }
    let http = """
          include \(TestPaths.nginxDirectory)/aprs-cloud-http.conf;
          upstream aprs_cloud_fcgi { server unix:\(prefix.directory)/fcgi.sock; }
          server {
              listen 127.0.0.1:\(port);
              location / { default_type text/plain; return 200 "the host's own site"; }
              include \(TestPaths.nginxDirectory)/aprs-cloud-api.conf;
          }
      """
    let config = try prefix.write("nginx.conf", prefix.mainConfig(http: http))
    let check = try prefix.check(config)
    try #require(check.status == 0, "nginx -t: \(check.stderrText)")
    let nginx = try prefix.start(config, readyURL: "http://127.0.0.1:\(port)/")
    defer { TestStack.terminate(nginx) }

    let home = try Curl.request("GET", "http://127.0.0.1:\(port)/index.html")
    #expect(home.status == 200 && home.text == "the host's own site")
    let api = try Curl.request("POST", "http://127.0.0.1:\(port)/v1/sync", body: Data("{}".utf8))
    #expect(api.status == 200 && api.text == "{}")
    let tooLarge = try Curl.request(
      "POST", "http://127.0.0.1:\(port)/v1/sync", body: Data(repeating: 0x61, count: 70_000))
    #expect(tooLarge.status == 413 && tooLarge.errorMessage != nil)
    // /metrics is the API's 404 here, not the host's page and never the responder's.
    expectAPIAnswer(try Curl.request("GET", "http://127.0.0.1:\(port)/metrics"), status: 404)
    #expect(fake.requests.allSatisfy { $0.params["DOCUMENT_URI"] != "/metrics" })
    #expect(fake.requests.allSatisfy { $0.params["APRS_CLOUD_METRICS"] == "" })
    // Loopback is rate-limited like any client.
    let statuses = try Curl.statuses(
      "POST", "http://127.0.0.1:\(port)/v1/sync", count: 200, body: Data("{}".utf8))
    #expect(statuses.contains(429), "\(statuses)")
  }

  /// `systemd-analyze verify` on the units, with the executables pointed at a file that exists.
  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze")))
  func systemdUnitsVerify() throws {
    let directory = try makeTemporaryDirectory("units")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let names = ["aprs-cloud-fcgi.socket", "aprs-cloud-fcgi.service", "aprs-listener.service"]
    for name in names {
      var text = try String(contentsOfFile: TestPaths.nginxDirectory + "/systemd/" + name, encoding: .utf8)
      for binary in ["/usr/local/bin/aprs-cloud-fcgi", "/usr/local/bin/aprs-listener"] {
        text = text.replacingOccurrences(of: binary, with: "/bin/true")
      }
      try text.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
    }
    let verify = try runProcess(
      "/usr/bin/systemd-analyze", ["verify", "--man=no"] + names.map { directory + "/" + $0 })
    #expect(verify.status == 0, "\(verify.stdoutText)\(verify.stderrText)")
    #expect(
      verify.stderrText.isEmpty && verify.stdoutText.isEmpty, "\(verify.stdoutText)\(verify.stderrText)")

    let socket = try String(contentsOfFile: directory + "/aprs-cloud-fcgi.socket", encoding: .utf8)
    for line in ["ListenStream=/run/aprs-cloud/fcgi.sock", "SocketMode=0660", "SocketUser=", "SocketGroup="] {
      #expect(socket.contains(line))
    }
    let service = try String(contentsOfFile: directory + "/aprs-cloud-fcgi.service", encoding: .utf8)
    for line in [
      "StandardInput=socket", "StandardOutput=journal", "ProtectSystem=strict",
      "ReadWritePaths=/var/lib/aprs-cloud",
      "NoNewPrivileges=yes",
    ] {
      #expect(service.contains(line))
    }
    let listener = try String(contentsOfFile: directory + "/aprs-listener.service", encoding: .utf8)
    #expect(listener.contains("Restart=always"))
  }

  @Test func nginxConfigRefusesBadInput() throws {
    let cli = try TestPaths.executable("aprs-cloud")
    let badAddress = try runProcess(cli, ["nginx-config", "--http", "localhost"])
    #expect(badAddress.status == 2)
    #expect(badAddress.stderrText.contains("--http"))
    for metrics in ["0.0.0.0:9180", "192.0.2.1:9180", "127.0.0.2:9180", "[::]:9180", "nope"] {
      let refused = try runProcess(cli, ["nginx-config", "--metrics", metrics])
      #expect(refused.status == 2, "\(metrics)")
      #expect(refused.stderrText.contains("--metrics"), "\(metrics): \(refused.stderrText)")
    }
    let samePort = try runProcess(
      cli,
      [
        "nginx-config", "--http", "127.0.0.1:9000", "--metrics", "127.0.0.1:9000", "--nginx-dir",
        TestPaths.nginxDirectory,
      ])
    #expect(samePort.status == 1 && samePort.stderrText.contains("port of its own"), "\(samePort.stderrText)")

    let badPath = try runProcess(
      cli, ["nginx-config", "--data", "/tmp/a\"b", "--nginx-dir", TestPaths.nginxDirectory])
    #expect(badPath.status == 1)
    #expect(badPath.stderrText.contains("cannot carry"))

    let noTemplates = try runProcess(cli, ["nginx-config", "--nginx-dir", "/nonexistent"])
    #expect(noTemplates.status == 1)
    #expect(noTemplates.stderrText.contains("local.conf.template"))
  }

  /// Without --nginx-dir the templates are found from the executable's path, from any directory.
  @Test func nginxConfigFindsTheTemplatesBesideTheExecutable() throws {
    var environment = ProcessInfo.processInfo.environment
    environment["APRS_CLOUD_NGINX_DIR"] = nil
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try TestPaths.executable("aprs-cloud"))
    process.arguments = ["nginx-config", "--data", "/tmp/somewhere"]
    process.environment = environment
    process.currentDirectoryURL = URL(fileURLWithPath: "/")
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(
      String(decoding: output, as: UTF8.self).contains(
        "include \"\(TestPaths.nginxDirectory)/aprs-cloud-api.conf\""))

    environment["APRS_CLOUD_NGINX_DIR"] = "/nonexistent"
    let fromVariable = try runProcess(
      try TestPaths.executable("aprs-cloud"), ["nginx-config"], environment: environment)
    #expect(fromVariable.status == 1)
    #expect(fromVariable.stderrText.contains("APRS_CLOUD_NGINX_DIR"))
  }
}
