import Config
import Foundation
import TestSupport
import Testing

@testable import aprs_cloud

#if canImport(Glibc)
  import Glibc
#endif

/// The configuration `aprs-cloud up` writes into its data directory when given none (`make run`).
@Suite struct UpStarterConfigTests {
  @Test func theContactIsMadeFromTheUserAndTheHost() {
    #expect(
      UpStarterConfig.contact(user: "alice", host: "shack.example.org") == "mailto:alice@shack.example.org")
    #expect(UpStarterConfig.contact(user: "bob", host: "debian") == "mailto:bob@debian")
    // Nothing a mail address or PushConfig's check would refuse; something left on either side.
    #expect(UpStarterConfig.contact(user: "a b\"c\\d", host: "my host!") == "mailto:abcd@myhost")
    #expect(UpStarterConfig.contact(user: nil, host: nil) == "mailto:aprs-cloud@localhost")
    #expect(UpStarterConfig.contact(user: "", host: "...") == "mailto:aprs-cloud@localhost")
    #expect(UpStarterConfig.contact(user: ".x.", host: ".h.") == "mailto:x@h")
  }

  @Test func theStarterParsesWithWebPushOnAndEverythingElseDefault() throws {
    for contact in [
      UpStarterConfig.contact(user: "alice", host: "shack"), UpStarterConfig.contact(user: nil, host: nil),
      UpStarterConfig.contact(user: UpStarterConfig.userName(), host: UpStarterConfig.hostName()),
    ] {
      let text = UpStarterConfig.text(contact: contact)
      let file = try ConfigFile(parsing: text, name: "aprs-cloud.ini")
      let push = try PushConfig(file)
      #expect(push.webPush?.subject == contact, "\(contact)")
      #expect(push.android == nil && push.ios == nil)
      let listener = try ListenerConfig(file)
      #expect(listener == ListenerConfig(), "receive-only on the default servers")
      #expect(try ReplicationConfig(file) == ReplicationConfig())
      #expect(file.warnings(for: .all).isEmpty, "\(file.warnings(for: .all))")
    }
    let text = UpStarterConfig.text(contact: "mailto:alice@shack")
    // The operator is told to change the contact, and how to turn Web Push off.
    #expect(text.contains("change it to an address the push services"))
    #expect(text.contains("enabled = false"))
    // And that a contact on a local name is refused by Apple's push service, which start-up and /health tell.
    #expect(text.contains("a name without a dot such as mailto:root@myhost (403 BadJwtToken)"))
    #expect(text.contains("The listener warns about\n; such a contact when it starts"))
    // The other sections are there as commented-out examples.
    for example in [
      ";[aprsis]", ";login = N0CALL-10", ";passcode = 13023", ";[messaging.android]", ";[messaging.ios.apns]",
      ";[replication]",
    ] {
      #expect(text.contains(example + "\n"), "\(example)")
    }
  }

  @Test func itIsWrittenOncePrivateAndNeverOverwritten() throws {
    let directory = try makeTemporaryDirectory("starter")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/aprs-cloud.ini"
    // 0600 whatever the umask (the process's, shared by parallel tests, is left alone here; UpCommandTests
    // runs `up` under umask 022).
    let contact = try #require(try UpStarterConfig.writeIfMissing(path))
    var info = stat()
    #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    let written = try String(contentsOfFile: path, encoding: .utf8)
    #expect(written == UpStarterConfig.text(contact: contact))
    // The operator's edit stays; no second write, no temporary file left behind.
    try (written + "; mine\n").write(toFile: path, atomically: false, encoding: .utf8)
    #expect(try UpStarterConfig.writeIfMissing(path) == nil)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == written + "; mine\n")
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["aprs-cloud.ini"])
  }
}
