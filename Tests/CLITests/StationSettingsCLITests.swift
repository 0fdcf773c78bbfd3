import APRS
import Foundation
import Store
import Testing

/// `aprs-cloud stations STATION`: one station with its settings, read-only.
@Suite struct StationSettingsCLITests {
  @Test func oneStationShowsItsSettings() throws {
    let fixture = try OpsDatabase()
    try fixture.fill()
    try fixture.database.updateStationSettings(
      "N0CALL-7",
      StationSettingsUpdate(
        blocked: try CallList(validating: ["KJ7ABC", "OH7AA-1"], field: "blocked"),
        mutedUntil: fixture.now + 2 * 3_600_000 + 60_000,
        quietHours: .some(try QuietHours(start: 22 * 60, end: 7 * 60 + 30, utcOffsetMinutes: -330)),
        quietBypass: try CallList(validating: ["W1AW"], field: "quietBypass"), ackPolicy: .device),
      now: fixture.now)
    let result = try runCLI(["stations", "n0call-7", "--db", fixture.path])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first == "station       N0CALL-7")
    #expect(lines.contains("platform      android"))
    #expect(lines.contains("state         live"))
    #expect(lines.contains("devices       1") && lines.contains("messages      2"))
    #expect(lines.contains("ack policy    device"))
    #expect(lines.contains("blocked       KJ7ABC OH7AA-1"))
    #expect(lines.contains { $0.hasPrefix("muted until   ") && $0.hasSuffix("(in 2h)") }, "\(lines)")
    #expect(lines.contains("quiet hours   22:00-07:30 local (UTC-05:30)"))
    #expect(lines.contains("quiet bypass  W1AW"))

    #expect(lines.contains("track sent    no"))
    try fixture.database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(ackPolicy: .fallback, trackSent: true), now: fixture.now)
    let fallback = try runCLI(["stations", "n0call-7", "--db", fixture.path]).stdout
    #expect(
      fallback.contains(
        "ack policy    fallback (waits 20s for the station's radio; answered by it: quiet push)\n"),
      "\(fallback)")
    #expect(fallback.contains("track sent    yes (the station's radio's messages are stored)\n"))

    let plain = try runCLI(["stations", "KJ7ABC", "--db", fixture.path])
    #expect(plain.status == 0, "\(plain.stderr)")
    #expect(plain.stdout.contains("ack policy    never\n"))
    #expect(
      plain.stdout.contains("blocked       none\n") && plain.stdout.contains("muted until   not muted\n"))
    #expect(
      plain.stdout.hasSuffix(
        "quiet hours   none\nquiet bypass  none\nkeyless       devices allowed\nssids         exact\nack ssids     none\n"
          + "retention     ring\n"
      ))
    #expect(plain.stdout.contains("claim         unclaimed\n"))

    let unknown = try runCLI(["stations", "NOBODY", "--db", fixture.path])
    #expect(unknown.status != 0 && unknown.stderr.contains("NOBODY is not registered"))
    let both = try runCLI(["stations", "KJ7ABC", "--all", "--db", fixture.path])
    #expect(both.status == 2)
  }
}

