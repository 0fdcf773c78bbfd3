import Platform
import Store
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The long-poll wake socket (`<database>.longpoll-wake`): one responder binds it, every writer's commit sends it a
/// byte (``CommitNotice``), a rolled-back transaction sends nothing.
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
    #expect(LongPollWakeSocket.path(forDatabase: path) == path + ".longpoll-wake")
    let socket = try #require(
      try LongPollWakeSocket.bindIfFree(path: LongPollWakeSocket.path(forDatabase: path)))
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

  @Test func aLiveSocketIsLeftToItsOwnerAndAStaleOneIsReplaced() throws {
    let folder = try directory()
    defer { _ = try? FileManagerless.removeTree(folder) }
    let path = folder + "/aprs.sqlite.longpoll-wake"
    let first = try #require(try LongPollWakeSocket.bindIfFree(path: path))
    #expect(try LongPollWakeSocket.bindIfFree(path: path) == nil, "another responder holds it: do without")
    first.close()
    #expect(access(path, F_OK) != 0, "closing removes the file")
    // A responder that was killed leaves its socket file, bound by nobody: the next one replaces it.
    let killed = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: Array(path.utf8))
      raw[path.utf8.count] = 0
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(killed, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    #expect(bound == 0)
    close(killed)
    #expect(access(path, F_OK) == 0)
    let next = try #require(try LongPollWakeSocket.bindIfFree(path: path), "a stale file is replaced")
    #expect(WakeSender(socketPath: path).send(byte: 1))
    #expect(next.drain())
    next.close()
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
