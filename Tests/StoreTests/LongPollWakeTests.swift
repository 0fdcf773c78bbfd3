import CompanionFiles
import Platform
import Store
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The long-poll wake socket (`<database>.longpoll-wake`, ``CompanionFiles/WakeSocket/Role/longPolls``): every
/// writer's commit sends it a byte (``CommitNotice``), a rolled-back transaction sends nothing. How it is bound is
/// CompanionFilesTests' `WakeSocketTests`.
@Suite struct LongPollWakeTests {
  private func directory() throws -> String {
    var template = Array("/tmp/ac-lpwake-XXXXXX".utf8CString)
    let made = try #require(mkdtemp(&template))
    return String(cString: made)
  }

  @Test func eachCommitWakesTheBoundSocketAndARollbackDoesNot() throws {
    let folder = try directory()
    defer { _ = try? FileManagerless.removeTree(folder) }
    let path = folder + "/aprs.sqlite"
    let socket = try #require(
      try WakeSocket.bind(.longPolls, path: WakeSocket.Role.longPolls.path(forDatabase: path)))
    #expect(!socket.drain(), "nothing queued yet")
    var options = StoreOptions()
    options.commitNotice = .wakingLongPolls(of: path)
    let database = try Database(path: path, options: options)
    defer { database.close() }
    _ = try database.migrate()
    _ = socket.drain()
    _ = try database.upsertStation(
      StationUpsert(
        address: "N0CALL-7", base: "N0CALL", ssid: 7, platform: nil, pushToken: nil, ackMessages: nil,
        isRegistration: true),
      now: 1_000)
    #expect(socket.drain(), "a commit wakes it")
    #expect(!socket.drain(), "once")
    // A batch is one commit, one wake; a transaction that throws commits nothing and wakes nobody.
    try database.writeBatch { () throws(StoreError) in
      _ = try database.markRead(station: "N0CALL-7", peer: "*", upTo: 5, now: 2_000)
      _ = try database.markRead(station: "N0CALL-7", peer: "KJ7ABC", upTo: 5, now: 2_001)
    }
    #expect(socket.drain() && !socket.drain())
    #expect(throws: StoreError.self) {
      try database.writeBatch { () throws(StoreError) in
        _ = try database.markRead(station: "N0CALL-7", peer: "*", upTo: 9, now: 3_000)
        throw .invalidArgument("rolled back")
      }
    }
    #expect(!socket.drain())
  }
}

/// Removing a test's folder without Foundation.
enum FileManagerless {
  static func removeTree(_ path: String) throws {
    guard let directory = opendir(path) else { return }
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name == "." || name == ".." { continue }
      unlink(path + "/" + name)
    }
    closedir(directory)
    rmdir(path)
  }
}
