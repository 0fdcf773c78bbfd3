import Foundation
import Logging
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

@Suite struct LoggerTests {
  let noon: Int64 = 1_795_960_800_123  // 2026-11-29T14:00:00.123Z

  @Test func timestamps() {
    #expect(Logger.timestamp(epochMs: noon) == "2026-11-29T14:00:00.123Z")
    #expect(Logger.timestamp(epochMs: 0) == "1970-01-01T00:00:00.000Z")
    #expect(Logger.timestamp(epochMs: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
    #expect(Logger.timestamp(epochMs: 4_107_542_399_999) == "2100-02-28T23:59:59.999Z")
    #expect(Logger.timestamp(epochMs: -1) == "1969-12-31T23:59:59.999Z")
    #expect(Logger.timestamp(epochMs: 1_704_067_199_000) == "2023-12-31T23:59:59.000Z")
  }

  @Test func formatsKeyValueLines() {
    let line = Logger.format(
      timestampMs: noon, level: .info, message: "request",
      fields: [
        ("method", "POST"), ("path", "/v1/sync"), ("station", "N0CALL-7"), ("status", "200"), ("us", "153"),
      ])
    #expect(
      line
        == #"ts=2026-11-29T14:00:00.123Z level=info msg="request" method=POST path=/v1/sync station=N0CALL-7 status=200 us=153"#
    )
  }

  @Test func quotesOnlyWhenNeeded() {
    func field(_ value: String) -> String {
      let line = Logger.format(timestampMs: 0, level: .warn, message: "m", fields: [("k", value)])
      let prefix = "ts=1970-01-01T00:00:00.000Z level=warn msg=\"m\" k="
      #expect(line.hasPrefix(prefix))
      return String(line.dropFirst(prefix.count))
    }
    #expect(field("plain") == "plain")
    #expect(field("/v1/sync?x") == "/v1/sync?x")
    #expect(field("") == #""""#)
    #expect(field("two words") == #""two words""#)
    #expect(field(#"say "hi""#) == #""say \"hi\"""#)
    #expect(field("a=b") == #""a=b""#)
    #expect(field(#"back\slash"#) == #""back\\slash""#)
    #expect(field("line\nbreak\r\tx") == #""line\nbreak\r\tx""#)
    #expect(field("esc\u{1B}[31m") == #""esc\x1b[31m""#)
    #expect(field("del\u{7F}") == #""del\x7f""#)
    #expect(field("sep\u{2028}") == #""sep\u2028""#)
    #expect(field("ünïcode✓") == "ünïcode✓")
  }

  @Test func messagesAreAlwaysQuotedAndKeysSanitized() {
    let line = Logger.format(
      timestampMs: 0, level: .error, message: "listener \"down\"\n", fields: [("bad key=", "x"), ("", "y")])
    #expect(line == #"ts=1970-01-01T00:00:00.000Z level=error msg="listener \"down\"\n" bad_key_=x _=y"#)
  }

  @Test func longValuesAreCut() {
    let long = String(repeating: "a", count: 1000)
    let line = Logger.format(timestampMs: 0, level: .info, message: long, fields: [("v", long)])
    let cut = "\"" + String(repeating: "a", count: Logger.maxValueLength) + "…\""
    #expect(line == "ts=1970-01-01T00:00:00.000Z level=info msg=\(cut) v=\(cut)")
  }

  @Test func writesOneLinePerEventAndFiltersByLevel() throws {
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    defer {
      close(fds[0])
    }
    let logger = Logger(level: .info, fileDescriptor: fds[1], clock: { 1_795_960_800_123 })
    #expect(!logger.isEnabled(.debug))
    #expect(logger.isEnabled(.warn))
    logger.debug("hidden", ["a": "1"])
    logger.info("shown", ["a": "1", "b": "two words"])
    logger.log(.error, "built", fields: [("n", "2")])
    logger.warn("w")
    close(fds[1])
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
      if count <= 0 { break }
      bytes += buffer[0..<count]
    }
    let text = String(decoding: bytes, as: UTF8.self)
    #expect(
      text == """
        ts=2026-11-29T14:00:00.123Z level=info msg="shown" a=1 b="two words"
        ts=2026-11-29T14:00:00.123Z level=error msg="built" n=2
        ts=2026-11-29T14:00:00.123Z level=warn msg="w"

        """)
  }

  @Test func linesFromManyThreadsNeverInterleave() throws {
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    defer {
      close(fds[0])
      close(fds[1])
    }
    let logger = Logger(level: .debug, fileDescriptor: fds[1], clock: { 0 })
    let threads = 8
    let perThread = 200
    let pad = String(repeating: "x", count: 100)
    // Real threads (not tasks): the writers block on the full pipe until this thread reads.
    for thread in 0..<threads {
      let writer = Thread {
        for index in 0..<perThread {
          logger.info("event", ["thread": String(thread), "index": String(index), "pad": pad])
        }
      }
      writer.start()
    }
    var bytes: [UInt8] = []
    var newlines = 0
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while newlines < threads * perThread {
      var ready = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
      guard poll(&ready, 1, 20_000) == 1 else {
        Issue.record("only \(newlines) lines within 20 s")
        return
      }
      let count = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
      guard count > 0 else { break }
      bytes += buffer[0..<count]
      newlines += buffer[0..<count].filter { $0 == UInt8(ascii: "\n") }.count
    }
    let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
    #expect(lines.count == threads * perThread)
    for line in lines {
      #expect(line.hasPrefix("ts=1970-01-01T00:00:00.000Z level=info msg=\"event\" thread="))
      #expect(line.hasSuffix(" pad=" + pad))
    }
  }
}
