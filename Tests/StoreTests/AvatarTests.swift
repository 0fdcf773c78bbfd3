import TestSupport
import Testing

@testable import Store

@Suite struct AvatarTests {
  @Test func setAvatarIsEchoedAndListed() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "KJ7ABC-7")
    #expect(try database.setAvatar("kj7abc-7", icon: "radio", image: nil, hash: "icon:radio", now: 10))
    #expect(try database.station("KJ7ABC-7")?.avatarHash == "icon:radio")
    #expect(try heartbeat(database, "KJ7ABC-7", now: 20).avatarHash == "icon:radio")
    #expect(
      try database.avatars(for: ["kj7abc-7", "UNKNOWN"])
        == ["KJ7ABC-7": Avatar(icon: "radio", image: nil, hash: "icon:radio")])
    try database.setAvatar("KJ7ABC-7", icon: nil, image: "iVBORw0KGgo=", hash: "abc123", now: 30)
    #expect(
      try database.avatars(for: ["KJ7ABC-7"])["KJ7ABC-7"]
        == Avatar(icon: nil, image: "iVBORw0KGgo=", hash: "abc123"))
    #expect(try database.setAvatar("NOBODY", icon: "x", image: nil, hash: "icon:x", now: 1) == false)
  }

  @Test func clearIsDistinctFromNeverSet() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "NEVER")
    try register(database, "CLEARS")
    try database.setAvatar("CLEARS", icon: "radio", image: "aW1n", hash: "h1", now: 10)
    try database.setAvatar("CLEARS", icon: nil, image: nil, hash: "ignored", now: 40)

    let never = try #require(try database.station("NEVER"))
    let cleared = try #require(try database.station("CLEARS"))
    #expect(never.avatarHash == "" && never.avatarClearedAt == nil)
    #expect(cleared.avatarHash == "" && cleared.avatarClearedAt == 40)
    #expect(try database.avatars(for: ["NEVER", "CLEARS"]).isEmpty)
    #expect(
      try count(
        database, "stations", where: "address = 'CLEARS' AND avatar_icon IS NULL AND avatar_image IS NULL")
        == 1, "a clear stores nothing but its time")

    // Setting again forgets the clear.
    try database.setAvatar("CLEARS", icon: "tower", image: nil, hash: "icon:tower", now: 50)
    let again = try #require(try database.station("CLEARS"))
    #expect(again.avatarHash == "icon:tower" && again.avatarClearedAt == nil)
    #expect(throws: StoreError.self) {
      try database.setAvatar("CLEARS", icon: "tower", image: nil, hash: "", now: 60)
    }
  }

  @Test func syncCarriesPeerAvatarHashesOnly() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    try register(database, "N0CALL")
    try register(database, "KJ7ABC-7")
    try register(database, "W5AGO")
    try database.setAvatar("KJ7ABC-7", icon: "radio", image: nil, hash: "icon:radio", now: 1)
    try database.setAvatar("W5AGO", icon: "x", image: nil, hash: "icon:x", now: 1)
    try database.setAvatar("W5AGO", icon: nil, image: nil, hash: "", now: 2)
    _ = try database.storeMessages(
      [
        incoming("N0CALL", "a", from: "KJ7ABC-7"), incoming("N0CALL", "b", from: "W5AGO"),
        incoming("N0CALL", "c", from: "NOAVATAR"), incoming("N0CALL", "d", from: "KJ7ABC-7"),
      ], now: 100)
    let result = try database.sync(station: "N0CALL", since: 0, now: 200)
    #expect(result.messages.count == 4)
    #expect(result.avatarHashes == ["KJ7ABC-7": "icon:radio"])
  }
}
