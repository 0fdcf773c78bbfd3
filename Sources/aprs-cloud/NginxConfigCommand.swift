import Config

/// `aprs-cloud nginx-config`: prints the nginx.conf that `aprs-cloud up` runs.
enum NginxConfigCommand: Command {
  static let name = "nginx-config"
  static let summary = "print the local nginx.conf rendered from nginx/local.conf.template"
  static let usage = """
    usage: aprs-cloud nginx-config [--http HOST:PORT] [--metrics HOST:PORT] [--data DIR]
                                   [--socket PATH] [--nginx-dir DIR] [--read-timeout SECONDS]

    Renders nginx/local.conf.template to standard output: a complete nginx.conf
    that listens on HOST:PORT, keeps its pid, logs and temporary files in DIR
    (run it with `nginx -p DIR -c FILE`), includes the project's
    aprs-cloud-http.conf, aprs-cloud-api.conf and aprs-cloud-metrics.conf, and
    passes the API to the responder's FastCGI socket. /metrics is served only
    by a second server on the loopback address of --metrics (the API's server
    answers it 404). `aprs-cloud up` writes the same file to DIR/nginx.conf.

    options:
      --http HOST:PORT        where nginx listens (default 127.0.0.1:8080)
      --metrics HOST:PORT     the private /metrics listener, a loopback address
                              (default 127.0.0.1:9180)
      --data DIR              the data directory, nginx's prefix (default ./var)
      --socket PATH           the responder's unix socket (default DIR/fcgi.sock)
      --nginx-dir DIR         the folder with the templates; default: $APRS_CLOUD_NGINX_DIR,
                              else nginx/ in the current directory or beside the executable
      --read-timeout SECONDS  how long nginx waits for the responder before a 504 (default 60)
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    let parsed: Arguments
    let config: NginxLocalConfig
    do {
      parsed = try Arguments(
        arguments, options: ["http", "metrics", "data", "socket", "nginx-dir", "read-timeout"])
      guard parsed.positionals.isEmpty else {
        throw UsageError("unexpected argument '\(parsed.positionals[0])'")
      }
      let listen = try UpListenAddress(parsing: parsed.options["http"] ?? "127.0.0.1:8080")
      let metrics = try UpListenAddress(
        parsingMetrics: parsed.options["metrics"] ?? UpListenAddress.defaultMetrics)
      var timeout = 60
      if let text = parsed.options["read-timeout"] {
        guard let value = Int(text), (1...86_400).contains(value) else {
          throw UsageError("--read-timeout must be a whole number of seconds from 1 to 86400")
        }
        timeout = value
      }
      let data = NginxFiles.absolute(parsed.options["data"] ?? "./var")
      config = NginxLocalConfig(
        listen: listen, metrics: metrics, prefix: data,
        socket: NginxFiles.absolute(parsed.options["socket"] ?? data + "/fcgi.sock"),
        nginxDirectory: "", readTimeout: timeout, rootUser: NginxLocalConfig.currentRootUser())
    } catch {
      printError("aprs-cloud nginx-config: \(error)\n\n\(usage)")
      return .usage
    }
    do throws(UpError) {
      var rendered = config
      rendered.nginxDirectory = try NginxFiles.findDirectory(explicit: parsed.options["nginx-dir"])
      let template = try NginxFiles.read(rendered.nginxDirectory + "/" + NginxLocalConfig.templateName)
      print(try rendered.render(template), terminator: "")
      return .success
    } catch {
      printError("aprs-cloud nginx-config: \(error)")
      return .failure
    }
  }
}
