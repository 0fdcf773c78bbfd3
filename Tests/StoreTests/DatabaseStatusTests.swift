// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import Testing

@testable import Store

/// The status records (`Database+Status.swift`, `StatusTypes.swift`): what each writer stores, that every reader
/// gets it back, and what a reader makes of rows a listener or push sender of another version left (missing,
/// garbled or unknown keys).
///
/// Stored rows are written and compared as text tables, one `key = value` row per line, sorted by key: the
/// format other versions, the integration tests and operators' scripts read.
@Suite struct DatabaseStatusTests {
  private func rows(_ database: Database, _ prefix: String) throws -> String {
    // An empty value is `key =` (no trailing space, which a text table would not keep).
    try database.metaValues(prefix: prefix).sorted { $0.key < $1.key }
      .map { $0.value.isEmpty ? "\($0.key) =" : "\($0.key) = \($0.value)" }
      .joined(separator: "\n")
  }

  /// Writes each `key = value` line of `table` as a meta row, as another writer would have.
  private func write(_ database: Database, _ table: String) throws {
    try database.setMetaValues(
      table.split(separator: "\n").map { line in
        let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        return (
          key: String(parts[0]).trimmingSpaces, value: parts.count > 1 ? String(parts[1]).trimmingSpaces : ""
        )
      })
  }

  // MARK: The listener

