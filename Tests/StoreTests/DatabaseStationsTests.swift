// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import TestSupport
import Testing

@testable import Store

/// `Database+Stations.swift`: registrations, heartbeats, devices, unregistering and the live set.
@Suite struct DatabaseStationsTests {
  @Test func registerCreatesStationAndDevice() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let record = try register(
      database, "n0call-7", platform: .ios, token: "apns-1", ackMessages: true, now: 500)
    #expect(record.address == "N0CALL-7")
    #expect(record.base == "N0CALL" && record.ssid == 7)
    #expect(record.platform == .ios)
    #expect(record.ackMessages)
    #expect(record.registeredAt == 500 && record.heartbeatAt == 500)
    #expect(record.avatarHash == "" && record.avatarClearedAt == nil)
    #expect(record.lastSyncCursor == 0)
    #expect(try database.station("N0CALL-7") == record)
    #expect(
      try database.devices(of: "N0CALL-7")
        == [
          DeviceRecord(
            token: "apns-1", station: "N0CALL-7", platform: .ios, registeredAt: 500, refreshedAt: 500)
        ])
    #expect(try database.station("N0CALL") == nil)
  }

  @Test func sameTokenTwiceIsOneRowRefreshed() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL", token: "fcm-1", now: 100)
    try register(database, "N0CALL", token: "fcm-1", now: 200)
    try heartbeat(database, "N0CALL", token: "fcm-1", now: 300)
    let devices = try database.devices(of: "N0CALL")
    #expect(devices.count == 1)
    #expect(devices.first?.registeredAt == 100)
    #expect(devices.first?.refreshedAt == 300)
    #expect(try count(database, "devices") == 1)
  }

  @Test func tokenMovesToTheStationThatRegistersIt() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL", token: "fcm-1", now: 100)
    try register(database, "N0CALL", token: "fcm-other", now: 100)
    try register(database, "N0CALL-5", token: "fcm-1", now: 200)
    #expect(try database.devices(of: "N0CALL").map(\.token) == ["fcm-other"])
    let moved = try database.devices(of: "N0CALL-5")
    #expect(moved.map(\.token) == ["fcm-1"])
    #expect(moved.first?.registeredAt == 200)
    #expect(try count(database, "devices", where: "token = 'fcm-1'") == 1)
    #expect(try database.station("N0CALL") != nil, "the old station stays registered")
  }

  @Test func syncOnlyStationHasNoDeviceAndNoPlatform() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let record = try register(database, "N0CALL-2", platform: nil, token: "", now: 100)
    #expect(record.platform == nil)
    #expect(try database.devices(of: "N0CALL-2").isEmpty)
    #expect(try database.liveStations(now: 100, expiryMs: 10).map(\.address) == ["N0CALL-2"])
    // A token without a platform is a caller bug, not a silent guess.
    #expect(throws: StoreError.self) { try register(database, "N0CALL-2", platform: nil, token: "tok") }
  }

  @Test func heartbeatRecreatesMissingStationAndKeepsRegistrationFields() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let created = try heartbeat(database, "N0CALL-9", token: "fcm-9", now: 700)
    #expect(created.registeredAt == 700 && created.heartbeatAt == 700)
    #expect(created.ackMessages == false)
    #expect(try database.devices(of: "N0CALL-9").count == 1)

    try register(database, "N0CALL-9", platform: .android, ackMessages: true, now: 800)
    let beat = try heartbeat(database, "N0CALL-9", platform: nil, now: 900)
    #expect(beat.registeredAt == 800, "a heartbeat does not move registered_at")
    #expect(beat.heartbeatAt == 900)
    #expect(beat.ackMessages, "a heartbeat without ackMessages keeps the stored choice")
    #expect(beat.platform == .android, "a nil platform keeps the stored one")
    let reregistered = try register(database, "N0CALL-9", ackMessages: false, now: 1_000)
    #expect(reregistered.registeredAt == 1_000 && !reregistered.ackMessages)
  }

  @Test func unregisterCascadesToEverythingOfTheStation() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL", token: "fcm-1")
    try register(database, "K1ABC", token: "fcm-2")
    try database.setAvatar("N0CALL", icon: "radio", image: nil, hash: "icon:radio", now: 5)
    _ = try database.storeMessages(
      [incoming("N0CALL", "one"), incoming("N0CALL", "two"), incoming("K1ABC", "three")], now: 10)
    #expect(try database.deleteStation("n0call"))
    #expect(try database.station("N0CALL") == nil)
    #expect(try count(database, "devices", where: "station = 'N0CALL'") == 0)
    #expect(try count(database, "messages", where: "station = 'N0CALL'") == 0)
    #expect(try count(database, "outbox", where: "station = 'N0CALL'") == 0)
    #expect(try database.avatars(for: ["N0CALL"]).isEmpty)
    // The other station is untouched; deleting again reports nothing to delete.
    #expect(try count(database, "messages", where: "station = 'K1ABC'") == 1)
    #expect(try database.devices(of: "K1ABC").count == 1)
    #expect(try database.deleteStation("N0CALL") == false)
    // Re-registering starts from nothing.
    try register(database, "N0CALL")
    #expect(try database.sync(station: "N0CALL", since: 0, now: 20).messages.isEmpty)
  }

  @Test func deleteOneDeviceKeepsTheStation() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL", token: "fcm-1")
    try register(database, "N0CALL", token: "fcm-2")
    #expect(try database.deleteDevice(token: "fcm-1", station: "K1ABC") == false)
    #expect(try database.deleteDevice(token: "fcm-1", station: "n0call"))
    #expect(try database.devices(of: "N0CALL").map(\.token) == ["fcm-2"])
    #expect(try database.deleteDevice(token: "fcm-2"))
    #expect(try database.devices(of: "N0CALL").isEmpty)
    #expect(try database.station("N0CALL") != nil)
  }

  @Test func expiredTokensAndStationsAreLeftOut() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "OLD", token: "old-token", now: 1_000)
    try register(database, "NEW", token: "new-token", ackMessages: true, now: 50_000)
    try register(database, "NEW", token: "stale-token", ackMessages: nil, now: 1_000)
    try heartbeat(database, "NEW", token: "new-token", now: 50_000)
    #expect(
      try database.liveStations(now: 60_000, expiryMs: 20_000) == [
        LiveStation(address: "NEW", ackMessages: true)
      ])
    #expect(try database.devices(of: "NEW", refreshedSince: 40_000).map(\.token) == ["new-token"])
    #expect(try database.devices(of: "NEW").count == 2)
  }
}
