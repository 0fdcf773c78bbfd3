import APRS
import Config
import Platform
import Testing

@testable import Listener
@testable import Store

@Suite struct ServerCommentTests {
  @Test func classification() {
    #expect(
      ServerComment.classify(bytes("# logresp N0CALL-10 verified, server T2TEXAS"))
        == .logresp(login: "N0CALL-10", verified: true, server: "T2TEXAS"))
    #expect(
      ServerComment.classify(bytes("# logresp N0CALL unverified, server T2TEXAS"))
        == .logresp(login: "N0CALL", verified: false, server: "T2TEXAS"))
    #expect(
      ServerComment.classify(bytes("# filter g/OH7LZB/N0CALL active"))
        == .filterActive(spec: "g/OH7LZB/N0CALL"))
    #expect(
      ServerComment.classify(bytes("# Login by user not allowed")) == .refusal("# Login by user not allowed"))
    #expect(
      ServerComment.classify(bytes("# Invalid username format")) == .refusal("# Invalid username format"))
    #expect(
      ServerComment.classify(bytes("# aprsc 2.1.21-g408ed49 29 Nov 2026 GMT T2TEST 1.2.3.4:14580")) == .other)
    #expect(ServerComment.classify(bytes("# Parse errors on filter spec: 'x/1'")) == .other)
  }
}

@Suite struct BackoffTests {
  @Test func doublesToTheMaximumWithinJitterBounds() {
    var backoff = Backoff(initialMs: 5_000, maximumMs: 300_000, jitter: 0.2)
    var step: Int64 = 5_000
    for index in 0..<12 {
      let unit = Double(index % 5) / 5
      let delay = backoff.nextDelay(unit: unit)
      #expect(backoff.bounds(step: step).contains(delay))
      step = min(step * 2, 300_000)
    }
    #expect(backoff.nextStepMs == 300_000)
    let value1 = backoff.nextDelay(unit: 0.999_999)
    #expect(value1 == 300_000)  // capped
    backoff.reset()
    let value2 = backoff.nextDelay(unit: 0.5)
    #expect(value2 == 5_000)
  }
}

@Suite struct RateWindowTests {
  @Test func linesPerSecondOverTheLastMinute() {
    var window = RateWindow()
    let value3 = window.record(now: 0, total: 0)
    #expect(value3 == 0)
    let value4 = window.record(now: 10_000, total: 100)
    #expect(value4 == 10)
    let value5 = window.record(now: 60_000, total: 600)
    #expect(value5 == 10)
    let value6 = window.record(now: 120_000, total: 600)
    #expect(value6 == 0)  // nothing in the last minute
    let value7 = window.record(now: 130_000, total: 1_600)
    #expect(abs(value7 - 1000.0 / 70) < 0.001)  // since the last sample at or before the window start
  }
}

@Suite struct ReceiveOnlyLoginTests {
  struct Fixed: RandomNumberGenerator {
    var value: UInt64
    mutating func next() -> UInt64 { value }
  }

  @Test func aLoginNameThatIsNobodysCall() {
    var generator = Fixed(value: 0x1A2B)
    let name = ReceiveOnlyLogin.generate(using: &generator)
    #expect(name.hasPrefix("ACLD") && name.count == 8)
    #expect(name.allSatisfy { $0.isUppercase || $0.isNumber })
    #expect(Set((0..<50).map { _ in ReceiveOnlyLogin.generate() }).count > 40)
  }
}