  @Test func theListenerStatusRoundTripsInOneTransactionAndIsStoredAsItAlwaysWas() throws {
    try withDatabase { database in
      var counts = ListenerCounts()
      for (index, counter) in ListenerCounter.allCases.enumerated() { counts[counter] = index * 10 + 1 }
      let status = ListenerStatus(
        state: "online", connected: true, verified: true, receiveOnly: false,
        server: "rotate.aprs2.net:14580",
        login: "N0CALL-10", filterSize: 60, filterBytes: 498, filterEntries: 41, filterExactStations: 20,
        lastLineAt: 1_800_000_000_123,
        lineRate: 12.5, updatedAt: 1_800_000_000_456, startedAt: 1_799_999_000_000, counts: counts,
        ownFollowed: ["N0CALL-7", "OH7AA"], ownFellBack: ["KJ7ABC"])
      let before = database.transactionCounts
      try database.publishListenerStatus(status)
      #expect(database.transactionCounts.writes == before.writes + 1)
      #expect(try database.listenerStatus() == status)
      #expect(
        try rows(database, ListenerStatus.keyPrefix) == """
          listener.acksDropped = 61
          listener.acksSent = 41
          listener.acksSuppressed = 51
          listener.airAnswered = 191
          listener.banned = 141
          listener.blocked = 131
          listener.bulletinEntries = 151
          listener.connected = 1
          listener.drops = 71
          listener.duplicates = 21
          listener.fallbackAcks = 201
          listener.filterBytes = 498
          listener.filterEntries = 41
          listener.filterExactStations = 20
          listener.filterSize = 60
          listener.groupEntries = 161
          listener.history =
          listener.invalidLines = 81
          listener.lastError =
          listener.lastLineAt = 1800000000123
          listener.lineRate = 12.50
          listener.linesRead = 1
          listener.login = N0CALL-10
          listener.messagesStored = 11
          listener.netEntries = 211
          listener.notForUs = 111
          listener.nwsEntries = 171
          listener.ownFellBack = KJ7ABC
          listener.ownFollowed = N0CALL-7 OH7AA
          listener.receipts = 31
          listener.receiveOnly = 0
          listener.reconnects = 121
          listener.sendBudgetFull = 0
          listener.server = rotate.aprs2.net:14580
          listener.skipped = 101
          listener.startedAt = 1799999000000
          listener.state = online
          listener.tooLong = 91
          listener.updatedAt = 1800000000456
          listener.verified = 1
          listener.watchEntries = 181
          """)

      // Absent values are stored empty and read back absent; a later publish replaces every field.
      let idle = ListenerStatus(
        state: "backingOff", receiveOnly: true, lineRate: 0,
        lastError: "cannot connect to rotate.aprs2.net:14580: Name or service not known")
      try database.publishListenerStatus(idle)
      #expect(try database.listenerStatus() == idle)
      #expect(try database.meta(ListenerStatus.key(.lastError)) == idle.lastError)
      #expect(try database.meta(ListenerStatus.key(.server)) == "")
      #expect(try database.meta(ListenerStatus.key(.lineRate)) == "0.00")
    }
  }

  @Test func listenerRowsOfAnotherVersionReadAsDefaultsWhereMissingOrGarbled() throws {
    try withDatabase { database in
      // No receiveOnly, verified, login, filterBytes, updatedAt, startedAt or most counters; garbled values;
      // keys this build does not know.
      try write(
        database,
        """
        listener.state = backingOff
        listener.connected = 0
        listener.server =
        listener.filterMode = satellite
        listener.filterSize = 1e99
        listener.lineRate = fast
        listener.lastLineAt = yesterday
        listener.linesRead = -1
        listener.duplicates = 7
        listener.connectedAt = 1800000000000
        listener.invalid = 4
        """)
      var counts = ListenerCounts()
      counts[.duplicates] = 7
      let status = try database.listenerStatus()
      #expect(status == ListenerStatus(state: "backingOff", counts: counts))
      #expect(status.receiveOnly, "a listener that never said it can send is taken as receive-only")
      #expect(status.server == nil && status.filterBytes == 0 && status.lastLineAt == nil)
    }
  }

  @Test func nothingPublishedReadsAsNothing() throws {
    try withDatabase { database in
      let listener = try database.listenerStatus()
      #expect(listener == ListenerStatus())
      #expect(listener.state == nil && !listener.connected && listener.receiveOnly)
      let push = try database.pushStatus()
      #expect(push == PushStatus())
      #expect(DevicePlatform.allCases.allSatisfy { push.state(of: $0) == .off && push.states[$0] == nil })
      #expect(try database.maintenanceStatus() == MaintenanceStatus())
      #expect(try database.meta("push.ios.providerToken") == nil)
    }
  }

  // MARK: The push sender

  @Test func thePushStatusRoundTripsAndKeepsTheProviderTokenApart() throws {
    try withDatabase { database in
      var counters = PushCounters()
      counters[.android][.accepted] = 7
      counters[.android][.retried] = 1
      counters[.android].tokensDeleted = 2
      counters[.ios][.failed] = 2
      counters.messages = 9
      counters.notifications = 3
      try database.publishPushState(.ok, for: .android)
      try database.publishPushState(.stopped(reason: "403 InvalidProviderToken"), for: .ios)
      // A row a sender before schema 4 kept its APNs provider token in (no longer written): never decoded.
      try database.setMeta("push.ios.providerToken", "eyJ.token")
      let before = database.transactionCounts
      try database.publishPushCounters(counters)
      #expect(database.transactionCounts.writes == before.writes + 1)
      let expected = PushStatus(
        states: [.android: .ok, .ios: .stopped(reason: "403 InvalidProviderToken")], counters: counters)
      #expect(try database.pushStatus() == expected)
      #expect(try database.meta("push.ios.providerToken") == "eyJ.token")
      #expect(
        try rows(database, PushStatus.keyPrefix) == """
          push.android.accepted = 7
          push.android.retried = 1
          push.android.state = ok
          push.android.tokensDeleted = 2
          push.ios.failed = 2
          push.ios.providerToken = eyJ.token
          push.ios.state = stopped: 403 InvalidProviderToken
          push.ios.tokensDeleted = 0
          push.messages = 9
          push.notifications = 3
          """)

      // Counters and states are published apart: neither overwrites the other, nor the token.
      counters[.android][.accepted] = 8
      try database.publishPushCounters(counters)
      try database.publishPushState(.off, for: .android)
      let later = try database.pushStatus()
      #expect(later.counters == counters && later.state(of: .android) == .off)
      #expect(later.state(of: .ios) == .stopped(reason: "403 InvalidProviderToken"))
      #expect(try database.meta("push.ios.providerToken") == "eyJ.token")
    }
  }

  @Test func aProviderWarningRoundTripsAndIsNeitherAStateNorACounter() throws {
    try withDatabase { database in
      try database.publishPushState(.ok, for: .ios)
      try database.publishPushWarning("production = true, but sandbox accepts them", for: .ios)
      var expected = PushStatus(
        states: [.ios: .ok], warnings: [.ios: "production = true, but sandbox accepts them"])
      #expect(try database.pushStatus() == expected)
      #expect(
        try rows(database, "push.ios.warning")
          == "push.ios.warning = production = true, but sandbox accepts them")
      try database.publishPushWarning(nil, for: .ios)
      expected.warnings = [:]
      #expect(try database.pushStatus() == expected)
      #expect(try database.pushStatus().counters[.ios].outcomes.isEmpty)
    }
  }

  @Test func pushRowsOfAnotherVersionKeepNewOutcomesAndDropWhatIsNotACount() throws {
    try withDatabase { database in
      try write(
        database,
        """
        push.android.state = stopped
        push.android.accepted = 3
        push.android.throttled = 2
        push.android.negative = -3
        push.android.text = many
        push.android.a.b = 1
        push.android.tokensDeleted = lots
        push.windows.accepted = 5
        push.windows.state = ok
        push.ios.state = paused
        push.messages = lots
        push.notifications = 4
        push.coalesced = 4
        """)
      var counters = PushCounters()
      counters[.android][.accepted] = 3
      counters[.android].outcomes["throttled"] = 2
      counters.notifications = 4
      let status = try database.pushStatus()
      #expect(status == PushStatus(states: [.android: .stopped(reason: ""), .ios: .off], counters: counters))
      #expect(status.counters[.android].outcomes == ["accepted": 3, "throttled": 2])
      #expect(status.state(of: .android).description == "stopped")
    }
  }

  @Test func aProviderStateReadsBackAsWritten() {
    for state in [PushProviderState.ok, .off, .stopped(reason: "a \"quoted\"\nreason"), .stopped(reason: "")]
    {
      #expect(PushProviderState(published: state.description) == state, "\(state)")
    }
    #expect(PushProviderState.stopped(reason: "x").description == "stopped: x")
    #expect(PushProviderState(published: "stopped:x") == .stopped(reason: ":x"))
    #expect(PushProviderState(published: "") == .off)
  }

  // MARK: Maintenance

  @Test func maintenanceTotalsReadAsARecord() throws {
    try withDatabase { database in
      try register(database, "OLD1", token: "old-token", now: 1_000)
      try database.pruneStations(now: 10_000, expiryMs: 5_000)
      var expected = MaintenanceStatus()
      expected.stationsPruned = 1
      expected.devicesPruned = 1
      expected.lastPruneAt = 10_000
      #expect(try database.maintenanceStatus() == expected)
      try write(database, "maintenance.stationsPruned = -2\nmaintenance.lastPruneAt = soon")
      #expect(try database.maintenanceStatus().stationsPruned == 0)
      #expect(try database.maintenanceStatus().lastPruneAt == nil)
    }
  }
}

extension String {
  /// Without leading and trailing spaces.
  fileprivate var trimmingSpaces: String {
    String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
  }
}
