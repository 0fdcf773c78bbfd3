import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// `feed PORT_FILE CORPUS_FILE [RATE] [SECONDS]`: a minimal APRS-IS server on 127.0.0.1 for the listener
/// benchmarks. It writes its port to PORT_FILE, accepts one client, sends a banner, answers the login line with a
/// verified logresp, then streams the corpus lines (CR LF each): as fast as the socket takes them when RATE is 0
/// (the corpus once), or RATE lines per second, cycling through the corpus, for SECONDS. Afterwards it sends a
/// keepalive every 10 s until the client leaves or SECONDS passed. When the stream starts it writes the epoch ms to
/// PORT_FILE.start. Prints `feed: sent N lines in S s = R lines/s` on stdout.
enum FeedBench: Benchmark {
  static let name = "feed"
  static let usage = "feed PORT_FILE CORPUS_FILE [RATE] [SECONDS]   play APRS-IS for aprs-listener"

  static func run(_ arguments: [String]) -> Int32 {
    guard (2...4).contains(arguments.count) else {
      printError("usage: aprs-cloud-bench \(usage)")
      return 2
    }
    guard let corpus = readFile(arguments[1]) else {
      printError("aprs-cloud-bench feed: cannot read \(arguments[1])")
      return 1
    }
    let rate = arguments.count > 2 ? Int(arguments[2]) ?? -1 : 0
    let duration = arguments.count > 3 ? Int(arguments[3]) ?? -1 : 60
    guard rate >= 0, duration > 0 else {
      printError("aprs-cloud-bench feed: RATE must be 0 or more, SECONDS more than 0")
      return 2
    }
    var lines: [[UInt8]] = []
    var start = 0
    for (index, byte) in corpus.enumerated() where byte == 0x0A {
      var line = Array(corpus[start..<index])
      while line.last == 0x0D { line.removeLast() }
      if !line.isEmpty { lines.append(line + [0x0D, 0x0A]) }
      start = index + 1
    }
    guard !lines.isEmpty else {
      printError("aprs-cloud-bench feed: the corpus has no lines")
      return 1
    }

    let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let size = socklen_t(MemoryLayout<sockaddr_in>.size)
    var length = size
    guard
      withUnsafePointer(
        to: &address, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, size) } })
        == 0, listen(server, 1) == 0,
      withUnsafeMutablePointer(
        to: &address,
        { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(server, $0, &length) } })
        == 0
    else {
      printError("aprs-cloud-bench feed: cannot listen on 127.0.0.1")
      return 1
    }
    writeText(arguments[0], String(UInt16(bigEndian: address.sin_port)))

    let client = accept(server, nil, nil)
    guard client >= 0 else { return 1 }
    var on: Int32 = 1
    setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    guard send(client, "# aprsc 2.1.21-gbench\r\n") else { return 1 }
    guard let login = readLogin(client) else {
      printError("aprs-cloud-bench feed: no login line")
      return 1
    }
    guard send(client, "# logresp \(login) verified, server T2BENCH\r\n") else { return 1 }

    let clock = ContinuousClock()
    let began = clock.now
    writeText(arguments[0] + ".start", String(epochMilliseconds()))
    var sent = 0
    if rate == 0 {
      var buffer: [UInt8] = []
      buffer.reserveCapacity(1 << 20)
      for line in lines {
        buffer += line
        if buffer.count >= 1 << 16 {
          guard sendAll(client, buffer) else { break }
          buffer.removeAll(keepingCapacity: true)
        }
        sent += 1
      }
      _ = sendAll(client, buffer)
    } else {
      // Ticks of 10 ms, each sending its share of the rate.
      var index = 0
      var tick = 0
      while duration * 100 > tick {
        let due = (tick + 1) * rate / 100 - tick * rate / 100
        var buffer: [UInt8] = []
        for _ in 0..<due {
          buffer += lines[index]
          index = (index + 1) % lines.count
        }
        guard sendAll(client, buffer) else { break }
        sent += due
        tick += 1
        let next = began + .milliseconds(tick * 10)
        let now = clock.now
        if next > now { sleep(now.duration(to: next)) }
      }
    }
    let elapsed = seconds(began.duration(to: clock.now))
    print(
      "feed: sent \(sent) lines in \(fixed(elapsed, decimals: 3)) s = \(Int((Double(sent) / max(elapsed, 1e-6)).rounded())) lines/s"
    )
    // Keep the connection (keepalives) until the client leaves or the time is up.
    let end = began + .seconds(duration)
    while clock.now < end {
      var probe = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
      if poll(&probe, 1, 10_000) > 0 {
        var scratch = [UInt8](repeating: 0, count: 4096)
        if recv(client, &scratch, scratch.count, 0) <= 0 { break }
      } else if !send(client, "# aprsc 2.1.21-gbench keepalive\r\n") {
        break
      }
    }
    close(client)
    close(server)
    return 0
  }

  private static func readLogin(_ fd: Int32) -> String? {
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while recv(fd, &byte, 1, 0) == 1 {
      if byte == 0x0A {
        let words = String(decoding: line, as: UTF8.self).split(separator: " ")
        if words.count >= 2, words[0].lowercased() == "user" { return String(words[1]) }
        line.removeAll()
      } else if byte != 0x0D {
        line.append(byte)
      }
    }
    return nil
  }

  private static func send(_ fd: Int32, _ text: String) -> Bool { sendAll(fd, Array(text.utf8)) }

  private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let count = bytes.withUnsafeBytes {
        Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
      }
      if count < 0 && errno == EINTR { continue }
      guard count > 0 else { return false }
      offset += count
    }
    return true
  }

  private static func sleep(_ duration: Duration) {
    let nanoseconds =
      duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    var request = timespec(
      tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    nanosleep(&request, nil)
  }

  /// Writes `text` to `path` through a temporary file and a rename, so a reader never sees half of it.
  private static func writeText(_ path: String, _ text: String) {
    let temporary = path + ".tmp"
    guard let file = fopen(temporary, "w") else { return }
    fputs(text + "\n", file)
    fclose(file)
    rename(temporary, path)
  }
}