@Suite struct StatusReportTests {
  @Test func theListenersStatusAsPublished() {
    var status = ConnectionStatus()
    status.state = "online"
    status.connected = true
    status.verified = true
    status.receiveOnly = false
    status.server = "rotate.aprs2.net:14580"
    status.filterStations = 60
    status.filterBytes = 498
    status.filterEntries = 41
    status.filterExactStations = 20
    status.reconnects = 2
    var counts = ListenerCounts()
    counts[.linesRead] = 7
    counts[.reconnects] = 2
    let report = ListenerStatus(
      connection: status, login: "N0CALL-10", lastLineAt: 123, lineRate: 12.345, counts: counts,
      updatedAt: 456,
      startedAt: 100)
    #expect(report.state == "online" && report.login == "N0CALL-10" && report.startedAt == 100)
    let values = Dictionary(uniqueKeysWithValues: report.metaRows.map { ($0.key, $0.value) })
    #expect(values[ListenerStatus.key(.connected)] == "1")
    #expect(values[ListenerStatus.key(.verified)] == "1")
    #expect(values[ListenerStatus.key(.receiveOnly)] == "0")
    #expect(values[ListenerStatus.key(.server)] == "rotate.aprs2.net:14580")
    #expect(values[ListenerStatus.key(.filterSize)] == "60")
    #expect(values[ListenerStatus.key(.filterBytes)] == "498")
    #expect(values[ListenerStatus.key(.filterEntries)] == "41")
    #expect(values[ListenerStatus.key(.filterExactStations)] == "20")
    #expect(values[ListenerStatus.key(.lastLineAt)] == "123")
    #expect(values[ListenerStatus.key(.lineRate)] == "12.35")
    #expect(values[ListenerStatus.key(ListenerCounter.linesRead)] == "7")
    #expect(
      ListenerStatus.decimal(0.05) == "0.05" && ListenerStatus.decimal(3) == "3.00"
        && ListenerStatus.decimal(.nan) == "0.00")
  }
}

@Suite struct LineQueueTests {
  @Test func aFullQueueRefusesInsteadOfWaitingAndBatchesComeOutInOrder() {
    let queue = LineQueue(capacity: 3)
    #expect(queue.push([1]) && queue.push([2]) && queue.push([3]))
    #expect(!queue.push([4]))  // full: refused at once
    let first = queue.popBatch(maximum: 2, until: monotonicMilliseconds() + 1000)
    #expect(first.lines.map(\.bytes) == [[1], [2]] && !first.isClosed)
    #expect(queue.push([5]))
    queue.close()
    #expect(!queue.push([6]))
    let rest = queue.popBatch(maximum: 10, until: monotonicMilliseconds() + 1000)
    #expect(rest.lines.map(\.bytes) == [[3], [5]] && rest.isClosed)
    let started = monotonicMilliseconds()
    #expect(queue.popBatch(maximum: 10, until: started + 5_000).lines.isEmpty)
    #expect(monotonicMilliseconds() - started < 1_000)  // closed: no wait
  }

  @Test func theQueueIsBoundedByTheMemoryItsLinesTake() {
    let line = [UInt8](repeating: 0x41, count: 100)
    let cost = LineQueue.cost(line)
    #expect(cost == 100 + LineQueue.perLineOverhead)
    let queue = LineQueue(capacity: 1_000, byteCapacity: 3 * cost + cost / 2)
    #expect(queue.push(line) && queue.push(line) && queue.push(line))
    #expect(!queue.push(line))  // a fourth would pass the bytes, not the line count
    #expect(queue.push([0x42]))  // a short one still fits
    #expect(queue.byteCount == 3 * cost + LineQueue.cost([0x42]))
    let batch = queue.popBatch(maximum: 2, until: monotonicMilliseconds() + 1000)
    #expect(batch.lines.count == 2 && queue.byteCount == cost + LineQueue.cost([0x42]))
    #expect(queue.push(line))  // room again
    _ = queue.popBatch(maximum: 10, until: monotonicMilliseconds() + 1000)
    #expect(queue.byteCount == 0 && queue.count == 0)
  }

  @Test func anEmptyQueueWaitsOnlyUntilTheDeadline() {
    let queue = LineQueue(capacity: 3)
    let started = monotonicMilliseconds()
    let batch = queue.popBatch(maximum: 10, until: started + 50)
    #expect(batch.lines.isEmpty && !batch.isClosed)
    #expect(monotonicMilliseconds() - started >= 45)
  }
}

@Suite struct ListenerConfigTests {
  @Test func defaults() throws {
    let config = try ListenerConfig(ConfigFile())
    #expect(config.servers == [APRSISServer(host: "rotate.aprs2.net", port: 14580)])
    #expect(config.queueBytes == 4 << 20)
    #expect(config.login == nil && config.passcode == nil && config.isReceiveOnly)
    #expect(!config.trackOutgoing)
    #expect(config.watchdogMs == 60_000 && config.ackIntervalMs == 30_000 && config.leaseTtlMs == 30_000)
    #expect(config.server.stationExpiryMs == 7 * 86_400_000)
  }

