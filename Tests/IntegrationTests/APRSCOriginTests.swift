import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Where the real aprsc comes from (``RealAPRSC/origin(environment:packageRoot:exists:)``) and how
/// `.ci/build-aprsc` builds it from each shape of source, on a stand-in source tree whose `configure` and
/// `make aprsc` copy a shell script: no aprsc needed, so these run in every clone.
@Suite struct APRSCOriginTests {
  static let root = "/src/aprs-cloud"

  @Test func aBuiltBinaryComesFirstThenTheSourceThenTheSharedFolder() {
    let everything = ["APRSC": "/opt/aprsc/sbin/aprsc", "APRSC_SRC": "/tmp/aprsc.tar.gz"]
    #expect(
      RealAPRSC.origin(environment: everything, packageRoot: Self.root, exists: { _ in true })
        == .binary("/opt/aprsc/sbin/aprsc"))
    #expect(
      RealAPRSC.origin(
        environment: ["APRSC_SRC": "/tmp/aprsc.tar.gz"], packageRoot: Self.root, exists: { _ in true })
        == .source("/tmp/aprsc.tar.gz"))
    // Empty values count as unset (`make test APRSC=`).
    var asked: [String] = []
    let shared = RealAPRSC.origin(
      environment: ["APRSC": "", "APRSC_SRC": ""], packageRoot: Self.root,
      exists: {
        asked.append($0)
        return true
      })
    #expect(shared == .source("/src/shared/aprsc"))
    #expect(asked == ["/src/shared/aprsc"])
    #expect(RealAPRSC.origin(environment: [:], packageRoot: Self.root, exists: { _ in false }) == nil)
  }

  @Test func theSkipNoteIsOneLineThatNamesBothVariables() {
    let note = RealAPRSC.skipNote.rawValue
    #expect(!note.contains("\n"))
    #expect(note.contains("APRSC=") && note.contains("APRSC_SRC="))
  }

  /// What `make test` would run (`make -n`), with the given variables on its command line.
  static func makeTestPlan(_ variables: [String]) throws -> String {
    let plan = try runProcess(
      "/usr/bin/make", ["-n", "-C", TestPaths.packageRoot, "test"] + variables, timeout: 120)
    try #require(plan.status == 0, "\(plan.stderrText)")
    return plan.stdoutText
  }

  @Test func makeTestWithoutAnAprscLeavesOutItsSuitesAndSaysSoInOneLine() throws {
    let plan = try Self.makeTestPlan(["APRSC=", "APRSC_SRC="])
    let lines = plan.components(separatedBy: "\n")
    #expect(lines.contains { $0.hasPrefix("echo \"aprsc tests skipped: set APRSC=PATH") })
    #expect(plan.contains("--filter IntegrationTests --skip 'RealAPRSC|ThroughAPRSC'"))
    #expect(!plan.contains(".ci/build-aprsc"))
    // The pattern names every suite that needs the real aprsc, and only those.
    let suites = try FileManager.default.contentsOfDirectory(
      atPath: TestPaths.packageRoot + "/Tests/IntegrationTests")
    for file in suites where file.hasSuffix(".swift") {
      let text = try String(
        contentsOfFile: TestPaths.packageRoot + "/Tests/IntegrationTests/" + file, encoding: .utf8)
      let needsAPRSC = text.components(separatedBy: "\n").contains {
        $0.hasPrefix("@Suite") && $0.contains("RealAPRSC.isAvailable")
      }
      let skipped = file.hasPrefix("RealAPRSC") || file.contains("ThroughAPRSC")
      #expect(needsAPRSC == (skipped && file != "RealAPRSC.swift"), "\(file)")
    }
  }

  @Test func makeTestBuildsTheGivenSourceOrUsesTheGivenBinary() throws {
    let fromSource = try Self.makeTestPlan(["APRSC=", "APRSC_SRC=/tmp/aprsc.tar.gz"])
    #expect(fromSource.contains(".ci/build-aprsc \"/tmp/aprsc.tar.gz\" .build/aprsc"))
    #expect(fromSource.contains("APRSC=\"\(TestPaths.packageRoot)/.build/aprsc/aprsc\""))
    #expect(!fromSource.contains("--skip 'RealAPRSC|ThroughAPRSC'"))
    let fromBinary = try Self.makeTestPlan(["APRSC=/opt/aprsc/sbin/aprsc"])
    #expect(!fromBinary.contains(".ci/build-aprsc"))
    #expect(fromBinary.contains("APRSC=\"/opt/aprsc/sbin/aprsc\""))
    #expect(!fromBinary.contains("aprsc tests skipped"))
  }

  /// A stand-in aprsc source: `configure` writes a Makefile whose `aprsc` target copies `aprsc.c`, a shell
  /// script that prints `label`.
  static func writeSource(in folder: String, label: String) throws {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let configure = """
      #!/bin/sh
      printf 'aprsc: aprsc.c\\n\\tcp aprsc.c aprsc\\n\\tchmod +x aprsc\\n' > Makefile

      """
    try configure.write(toFile: folder + "/configure", atomically: true, encoding: .utf8)
    try "#!/bin/sh\necho \(label)\n".write(toFile: folder + "/aprsc.c", atomically: true, encoding: .utf8)
    chmod(folder + "/configure", 0o755)
  }

  static let script = TestPaths.packageRoot + "/.ci/build-aprsc"

  /// Builds `source` into `out`; the binary's path and what it prints.
  static func build(_ source: String, _ out: String) throws -> (path: String, says: String) {
    let built = try runProcess(script, [source, out], timeout: 60)
    try #require(built.status == 0, "\(built.stderrText)")
    let path = built.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    let ran = try runProcess(path, [], timeout: 10)
    return (path, ran.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines))
  }

  @Test func theBuildScriptTakesACheckoutATarballAndAFolderWithATarball() throws {
    let directory = try makeTemporaryDirectory("aprsc-origin")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let out = directory + "/out"

    // A checkout of the repository: configure lives in src/.
    try Self.writeSource(in: directory + "/checkout/src", label: "from the checkout")
    let fromCheckout = try Self.build(directory + "/checkout", out)
    #expect(fromCheckout.path == out + "/aprsc")
    #expect(fromCheckout.says == "from the checkout")
    // Built again from the same, unchanged source: the binary is kept.
    let before = try FileManager.default.attributesOfItem(atPath: out + "/aprsc")[.modificationDate] as? Date
    usleep(20_000)
    _ = try Self.build(directory + "/checkout", out)
    let after = try FileManager.default.attributesOfItem(atPath: out + "/aprsc")[.modificationDate] as? Date
    #expect(before != nil && before == after, "an up-to-date binary is not rebuilt")

    // A release tarball: configure at the top of a folder of its own.
    try Self.writeSource(in: directory + "/release/aprsc-2.1.21", label: "from the release")
    let tar = try runProcess(
      "/bin/tar", ["-czf", directory + "/aprsc-2.1.21.tar.gz", "-C", directory + "/release", "aprsc-2.1.21"])
    try #require(tar.status == 0, "\(tar.stderrText)")
    #expect(try Self.build(directory + "/aprsc-2.1.21.tar.gz", out).says == "from the release")

    // A folder that holds one tarball whose tree is aprsc/src (the shape of ../shared/aprsc).
    try Self.writeSource(in: directory + "/wrapped/aprsc/src", label: "from the folder")
    try FileManager.default.createDirectory(atPath: directory + "/holder", withIntermediateDirectories: true)
    let wrapped = try runProcess(
      "/bin/tar", ["-czf", directory + "/holder/aprsc-src.tar.gz", "-C", directory + "/wrapped", "aprsc"])
    try #require(wrapped.status == 0, "\(wrapped.stderrText)")
    #expect(try Self.build(directory + "/holder", out).says == "from the folder")
  }

  @Test func aFolderWithoutASourceIsRefusedWithAReason() throws {
    let directory = try makeTemporaryDirectory("aprsc-origin")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let empty = try runProcess(Self.script, [directory, directory + "/out"], timeout: 30)
    #expect(empty.status == 1)
    #expect(empty.stderrText.contains("neither an aprsc checkout nor a folder with one aprsc tarball"))
    let missing = try runProcess(Self.script, [directory + "/nothing", directory + "/out"], timeout: 30)
    #expect(missing.status == 1)
    #expect(missing.stderrText.contains("does not exist"))
  }
}
