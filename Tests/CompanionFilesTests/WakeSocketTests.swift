import CompanionFiles
import Platform
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The two wake sockets beside the database (``WakeSocket``): the listener's, which the responder wakes with a
/// ``ListenerWake`` byte, and the responder's held long polls', which every writer wakes with one byte.
@Suite struct WakeSocketTests {
  private func directory() throws -> String {
    var template = Array("/tmp/ac-wake-XXXXXX".utf8CString)
    let made = try #require(mkdtemp(&template))
    return String(cString: made)
  }

  @Test func eachRoleHasItsFileItsBindingAndItsFallbackLook() {
    #expect(
      WakeSocket.Role.listener.path(forDatabase: "/nowhere/aprs.sqlite")
        == "/nowhere/aprs.sqlite.listener-wake")
    #expect(
      WakeSocket.Role.longPolls.path(forDatabase: "/nowhere/aprs.sqlite")
        == "/nowhere/aprs.sqlite.longpoll-wake")
    #expect(WakeSocket.Role.listener.binding == .replacing)
    #expect(WakeSocket.Role.longPolls.binding == .ifFree)
    #expect(WakeSocket.Role.listener.fallbackPollMs == 30_000)
    #expect(WakeSocket.Role.longPolls.fallbackPollMs == 5_000)
  }

  @Test func aDatagramNamesItsKindsAndAnUnknownOneWakesEveryWorker() {
    #expect(ListenerWake.decode([2]) == [.sends])
    #expect(ListenerWake.decode([1, 3, 1]) == [.registrations, .deviceAcks])
    #expect(ListenerWake.decode([]) == Set(ListenerWake.allCases))
    #expect(ListenerWake.decode([1, 99]) == Set(ListenerWake.allCases))
    #expect(ListenerWake.allCases.map(\.rawValue) == [1, 2, 3], "the bytes on the wire")
  }

  @Test func theResponderWakesTheListenerThroughTheSocketBesideTheDatabase() throws {
    let folder = try directory()
    defer { rmdir(folder) }
    let database = folder + "/aprs.sqlite"
    let path = WakeSocket.Role.listener.path(forDatabase: database)
    #expect(path == database + ".listener-wake")
    let socket = try #require(try WakeSocket.bind(.listener, path: path))
    #expect(socket.role == .listener && socket.path == path)
    let sender = WakeSocket.Sender(.listener, ofDatabase: database)
    #expect(sender.send(.sends))
    #expect(sender.send(.deviceAcks))
    // Datagrams queue while the listener is busy; each is one wake.
    #expect(socket.receive() == [2])
    #expect(socket.receive().map(ListenerWake.decode) == [.deviceAcks])
    #expect(sender.sent.load(ordering: .relaxed) == 2 && sender.failed.load(ordering: .relaxed) == 0)
    socket.close()
    // Closed: the file is gone, receive returns at once, and a send fails without blocking, counted.
    #expect(access(path, F_OK) != 0)
    #expect(socket.receive() == nil)
    #expect(!sender.send(.registrations))
    #expect(sender.failed.load(ordering: .relaxed) == 1)
  }

  @Test func theListenerReplacesAStaleSocketFileAndTheModeFollowsTheUmask() throws {
    let folder = try directory()
    defer { rmdir(folder) }
    let path = WakeSocket.Role.listener.path(forDatabase: folder + "/aprs.sqlite")
    // A listener that crashed left its socket file.
    let stale = try #require(try WakeSocket.bind(.listener, path: path))
    let old = umask(0o007)
    defer { umask(old) }
    let socket = try #require(try WakeSocket.bind(.listener, path: path), "the listener always binds")
    var info = stat()
    #expect(lstat(path, &info) == 0)
    #expect(info.st_mode & 0o777 == 0o770)
    #expect(WakeSocket.Sender(.listener, ofDatabase: folder + "/aprs.sqlite").send(.registrations))
    #expect(socket.receive().map(ListenerWake.decode) == [.registrations])
    // The old one going away leaves the new one's file alone.
    stale.close()
    #expect(access(path, F_OK) == 0)
    socket.close()
    #expect(access(path, F_OK) != 0)
  }

  @Test func aPathTooLongForASocketAddressIsRefused() {
    let long = "/tmp/" + String(repeating: "d", count: 120) + "/aprs.sqlite.listener-wake"
    #expect(throws: FileLockError.self) { try WakeSocket.bind(.listener, path: long) }
    #expect(throws: FileLockError.self) { try WakeSocket.bind(.longPolls, path: long) }
  }

  @Test func aLiveLongPollSocketIsLeftToItsOwnerAndAStaleOneIsReplaced() throws {
    let folder = try directory()
    defer { rmdir(folder) }
    let path = folder + "/aprs.sqlite.longpoll-wake"
    let first = try #require(try WakeSocket.bind(.longPolls, path: path))
    #expect(try WakeSocket.bind(.longPolls, path: path) == nil, "another responder holds it: do without")
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
    let next = try #require(try WakeSocket.bind(.longPolls, path: path), "a stale file is replaced")
    #expect(WakeSocket.Sender(socketPath: path).send(byte: 1))
    #expect(next.drain())
    next.close()
    #expect(access(path, F_OK) != 0)
  }

  @Test func aLongPollSocketIsNonBlockingAndDrainsEveryQueuedWake() throws {
    let folder = try directory()
    defer { rmdir(folder) }
    let database = folder + "/aprs.sqlite"
    let socket = try #require(
      try WakeSocket.bind(.longPolls, path: WakeSocket.Role.longPolls.path(forDatabase: database)))
    #expect(fcntl(socket.descriptor, F_GETFL) & O_NONBLOCK != 0, "an epoll set watches it")
    #expect(!socket.drain(), "nothing queued yet")
    let sender = WakeSocket.Sender(.longPolls, ofDatabase: database)
    #expect(sender.send(byte: 1) && sender.send(byte: 1))
    #expect(socket.drain() && !socket.drain(), "both read at once")
    socket.close()
  }
}