  @Test func everyKeyIsRead() throws {
    let text = """
      [aprsis]
      servers = euro.aprs2.net:14580, [2001:db8::1]:14581
      login = N0CALL-10
      passcode = 13023
      trackOutgoing = yes
      watchdog = 5s
      reconnectDelay = 200ms
      maxReconnectDelay = 2s
      connectTimeout = 3s
      [listener]
      queueSize = 100
      queueBytes = 1048576
      leaseTtl = 3s
      publishInterval = 250ms
      registrationPoll = 100ms
      ackInterval = 2s
      [server]
      database = /tmp/x.sqlite
      stationExpiry = 1d
      """
    let file = try ConfigFile(parsing: text)
    let config = try ListenerConfig(file)
    #expect(
      config.servers == [
        APRSISServer(host: "euro.aprs2.net", port: 14580), APRSISServer(host: "2001:db8::1", port: 14581),
      ])
    #expect(config.login == "N0CALL-10" && config.passcode == 13023 && !config.isReceiveOnly)
    #expect(config.trackOutgoing)
    #expect(
      config.watchdogMs == 5_000 && config.reconnectDelayMs == 200 && config.maxReconnectDelayMs == 2_000)
    #expect(config.connectTimeoutMs == 3_000 && config.queueSize == 100 && config.leaseTtlMs == 3_000)
    #expect(config.queueBytes == 1_048_576)
    #expect(
      config.publishIntervalMs == 250 && config.registrationPollMs == 100 && config.ackIntervalMs == 2_000)
    #expect(config.server.database == "/tmp/x.sqlite" && config.server.stationExpiryMs == 86_400_000)
    #expect(file.warnings(for: .all).isEmpty)
  }

  @Test func anOldConfigWithTheFullFeedAndReconnectSpacingKeysLoadsWithAWarning() throws {
    let file = try ConfigFile(
      parsing: """
        [aprsis]
        servers = euro.aprs2.net:14580
        fullFeedServers = euro.aprs2.net:10152
        filterReconnectSpacing = 10s
        """, environment: ["APRS_CLOUD_APRSIS_FULLFEEDSERVERS": "other.example:10152"])
    let config = try ListenerConfig(file)
    #expect(config.servers == [APRSISServer(host: "euro.aprs2.net", port: 14580)])
    let warnings = file.warnings(for: .all)
    #expect(warnings.count == 3, "\(warnings)")
    #expect(warnings.contains { $0.contains("fullFeedServers in [aprsis] is no longer used") })
    #expect(warnings.contains { $0.contains("filterReconnectSpacing in [aprsis] is no longer used") })
    #expect(warnings.contains { $0.contains("APRS_CLOUD_APRSIS_FULLFEEDSERVERS is no longer used") })
    #expect(warnings.allSatisfy { $0.contains("remove") && !$0.contains("unknown") })
  }

  @Test func mistakesAreNamed() throws {
    for (text, fragment) in [
      ("[aprsis]\nservers = nohost", "aprsis.servers"),
      ("[aprsis]\nservers = a:99999", "aprsis.servers"),
      ("[aprsis]\nlogin = N0CALL", "needs [aprsis] passcode"),
      ("[aprsis]\npasscode = 13023", "needs [aprsis] login"),
      ("[aprsis]\nlogin = not a call\npasscode = 1", "aprsis.login"),
      ("[aprsis]\nlogin = N0CALL\npasscode = 99999", "aprsis.passcode"),
    ] {
      do {
        _ = try ListenerConfig(try ConfigFile(parsing: text))
        Issue.record("accepted: \(text)")
      } catch {
        #expect(error.description.contains(fragment), "\(error.description)")
      }
    }
    // The environment overrides the file.
    let file = try ConfigFile(
      parsing: "[aprsis]\nlogin = N0CALL\npasscode = 13023",
      environment: ["APRS_CLOUD_APRSIS_PASSCODE": "-1", "APRS_CLOUD_APRSIS_SERVER": "localhost:1"])
    let config = try ListenerConfig(file)
    #expect(config.passcode == -1 && config.isReceiveOnly)
    #expect(config.servers == [APRSISServer(host: "localhost", port: 1)])
  }
}
