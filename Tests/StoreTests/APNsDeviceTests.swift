import TestSupport
import Testing

@testable import Store

/// APNs devices: hex tokens stored lower case (one device, one row), the environment that accepted each,
/// and migration 4, which merges the rows earlier builds stored per spelling and drops the provider token row.
@Suite struct APNsDeviceTests {
  static let lower = String(repeating: "ab", count: 32)
  static let upper = lower.uppercased()

  @Test func apnsTokensAreHexAndLowerCase() {
    #expect(DeviceToken.apns(Self.upper) == Self.lower)
    #expect(DeviceToken.apns("0123456789ABCDEFabcdef0123456789") == "0123456789abcdefabcdef0123456789")
    #expect(DeviceToken.apns(String(repeating: "a", count: 16)) != nil)
    #expect(DeviceToken.apns(String(repeating: "a", count: 200)) != nil)
    for bad in [
      "", "abc", String(repeating: "a", count: 15), String(repeating: "a", count: 201),
      String(repeating: "a", count: 202), String(repeating: "g", count: 64), Self.lower + " ",
      String(repeating: "ａ", count: 32), "not-hex/../../x0",
    ] {
      #expect(DeviceToken.apns(bad) == nil, "\(bad)")
    }
    #expect(DeviceToken.stored(Self.upper, platform: .ios) == Self.lower)
    #expect(
      DeviceToken.stored("dXk:APA91B", platform: .android) == "dXk:APA91B", "FCM tokens keep their case")
  }

  @Test func anUpperAndALowerCaseRegistrationAreOneDevice() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL-7", platform: .ios, token: Self.upper, now: 100)
    try heartbeat(database, "N0CALL-7", platform: .ios, token: Self.lower, now: 200)
    try register(database, "N0CALL-7", platform: .android, token: "Fcm:Token-A", now: 300)
    let devices = try database.devices(of: "N0CALL-7")
    #expect(devices.map(\.token) == ["Fcm:Token-A", Self.lower])
    #expect(devices.last?.registeredAt == 100 && devices.last?.refreshedAt == 200)
    #expect(try count(database, "devices") == 2)
    // Unregistering one device finds it in any spelling; an FCM token only in its own.
    #expect(try database.deleteDevice(token: "fcm:token-a", station: "N0CALL-7") == false)
    #expect(try database.deleteDevice(token: Self.upper, station: "N0CALL-7"))
    #expect(try database.devices(of: "N0CALL-7").map(\.token) == ["Fcm:Token-A"])
  }

  @Test func theAcceptingEnvironmentIsRememberedPerDevice() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL-7", platform: .ios, token: Self.lower, now: 100)
    try register(database, "N0CALL-7", platform: .android, token: "fcm-1", now: 50)
    #expect(try database.devices(of: "N0CALL-7").map(\.apnsEnvironment) == [nil, nil])
    try database.applyPushResults(
      completed: [], failed: [], rescheduled: [], deadTokens: [],
      apnsEnvironments: [(token: Self.lower, environment: .sandbox), (token: "fcm-1", environment: .sandbox)])
    #expect(try database.devices(of: "N0CALL-7").map(\.apnsEnvironment) == [.sandbox, nil])
    // A refresh keeps it (a token's environment does not change); the other one replaces it.
    try heartbeat(database, "N0CALL-7", platform: .ios, token: Self.upper, now: 200)
    #expect(try database.devices(of: "N0CALL-7").first?.apnsEnvironment == .sandbox)
    try database.applyPushResults(
      completed: [], failed: [], rescheduled: [], deadTokens: [],
      apnsEnvironments: [(token: Self.lower, environment: .production)])
    #expect(try database.devices(of: "N0CALL-7").first?.apnsEnvironment == .production)
    #expect(throws: StoreError.self) {
      try database.execute("UPDATE devices SET apns_environment = 'staging'")
    }
  }

  @Test func migrationFourMergesSpellingsLowerCasesAndDropsTheProviderToken() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let old = try Database(path: dir.database)
    #expect(try old.migrate(upTo: 3) == 3)
    let mixed = "0123456789ABCDEF" + String(repeating: "0", count: 48)
    try old.execute(
      """
      INSERT INTO stations (address, base, ssid, platform, registered_at, heartbeat_at)
        VALUES ('N0CALL-7', 'N0CALL', 7, 'ios', 100, 900), ('N0CALL-8', 'N0CALL', 8, 'ios', 100, 900),
               ('KJ7ABC', 'KJ7ABC', 0, 'android', 100, 900);
      INSERT INTO devices (token, station, platform, registered_at, refreshed_at) VALUES
        ('\(Self.upper)', 'N0CALL-7', 'ios', 100, 500),
        ('\(Self.lower)', 'N0CALL-7', 'ios', 100, 400),
        ('\(mixed)', 'N0CALL-7', 'ios', 100, 300),
        ('\(mixed.lowercased())', 'N0CALL-8', 'ios', 200, 700),
        ('\(mixed.lowercased().prefix(32))', 'N0CALL-8', 'ios', 200, 700),
        ('Fcm:Token-A', 'KJ7ABC', 'android', 100, 100),
        ('fcm:token-a', 'KJ7ABC', 'android', 100, 100);
      INSERT INTO meta (key, value) VALUES ('push.ios.providerToken', 'TESTKEY123 TEAM123456 1 eyJ.secret.sig'),
        ('push.ios.state', 'ok');
      """)
    old.close()

    let database = try openStore(dir.database)
    defer { database.close() }
    #expect(try database.schemaVersion() == Database.latestSchemaVersion)
    #expect(try database.integrityCheck() == "ok")
    // The upper-case row was refreshed last: it is the one kept, in lower case, with its own times.
    let seven = try database.devices(of: "N0CALL-7")
    #expect(seven.map(\.token) == [Self.lower])
    #expect(seven.first?.refreshedAt == 500 && seven.first?.apnsEnvironment == nil)
    // A token two stations held: the station that heard from the device last keeps it.
    #expect(
      Set(try database.devices(of: "N0CALL-8").map(\.token)) == [
        mixed.lowercased(), String(mixed.lowercased().prefix(32)),
      ])
    #expect(try count(database, "devices", where: "platform = 'ios' AND token <> lower(token)") == 0)
    // FCM tokens are case-sensitive: both stay.
    #expect(try database.devices(of: "KJ7ABC").count == 2)
    #expect(try database.meta("push.ios.providerToken") == nil)
    #expect(try database.meta("push.ios.state") == "ok")
    #expect(try count(database, "meta", where: "value LIKE '%eyJ%'") == 0)
  }
}
