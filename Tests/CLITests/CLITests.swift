import Foundation
import JSON
import Testing

/// Runs the built `aprs-cloud` binary (beside the test bundle) with arguments and stdin.
func runCLI(_ arguments: [String], stdin: [UInt8] = [], directory: String? = nil) throws -> (
  status: Int32, stdout: String, stderr: String
) {
  let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    .deletingLastPathComponent().appendingPathComponent("aprs-cloud")
  let process = Process()
  process.executableURL = executable
  process.arguments = arguments
  if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
  let input = Pipe()
  let output = Pipe()
  let errors = Pipe()
  process.standardInput = input
  process.standardOutput = output
  process.standardError = errors
  try process.run()
  let writer = Thread {
    input.fileHandleForWriting.write(Data(stdin))
    try? input.fileHandleForWriting.close()
  }
  writer.start()
  let errorData = DispatchQueue(label: "stderr")
  nonisolated(unsafe) var errorBytes = Data()
  let group = DispatchGroup()
  group.enter()
  errorData.async {
    errorBytes = errors.fileHandleForReading.readDataToEndOfFile()
    group.leave()
  }
  let outBytes = output.fileHandleForReading.readDataToEndOfFile()
  group.wait()
  process.waitUntilExit()
  return (
    process.terminationStatus, String(decoding: outBytes, as: UTF8.self),
    String(decoding: errorBytes, as: UTF8.self)
  )
}

@Suite struct CLITests {
  @Test(arguments: [
    ("N0CALL", "13023"), ("n0call", "13023"), ("N0CALL-10", "13023"), ("TESTCALL", "31742"),
    ("SUCHCALL", "27890"), ("MUCHSIGN", "27128"), ("WOW", "29613"), ("W5AGO", "10896"), ("SRC", "25520"),
    ("TESTING", "31421"), ("OH7LZB", "20900"),
  ])
  func passcodePrintsTheVector(call: String, expected: String) throws {
    let result = try runCLI(["passcode", call])
    #expect(result.status == 0)
    #expect(result.stdout == expected + "\n")
  }

  @Test func passcodeRefusesBadCallsWithStatus1AndMissingOnesWith2() throws {
    let bad = try runCLI(["passcode", "N0 CALL!"])
    #expect(bad.status == 1)
    #expect(bad.stderr.contains("callsign"))
    #expect(try runCLI(["passcode"]).status == 2)
    #expect(try runCLI(["passcode", "A", "B"]).status == 2)
  }

  @Test func everySubcommandHasHelp() throws {
    let top = try runCLI(["--help"])
    #expect(top.status == 0)
    for command in ["passcode", "parse", "migrate"] {
      #expect(top.stdout.contains(command))
      let help = try runCLI([command, "--help"])
      #expect(help.status == 0, "\(command)")
      #expect(help.stdout.contains("usage: aprs-cloud \(command)"), "\(command)")
    }
  }

  /// The overview lists every command, `up` with every process it runs; the push commands' help names every
  /// provider they send through.
  @Test func theOverviewAndThePushHelpNameEverything() throws {
    let top = try runCLI(["--help"])
    #expect(top.stdout.contains("  push-worker "), "\(top.stdout)")
    #expect(top.stdout.contains("(nginx, responder, listener, database)"), "\(top.stdout)")
    for command in ["push-test", "push-worker"] {
      let help = try runCLI([command, "--help"])
      #expect(help.status == 0, "\(command)")
      for provider in ["FCM", "APNs", "Web Push", "UnifiedPush"] {
        #expect(help.stdout.contains(provider), "\(command) --help names \(provider)")
      }
    }
  }

  @Test func wrongUsageExits2() throws {
    #expect(try runCLI([]).status == 2)
    let unknown = try runCLI(["frobnicate"])
    #expect(unknown.status == 2)
    #expect(unknown.stderr.contains("unknown command"))
    #expect(try runCLI(["migrate"]).status == 2)
    #expect(try runCLI(["migrate", "--nope", "x"]).status == 2)
    #expect(try runCLI(["parse", "extra"]).status == 2)
  }

  @Test func parsePrintsOneObjectPerLineAndNeverStops() throws {
    var input = Array("OH7AA-1>APRS,WIDE1-1,WIDE2-2,qAo,OH7AA::OH7LZB   :Testing, 1 2 3{42\r\n".utf8)
    input += Array("A-1>APRS,B-2,WIDE1*:}C>APU25N,TCPIP,A-1*::DEF      :ack56\n".utf8)
    input += Array("# aprsc 2.1.21-g\n".utf8)
    input += Array("no separators at all\n".utf8)
    input += [0x00, 0xFF, 0x3E, 0x3A, 0x0A]  // NUL, 0xFF, '>', ':'
    input += Array(("N0CALL>APRS::W5AGO    :" + String(repeating: "x", count: 600) + "\n").utf8)
    input += Array("K1ABC>APRS::N0CALL-7 :hi {there}{AB}CD\n".utf8)
    input += Array("N0CALL>APRS::BLN1     :bulletin text\n".utf8)
    input += Array("N0CALL>APRS,TCPIP*:!4903.50N/07201.75W-position".utf8)  // no final newline
    let result = try runCLI(["parse"], stdin: input)
    #expect(result.status == 0)
    let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    #expect(lines.count == 9)
    let objects = try lines.map { line -> JSONObject in
      guard case .object(let object) = try JSONParser.parse(Array(line.utf8)) else { throw CLIError() }
      return object
    }
    #expect(
      objects.map { $0["kind"]?.string } == [
        "message", "ack", "comment", "invalid", "invalid", "invalid", "message", "bulletin", "other",
      ])
    #expect(objects[0]["addressee"]?.string == "OH7LZB")
    #expect(objects[0]["msgno"]?.string == "42")
    #expect(objects[0]["text"]?.string == "Testing, 1 2 3")
    #expect(objects[0]["error"] == nil)
    #expect(objects[1]["source"]?.string == "C")
    #expect(objects[1]["msgno"]?.string == "56")
    #expect(objects[3]["error"] != nil)
    #expect(
      objects[5]["error"]?.string?.contains("512") == true
        || objects[5]["error"]?.string?.contains("long") == true)
    #expect(objects[6]["msgno"]?.string == "AB")
    #expect(objects[6]["replyAck"]?.string == "CD")
    #expect(objects[6]["text"]?.string == "hi {there}")
    #expect(objects[8]["source"]?.string == "N0CALL")
  }

  @Test func migrateCreatesAndReportsTheVersion() throws {
    let directory = NSTemporaryDirectory() + "cli-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let first = try runCLI(["migrate", "--db", directory + "/a.sqlite"])
    #expect(first.status == 0)
    #expect(first.stdout.hasPrefix("schema version "))
    let again = try runCLI(["migrate", "--db=\(directory)/a.sqlite"])
    #expect(again.stdout == first.stdout)
    let missingDirectory = try runCLI(["migrate", "--db", directory + "/no/such/dir/a.sqlite"])
    #expect(missingDirectory.status == 1)
    #expect(!missingDirectory.stderr.isEmpty)
  }
}

struct CLIError: Error {}

extension JSONValue {
  var string: String? { if case .string(let text) = self { text } else { nil } }
}
