import TestSupport
import Testing

@testable import Store

/// The confirmation mails' budgets (docs/api.md "Forwarding"): one person cannot take many of them with variants of one
/// mailbox (dots where the provider ignores them, `+tags`) or with the addresses of a catch-all domain.
@Suite struct ConfirmationBudgetTests {
  /// A database with `stations` registered stations (`N0CALL-1` …), each able to mail.
  private static func database(stations: Int) throws -> (Database, TempDirectory) {
    let directory = try TempDirectory()
    let database = try openStore(directory.database)
    for number in 1...stations { try register(database, "N0CALL-\(number)") }
    return (database, directory)
  }

  /// Puts one new email target to `address` on `station` in place of its last and takes its confirmation mail: the
  /// code, or nil when a budget refused it.
  private static func mail(_ database: Database, _ station: String, to address: String, now: Int64) throws
    -> String?
  {
    let targets = try #require(
      try database.replaceForwardTargets(
        of: station, with: [ForwardDraft(kind: .email, address: address)], now: now))
    let id = try #require(targets.first?.id)
    #expect(targets.first?.address == address, "the address is stored as the owner typed it")
    return try database.beginForwardConfirmation(station: station, id: id, newCode: "123456", now: now)
  }

  @Test func dotVariantsOfAGmailAddressShareTheMailboxsThree() throws {
    let (database, directory) = try Self.database(stations: 2)
    defer { directory.remove() }
    let now: Int64 = 1_000_000
    #expect(try Self.mail(database, "N0CALL-1", to: "jdoe@gmail.com", now: now) != nil)
    #expect(try Self.mail(database, "N0CALL-1", to: "j.doe@gmail.com", now: now + 1) != nil)
    #expect(try Self.mail(database, "N0CALL-2", to: "J.D.O.E+x@GoogleMail.com", now: now + 2) != nil)
    #expect(
      try Self.mail(database, "N0CALL-2", to: "jd.oe@gmail.com", now: now + 3) == nil,
      "the fourth to one Gmail mailbox in a day")
    // Elsewhere a dot is part of the name: two mailboxes.
    for address in ["j.doe@example.org", "jdoe@example.org", "j.doe@example.org", "jdoe@example.org"] {
      #expect(try Self.mail(database, "N0CALL-1", to: address, now: now + 4) != nil, "\(address)")
    }
    #expect(Database.mailbox("J.Doe+news@Gmail.com") == "jdoe@gmail.com")
    #expect(Database.mailbox("J.Doe+news@googlemail.com") == "jdoe@gmail.com")
    #expect(Database.mailbox("J.Doe+news@Example.org") == "j.doe@example.org")
  }

  @Test func aCatchAllDomainGetsTwentyADayWhatever() throws {
    let (database, directory) = try Self.database(stations: 3)
    defer { directory.remove() }
    let now: Int64 = 1_000_000
    var sent = 0
    // Three stations of ten each could mail 30 of the domain's addresses; the domain takes 20.
    for number in 1...30 {
      let station = "N0CALL-\((number - 1) / 10 + 1)"
      if try Self.mail(database, station, to: "a\(number)@catchall.example", now: now + Int64(number)) != nil
      {
        sent += 1
      }
    }
    #expect(sent == ForwardTarget.confirmationsPerDomainPerDay)
    #expect(ForwardTarget.confirmationsPerDomainPerDay == 20)
    // The budget is the domain's, in any case.
    let (fresh, freshDirectory) = try Self.database(stations: 3)
    defer { freshDirectory.remove() }
    for number in 1...20 {
      let station = "N0CALL-\((number - 1) / 10 + 1)"
      #expect(try Self.mail(fresh, station, to: "b\(number)@CatchAll.example", now: now) != nil)
    }
    #expect(try Self.mail(fresh, "N0CALL-3", to: "c1@catchall.EXAMPLE", now: now) == nil)
    let waiting = try #require(try fresh.forwardTargets(of: "N0CALL-3").first)
    guard
      case .limited(let retryAt, let budget) = try fresh.resendForwardConfirmation(
        station: "N0CALL-3", id: waiting.id, now: now + 10)
    else {
      Issue.record("a resend to the domain was queued")
      return
    }
    #expect(budget == .domain && retryAt > now + 10, "\(budget) \(retryAt)")
    #expect(budget.description == "confirmation mails to this address's domain (at most 20 in 24 hours)")
    // A refused mail uses up none of the other budgets: another domain still gets the station's mails.
    #expect(try Self.mail(fresh, "N0CALL-3", to: "me@other.example", now: now + 5) != nil)
    // A day later the domain may get mails again.
    #expect(
      try Self.mail(
        fresh, "N0CALL-3", to: "c2@catchall.example", now: now + ForwardTarget.confirmationWindowMs)
        != nil)
  }

  @Test func theBigPublicProvidersHaveNoDomainCap() throws {
    let (database, directory) = try Self.database(stations: 3)
    defer { directory.remove() }
    let now: Int64 = 1_000_000
    for number in 1...30 {
      let station = "N0CALL-\((number - 1) / 10 + 1)"
      #expect(
        try Self.mail(database, station, to: "user\(number)@gmail.com", now: now + Int64(number)) != nil,
        "user\(number)")
    }
    for domain in ["gmail.com", "Outlook.com", "hotmail.com", "yahoo.com", "icloud.com", "gmx.de", "web.de"] {
      #expect(Database.confirmationDomain("x@" + domain) == nil, "\(domain) has no catch-all")
    }
    #expect(Database.confirmationDomain("x@catchall.example") == "catchall.example")
    #expect(
      Database.confirmationDomain("x@gmx.attacker.example") == "gmx.attacker.example",
      "only the providers' own domains are exempt")
  }
}
