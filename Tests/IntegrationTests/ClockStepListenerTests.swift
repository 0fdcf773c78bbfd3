import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The real listener with its wall clock stepped under it by Debian's libfaketime (`faketime`, in `make
/// deps-test`): `LD_PRELOAD` with `FAKETIME_TIMESTAMP_FILE`, whose offset the test rewrites while the listener
/// runs (`FAKETIME_NO_CACHE`: read at every clock call), and `FAKETIME_DONT_FAKE_MONOTONIC` (an NTP step moves
/// only the wall clock). The listener is configured through the environment (`APRS_CLOUD_CONFIG`,
/// `APRS_CLOUD_SERVER_DATABASE`): under libfaketime its command-line arguments do not reach it. Retransmissions of one message (numbered: a 1 h dedup window) after steps of +1 h,
/// +2 h more and −1 h are stored once and pushed once; a new message after them is stored after the first.
@Suite(.serialized) struct ClockStepListenerTests {
  static let library = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

  @Test func retransmissionsAcrossWallClockStepsAreStoredAndPushedOnce() throws {
    try #require(
      FileManager.default.fileExists(atPath: Self.library),
      "libfaketime is missing: install the Debian package faketime (make deps-test)")
    let fake = try FakeAPRSIS()
    defer { fake.stop() }
    let (directory, database) = try makeListenerDatabase("clock-step")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try database.register(["OH7LZB"], ackMessages: true)
    let offsetFile = directory + "/faketime"
    func setOffset(_ spec: String) throws {
      try spec.write(toFile: offsetFile, atomically: true, encoding: .utf8)
    }
    try setOffset("+0")
    // Under libfaketime a Swift program sees no command-line arguments (argv does not reach the Swift runtime):
    // the config file and the database come from the environment instead.
    let configPath = directory + "/listener.ini"
    try ListenerProcess.config(fake: fake).write(toFile: configPath, atomically: true, encoding: .utf8)
    var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APRS_CLOUD_") }
    environment["APRS_CLOUD_CONFIG"] = configPath
    environment["APRS_CLOUD_SERVER_DATABASE"] = database.path
    environment["LD_PRELOAD"] = Self.library
    environment["FAKETIME_TIMESTAMP_FILE"] = offsetFile
    environment["FAKETIME_NO_CACHE"] = "1"
    environment["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
    let listener = try ListenerProcess(
      database: database.path, config: ListenerProcess.config(fake: fake), environment: environment)
    defer { listener.stop() }
    #expect(listener.waitForLog(#"msg="logged in""#, timeout: 20), "\(listener.log)")

    let copy = messageLine(from: "W1AW", to: "OH7LZB", text: "across a clock step", msgno: "7")
    func messages() throws -> Int { try database.int("SELECT count(*) FROM messages") }
    func outbox() throws -> Int { try database.int("SELECT count(*) FROM outbox") }
    func duplicates() throws -> Int { Int(try database.meta("duplicates") ?? "0") ?? 0 }
    _ = try fake.inject([copy])
    #expect(try database.waitUntil { _ in try messages() == 1 }, "\(listener.log)")
    let firstStamp = try database.int("SELECT timestamp FROM messages")

    // Each step, then the sender's next copy: a duplicate every time (the listener's published counter), nothing
    // stored or queued for push a second time.
    for (index, spec) in ["+1h", "+3h", "-1h"].enumerated() {
      try setOffset(spec)
      usleep(300_000)
      try fake.advance(31)  // the sender's next copy, past the fake's (aprsc's) 30 s duplicate filter
      #expect(try fake.inject([copy]) == 1)
      #expect(
        try database.waitUntil { _ in try duplicates() == index + 1 },
        "step \(spec): \((try? duplicates()) ?? -1) duplicates:\n\(listener.log)")
      #expect(try messages() == 1, "step \(spec): stored again:\n\(listener.log)")
      #expect(try outbox() <= 1, "step \(spec): pushed again")
    }
    // A new message after the steps (the wall clock now an hour behind): stored, after the first.
    _ = try fake.inject([messageLine(from: "W1AW", to: "OH7LZB", text: "after the steps", msgno: "8")])
    #expect(try database.waitUntil { _ in try messages() == 2 }, "\(listener.log)")
    let second = try database.int("SELECT timestamp FROM messages WHERE msgno = '8'")
    #expect(second > firstStamp, "the cursor went back: \(second) after \(firstStamp)")
    #expect(listener.terminate() == 0)
  }
}