/// `aprs-cloud stations STATION` with a claim: who holds it, the audit trail, and `--release-claim`.
@Suite struct StationClaimCLITests {
  @Test func aClaimedStationShowsItsClaimAndTrailAndTheOperatorReleasesIt() throws {
    let fixture = try OpsDatabase()
    try fixture.fill()
    let hash = String(repeating: "ab", count: 32)
    #expect(
      try fixture.database.claimStation("N0CALL-7", keyHash: hash, client: "2001:db8::/64", now: fixture.now)
        == .claimed(at: fixture.now, proof: .proven))
    try fixture.database.updateStationSettings(
      "N0CALL-7", StationSettingsUpdate(mutedUntil: fixture.now + 60_000), client: "203.0.113.7",
      now: fixture.now + 1)
    let shown = try runCLI(["stations", "N0CALL-7", "--db", fixture.path])
    #expect(shown.status == 0, "\(shown.stderr)")
    #expect(shown.stdout.contains("claim         proven, claimed "), "\(shown.stdout)")
    #expect(shown.stdout.contains("devices       1 (0 with the key)"), "\(shown.stdout)")
    #expect(shown.stdout.contains("audit trail (newest first):"))
    let trail = shown.stdout.split(separator: "\n").drop { !$0.hasPrefix("WHEN") }.map(String.init)
    #expect(trail.count == 3, "\(shown.stdout)")
    #expect(
      trail[1].contains("settings") && trail[1].contains("203.0.113.7") && trail[1].hasSuffix("mutedUntil"))
    #expect(trail[2].contains("claimed") && trail[2].contains("2001:db8::/64"))

    let released = try runCLI(["stations", "n0call-7", "--release-claim", "--db", fixture.path])
    #expect(released.status == 0 && released.stdout.contains("claim released"), "\(released.stderr)")
    #expect(try fixture.database.stationClaim("N0CALL-7") == .unclaimed)
    #expect(try fixture.database.auditTrail(of: "N0CALL-7").first?.client == AuditEntry.operatorClient)
    let again = try runCLI(["stations", "N0CALL-7", "--release-claim", "--db", fixture.path])
    #expect(again.status == 1 && again.stderr.contains("N0CALL-7 is not claimed"), "\(again.stderr)")
    let nobody = try runCLI(["stations", "NOBODY", "--release-claim", "--db", fixture.path])
    #expect(nobody.status == 1 && nobody.stderr.contains("NOBODY is not registered"), "\(nobody.stderr)")

    // A provisional claim, approved by the operator: proven, and nobody can take it back (seniority 0).
    _ = try fixture.database.claimStation(
      "N0CALL-7", keyHash: hash, proof: .provisional, client: "203.0.113.9", now: fixture.now + 2)
    let provisional = try runCLI(["stations", "N0CALL-7", "--db", fixture.path])
    #expect(provisional.stdout.contains("claim         provisional, claimed "), "\(provisional.stdout)")
    let approved = try runCLI(["stations", "N0CALL-7", "--approve-claim", "--db", fixture.path])
    #expect(approved.status == 0 && approved.stdout.contains("claim approved"), "\(approved.stderr)")
    let claim = try #require(try fixture.database.stationClaim("N0CALL-7").claim)
    #expect(claim.proof == .proven && claim.seniority == 0)
    #expect(try fixture.database.claimRequests(of: "N0CALL-7").isEmpty)
    #expect(try fixture.database.auditTrail(of: "N0CALL-7").first?.action == .proven)
    let unclaimed = try runCLI(["stations", "NOBODY", "--approve-claim", "--db", fixture.path])
    #expect(unclaimed.status == 1 && unclaimed.stderr.contains("NOBODY is not registered"))
  }
}

/// `aprs-cloud stations --top`: the busiest stations and addresses of the last hour, from rows kept anyway.
@Suite struct StationsTopCLITests {
  @Test func theBusiestStationsAndAddressesOfTheHour() throws {
    let fixture = try OpsDatabase()
    try fixture.fill()
    for _ in 0..<3 {
      _ = try fixture.database.consumeRate(
        key: "registrations:KJ7ABC", limit: 100, windowMs: 3_600_000, now: fixture.now - 1_000)
    }
    _ = try fixture.database.consumeRate(
      key: "registrations:N0CALL-7", limit: 100, windowMs: 3_600_000, now: fixture.now - 1_000)
    for _ in 0..<2 {
      _ = try fixture.database.consumeRate(
        key: "new stations from:2001:db8:1:2::/64", limit: 100, windowMs: 3_600_000, now: fixture.now - 1_000)
    }
    let result = try runCLI(["stations", "--top", "--db", fixture.path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout.contains(
        "stations by registrations this hour:\n  KJ7ABC    3\n  N0CALL-7  1\n"), "\(result.stdout)")
    #expect(result.stdout.contains("addresses by new stations this hour:\n  2001:db8:1:2::/64  2\n"))
    #expect(result.stdout.contains("stations by push tokens registered in the last hour:\n  N0CALL-7  1\n"))
    #expect(result.stdout.contains("addresses by claims this hour:\n  none\n"))
  }
}

/// `aprs-cloud stations STATION` lists the station's subscriptions.
@Suite struct StationSubscriptionsCLITests {
  @Test func theSubscriptionsAreListedUnderTheSettings() throws {
    let fixture = try OpsDatabase()
    try fixture.fill()
    let stored = try #require(
      try fixture.database.replaceSubscriptions(
        of: "N0CALL-7",
        with: [
          SubscriptionDraft(rule: .nws(zones: ["OHC081", "PAC125"])),
          SubscriptionDraft(
            rule: .watch(WatchRule(call: "K1ABC", silentFor: 7200, emergency: true)), bypass: true),
        ], now: fixture.now))
    let result = try runCLI(["stations", "N0CALL-7", "--db", fixture.path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("subscriptions  2"), "\(result.stdout)")
    #expect(result.stdout.contains("  \(stored[0].id)"), "\(result.stdout)")
    #expect(result.stdout.contains("nws    OHC081 PAC125\n"), "\(result.stdout)")
    #expect(
      result.stdout.contains(
        "watch  K1ABC, silent for 7200 s, emergencies (bypasses mute and quiet hours)\n"),
      "\(result.stdout)")
  }
}

