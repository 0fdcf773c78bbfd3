/// How the confirmation mails of email forward targets are counted (docs/api.md "Forwarding"): the mailbox an address
/// reaches, whatever variant of it a station names, and the domain whose catch-all might take the mails of many
/// addresses. The stored address stays as the owner typed it; these are only the keys of the counts.
enum MailboxKey {
  /// The domains whose mail service ignores dots in the local part, each with the domain its mailboxes are counted
  /// under. Google documents it for Gmail ("Dots don't matter in Gmail addresses",
  /// https://support.google.com/mail/answer/7436150: `john.smith@gmail.com` and `johnsmith@gmail.com` are one
  /// mailbox; not so for a work or school address on Google, whose own domain is not listed here), and
  /// googlemail.com is the same service under the name Google Mail had in Germany and the UK, each address
  /// reaching the same mailbox as its gmail.com twin.
  static let dotlessDomains: [String: String] = ["gmail.com": "gmail.com", "googlemail.com": "gmail.com"]

  /// The big public mail providers, where one person cannot own every address of the domain (no catch-all): their
  /// domains are exempt from ``ForwardTarget/confirmationsPerDomainPerDay``. Exact domains only, never a pattern:
  /// `gmx.*` would let anyone exempt a domain of their own named `gmx.something`.
  static let publicProviders: Set<String> = [
    "gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "yahoo.com", "icloud.com",
    "me.com",
    "aol.com", "gmx.de", "gmx.net", "gmx.at", "gmx.com", "web.de", "proton.me", "protonmail.com",
  ]

  /// The mailbox `address` reaches, for counting: lower case, without a `+tag` in the local part, and for the
  /// ``dotlessDomains`` without its dots and under the service's one domain (`Victim+7@Example.org` →
  /// `victim@example.org`, `J.Doe+x@GoogleMail.com` → `jdoe@gmail.com`).
  static func mailbox(_ address: String) -> String {
    let lower = address.lowercased()
    guard let at = lower.lastIndex(of: "@") else { return lower }
    var local = lower[..<at]
    if let plus = local.firstIndex(of: "+") { local = local[..<plus] }
    let domain = String(lower[lower.index(after: at)...])
    guard let service = dotlessDomains[domain] else { return local + "@" + domain }
    return local.filter { $0 != "." } + "@" + service
  }

  /// The domain whose budget `address` counts against (lower case), nil for a ``publicProviders`` domain or an
  /// address without one.
  static func domain(_ address: String) -> String? {
    let lower = address.lowercased()
    guard let at = lower.lastIndex(of: "@") else { return nil }
    let domain = String(lower[lower.index(after: at)...])
    return domain.isEmpty || publicProviders.contains(domain) ? nil : domain
  }
}
