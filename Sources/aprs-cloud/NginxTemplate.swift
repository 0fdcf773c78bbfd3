#if canImport(Glibc)
  import Glibc
#endif

/// `nginx/local.conf.template` and what it is rendered with.
struct NginxLocalConfig: Equatable {
  /// The template's file name inside the nginx folder.
  static let templateName = "local.conf.template"
  /// Files the rendered config includes from the nginx folder.
  static let includedFiles = ["aprs-cloud-http.conf", "aprs-cloud-api.conf", "aprs-cloud-metrics.conf"]

  var listen: UpListenAddress
  /// The private listener for `/metrics` (loopback only; nothing public proxies it).
  var metrics: UpListenAddress
  /// Absolute data directory: nginx's prefix.
  var prefix: String
  /// Absolute path of the responder's FastCGI socket.
  var socket: String
  /// Absolute path of the folder with the templates and the included files.
  var nginxDirectory: String
  /// Seconds nginx waits for the responder before answering 504.
  var readTimeout: Int = 60
  /// The user name for a `user` line, set only when nginx will start as root.
  var rootUser: String?
  /// The workers' open-file limit (`worker_rlimit_nofile`): 65536, or the hard limit of the user
  /// who starts nginx when that is lower (nginx cannot raise it past that without privileges).
  var openFiles = NginxLocalConfig.openFileLimit()

  /// The open files nginx is given at most.
  static let maxOpenFiles = 65_536

  /// `maxOpenFiles`, or this process's hard open-file limit when lower (nginx inherits it).
  static func openFileLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
    return Int(clamping: min(UInt64(maxOpenFiles), UInt64(limit.rlim_max)))
  }

  /// Connections per worker (`worker_connections`): 10,000 long polls hold two each, plus room for
  /// everything else, within `openFiles` (with some left for logs and listening sockets).
  var workerConnections: Int { max(64, min(32_768, openFiles - 128)) }

  /// Replaces the placeholders of `template`. Throws when a value cannot be written into an nginx
  /// configuration safely or when the template has a placeholder this build does not know.
  func render(_ template: String) throws(UpError) -> String {
    for (what, path) in [("data directory", prefix), ("socket", socket), ("nginx directory", nginxDirectory)]
    {
      guard path.hasPrefix("/") else { throw UpError("the \(what) path must be absolute: \(path)") }
      if let bad = path.first(where: { "\"'\\;{}$\n\r\t".contains($0) }) {
        throw UpError("the \(what) path contains '\(bad)', which nginx.conf cannot carry: \(path)")
      }
    }
    guard metrics.port != listen.port else {
      throw UpError("the metrics listener needs a port of its own, not \(listen.port) as the API's")
    }
    // A unix socket path has a hard limit (sun_path is 108 bytes with its NUL).
    guard socket.utf8.count < 108 else {
      throw UpError("the socket path is longer than 107 bytes (a unix socket limit): \(socket)")
    }
    let userLine =
      rootUser.map { "user \($0);" }
      ?? "# user: not started as root; nginx runs as the user who starts it."
    let values: [(String, String)] = [
      ("@LISTEN@", listen.description),
      ("@METRICS_LISTEN@", metrics.description),
      ("@PREFIX@", prefix),
      ("@SOCKET@", socket),
      ("@NGINX_DIR@", nginxDirectory),
      ("@READ_TIMEOUT@", String(readTimeout)),
      ("@OPEN_FILES@", String(openFiles)),
      ("@CONNECTIONS@", String(workerConnections)),
      ("@USER_LINE@", userLine),
    ]
    var text = template
    for (placeholder, value) in values {
      text = text.replacingAll(placeholder, with: value)
    }
    if let unknown = text.firstPlaceholder() {
      throw UpError("\(Self.templateName) has a placeholder this aprs-cloud does not know: \(unknown)")
    }
    return text
  }

  /// The user name of the effective user, when it is root (nginx then needs a `user` line, or its
  /// workers would switch to `nobody` and lose access to the socket and the data directory).
  static func currentRootUser() -> String? {
    guard geteuid() == 0 else { return nil }
    guard let entry = getpwuid(0), let name = entry.pointee.pw_name else { return "root" }
    return String(cString: name)
  }
}