/// `aprs-cloud stations STATION` lists the station's forward targets with their secrets masked.
@Suite struct StationForwardCLITests {
  @Test func theTargetsAreListedWithSecretsMasked() throws {
    let fixture = try OpsDatabase()
    try fixture.fill()
    let secret = "webhook-secret-value-WXYZ"
    let stored = try #require(
      try fixture.database.replaceForwardTargets(
        of: "N0CALL-7",
        with: [
          ForwardDraft(
            kind: .webhook, address: "https://hooks.example.org/aprs", secret: secret, always: true),
          ForwardDraft(kind: .email, address: "me@example.org"),
          ForwardDraft(kind: .ntfy, address: "https://ntfy.example.org/topic", secret: "tk_token_abcd"),
        ], now: fixture.now))
    try fixture.database.disableForwardTargets(
      [ForwardDisable(station: "N0CALL-7", id: stored[2].id, reason: "410 the endpoint is gone")],
      now: fixture.now)
    try fixture.database.recordForwardHealth(
      [
        ForwardHealth(
          station: "N0CALL-7", id: stored[0].id,
          failure: ("308 redirect to https://new.example/aprs, not followed", .redirect))
      ], now: fixture.now)
    let result = try runCLI(["stations", "N0CALL-7", "--db", fixture.path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout.range(of: #"\nforward +3\n"#, options: .regularExpression) != nil, "\(result.stdout)")
    #expect(!result.stdout.contains(secret) && !result.stdout.contains("tk_token_abcd"), "\(result.stdout)")
    #expect(
      result.stdout.contains(
        "https://hooks.example.org/aprs secret …WXYZ (always, through mute and quiet hours)"),
      "\(result.stdout)")
    #expect(result.stdout.contains("me@example.org"), "\(result.stdout)")
    #expect(result.stdout.contains("unconfirmed"), "\(result.stdout)")
    #expect(result.stdout.contains("token …abcd"), "\(result.stdout)")
    #expect(result.stdout.contains("disabled: 410 the endpoint is gone"), "\(result.stdout)")
    #expect(
      result.stdout.contains("failing: 308 redirect to https://new.example/aprs, not followed"),
      "\(result.stdout)")
  }

  @Test func statusCountsTheForwards() throws {
    let fixture = try OpsDatabase()
    try fixture.fill()
    var counters = PushCounters()
    counters[forward: .webhook, .delivered] = 2
    counters[forward: .webhook, .privateAddress] = 1
    counters[forward: .email, .confirmation] = 1
    try fixture.database.publishPushCounters(counters)
    let result = try runCLI(["status", "--db", fixture.path])
    #expect(
      result.stdout.contains("forwards   email 1 confirmation; webhook 2 delivered, 1 private address\n"),
      "\(result.stdout)")
  }
}
