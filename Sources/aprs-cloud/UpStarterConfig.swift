import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// The configuration `aprs-cloud up` runs with when it is given none (no `--config`, no `APRS_CLOUD_CONFIG`):
/// `DIR/aprs-cloud.ini` in the data directory, written on the first run as a commented starter and never
/// overwritten, so `make run` works on a fresh machine and the operator has one file to edit.
///
/// Web Push is on by default and needs a contact (`[messaging.webpush] subject`, issue 13); the starter's
/// is `mailto:USER@HOST` of this machine, good enough for a browser on localhost (Chrome's and Firefox's push
/// services take any `mailto:`), with a comment saying to replace it: Apple's push service refuses local
/// names (403 `BadJwtToken`). Every other section is there commented out, as an example.
enum UpStarterConfig {
  /// The file's name in the data directory.
  static let fileName = "aprs-cloud.ini"

  /// The Web Push contact for `user` on `host`: `mailto:user@host` with only the characters a mail address
  /// and `PushConfig`'s check allow (`aprs-cloud` and `localhost` when nothing is left). Pure.
  static func contact(user: String?, host: String?) -> String {
    func keep(_ text: String?, _ allowed: (UInt8) -> Bool) -> String {
      String(decoding: (text ?? "").utf8.filter(allowed), as: UTF8.self)
    }
    let alphanumeric = { (byte: UInt8) -> Bool in
      (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
    var name = keep(user) {
      alphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
    }
    name = String(name.prefix(64)).trimmingDots
    var machine = keep(host) { alphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
    machine = String(machine.prefix(128)).trimmingDots
    return "mailto:" + (name.isEmpty ? "aprs-cloud" : name) + "@" + (machine.isEmpty ? "localhost" : machine)
  }

  /// The starter file's text with `contact` as the Web Push subject. Pure.
  static func text(contact: String) -> String {
    """
    ; aprs-cloud configuration, written by `aprs-cloud up` on its first run with this data directory.
    ; `aprs-cloud up` reads it from here whenever it is started without --config, and passes it to the
    ; responder and the listener; edit it and restart `up`. It is never overwritten. Every key is described
    ; in docs/configuration.md. The database is aprs-cloud.sqlite beside this file (`up` passes --db).

    [messaging.webpush]
    ; Web Push and UnifiedPush: notifications for browsers and for phones without Google, no account needed.
    ; The push services want a contact for this server (the VAPID "sub"). This one was made from your user
    ; and host name so that a browser on localhost works at once; change it to an address the push services
    ; can reach you at: a real mailto: address or an https:// page of yours. Apple's push service (Safari,
    ; iPhones) refuses every push whose contact is a local name: localhost, a .local, .localdomain or .invalid
    ; name, or a name without a dot such as mailto:root@myhost (403 BadJwtToken). The listener warns about
    ; such a contact when it starts, and /health shows "degraded" naming it while a push service refuses
    ; every push. Or set enabled = false to turn Web Push and UnifiedPush off.
    subject = \(contact)
    ;enabled = true

    ;[aprsis]
    ; Without login and passcode the listener is receive-only: it stores and pushes messages but cannot ACK
    ; or send them. `aprs-cloud passcode CALL` prints a call's passcode.
    ;servers = rotate.aprs2.net:14580
    ;login = N0CALL-10
    ;passcode = 13023

    ;[messaging.android]
    ;serviceAccountFile = /path/to/firebase-service-account.json

    ;[messaging.ios]
    ;enabled = true
    ;[messaging.ios.apns]
    ;keyFile = /path/to/AuthKey_ABC123DEFG.p8
    ;keyId = ABC123DEFG
    ;teamId = DEF123GHIJ
    ;bundleId = org.example.htcommander

    ;[replication]
    ;url = file:///mnt/backup/aprs-cloud

    ;[server]
    ;logLevel = info

    """
  }

  /// Writes the starter to `path` unless a file is there already; the contact it wrote, nil when it wrote none.
  /// Mode 0600 whatever the folder (`FileModes`' private mode; both processes run as `up`'s user, and the file
  /// may come to hold a secret such as `[replication] secretAccessKey`, like `litestream.yml`). Written beside
  /// `path` first and linked into place, so a file is whole or absent, and one that appeared meanwhile is kept.
  static func writeIfMissing(_ path: String) throws(UpError) -> String? {
    if access(path, F_OK) == 0 { return nil }
    let subject = contact(user: userName(), host: hostName())
    do throws(OwnerOnlyFile.WriteError) {
      guard try OwnerOnlyFile.write(Array(text(contact: subject).utf8), to: path, placement: .keepExisting)
      else { return nil }
    } catch {
      throw UpError("cannot write \(path): \(error.reason)")
    }
    return subject
  }

  /// This process's user name (the password database, else `$USER`), nil when neither knows it.
  static func userName() -> String? {
    if let entry = getpwuid(getuid()), let name = entry.pointee.pw_name {
      return String(cString: name)
    }
    return getenv("USER").map { String(cString: $0) }
  }

  /// This machine's host name, nil when it has none.
  static func hostName() -> String? {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
    let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return name.isEmpty ? nil : name
  }
}

extension String {
  /// Without leading and trailing dots (a mail address's parts may not start or end with one).
  fileprivate var trimmingDots: String {
    var text = Substring(self)
    while text.first == "." { text = text.dropFirst() }
    while text.last == "." { text = text.dropLast() }
    return String(text)
  }
}