/// Finding the nginx folder and files.
enum NginxFiles {
  /// The folder with `local.conf.template`: `explicit` (`--nginx-dir`), else `$APRS_CLOUD_NGINX_DIR`,
  /// else `nginx/` in the current directory, else `nginx/` (or `share/aprs-cloud/nginx/`) beside the
  /// executable or in one of its parent folders.
  static func findDirectory(explicit: String?) throws(UpError) -> String {
    if let explicit {
      return try checked(explicit, origin: "--nginx-dir")
    }
    if let variable = getenv("APRS_CLOUD_NGINX_DIR").map({ String(cString: $0) }), !variable.isEmpty {
      return try checked(variable, origin: "APRS_CLOUD_NGINX_DIR")
    }
    var candidates = ["nginx"]
    if let executable = UpProcess.executablePath() {
      var directory = parent(of: executable)
      while true {
        candidates.append(directory + "/nginx")
        candidates.append(directory + "/share/aprs-cloud/nginx")
        if directory == "/" || directory.isEmpty { break }
        directory = parent(of: directory)
      }
    }
    for candidate in candidates where isFile(candidate + "/" + NginxLocalConfig.templateName) {
      return absolute(candidate)
    }
    throw UpError(
      "cannot find the nginx/ folder with \(NginxLocalConfig.templateName) (looked in the current directory "
        + "and beside the executable); pass --nginx-dir or set APRS_CLOUD_NGINX_DIR")
  }

  private static func checked(_ path: String, origin: String) throws(UpError) -> String {
    guard isFile(path + "/" + NginxLocalConfig.templateName) else {
      throw UpError("\(origin): \(path) has no \(NginxLocalConfig.templateName)")
    }
    return absolute(path)
  }

  /// The folder part of `path` (`/` for a top-level entry).
  static func parent(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
  }

  static func isFile(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
  }

  static func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
  }

  /// `path` made absolute: resolved with realpath when it exists, else joined to the current directory
  /// with `.` and `..` folded.
  static func absolute(_ path: String) -> String {
    if let resolved = realpath(path, nil) {
      defer { free(resolved) }
      return String(cString: resolved)
    }
    var full = path
    if !path.hasPrefix("/") {
      var cwd = "."
      if let pointer = getcwd(nil, 0) {
        cwd = String(cString: pointer)
        free(pointer)
      }
      full = cwd + "/" + path
    }
    var parts: [Substring] = []
    for part in full.split(separator: "/") {
      if part == "." { continue }
      if part == ".." {
        _ = parts.popLast()
        continue
      }
      parts.append(part)
    }
    return "/" + parts.joined(separator: "/")
  }

  /// The whole contents of a text file.
  static func read(_ path: String) throws(UpError) -> String {
    guard let file = fopen(path, "rb") else {
      throw UpError("cannot read \(path): \(String(cString: strerror(errno)))")
    }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16_384)
    while true {
      let count = fread(&buffer, 1, buffer.count, file)
      if count <= 0 { break }
      bytes += buffer[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Writes `text` to `path` through a temporary file and a rename (never a half-written config).
  static func write(_ text: String, to path: String) throws(UpError) {
    let temporary = path + ".tmp"
    guard let file = fopen(temporary, "wb") else {
      throw UpError("cannot write \(temporary): \(String(cString: strerror(errno)))")
    }
    let bytes = Array(text.utf8)
    let written = fwrite(bytes, 1, bytes.count, file)
    let closed = fclose(file)
    guard written == bytes.count, closed == 0, rename(temporary, path) == 0 else {
      let reason = String(cString: strerror(errno))
      unlink(temporary)
      throw UpError("cannot write \(path): \(reason)")
    }
  }
}

extension String {
  /// Every occurrence of `target` replaced (without Foundation).
  fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
    guard !target.isEmpty else { return self }
    var result = ""
    var rest = self[...]
    while let range = rest.firstRange(of: target) {
      result += rest[..<range.lowerBound]
      result += replacement
      rest = rest[range.upperBound...]
    }
    result += rest
    return result
  }

  /// The first `@NAME@` left in the text (upper-case letters and underscores), if any.
  fileprivate func firstPlaceholder() -> String? {
    let characters = Array(self)
    var index = 0
    while index < characters.count {
      if characters[index] == "@" {
        var end = index + 1
        while end < characters.count, characters[end].isUppercase || characters[end] == "_" { end += 1 }
        if end > index + 1, end < characters.count, characters[end] == "@" {
          return String(characters[index...end])
        }
      }
      index += 1
    }
    return nil
  }
}
