import Platform
import Store
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct ListenerWakeTests {
  private func directory() throws -> String {
    var template = Array("/tmp/ac-wake-XXXXXX".utf8CString)
    let made = try #require(mkdtemp(&template))
    return String(cString: made)
  }

  @Test func aDatagramNamesItsKindsAndAnUnknownOneWakesEveryWorker() {
    #expect(ListenerWake.decode([2]) == [.sends])
    #expect(ListenerWake.decode([1, 3, 1]) == [.registrations, .deviceAcks])
    #expect(ListenerWake.decode([]) == Set(ListenerWake.allCases))
    #expect(ListenerWake.decode([1, 99]) == Set(ListenerWake.allCases))
  }

  @Test func theResponderWakesTheListenerThroughTheSocketBesideTheDatabase() throws {
    let folder = try directory()
    defer { rmdir(folder) }
    let database = folder + "/aprs.sqlite"
    let path = ListenerWakeSocket.path(forDatabase: database)
    #expect(path == database + ".listener-wake")
    let socket = try ListenerWakeSocket(path: path)
    let sender = WakeSender(listenerOf: database)
    #expect(sender.send(.sends))
    #expect(sender.send(.deviceAcks))
    // Datagrams queue while the listener is busy; each is one wake.
    #expect(socket.receive() == [.sends])
    #expect(socket.receive() == [.deviceAcks])
    #expect(sender.sent.load(ordering: .relaxed) == 2 && sender.failed.load(ordering: .relaxed) == 0)
    socket.close()
    // Closed: the file is gone, receive returns at once, and a send fails without blocking, counted.
    #expect(access(path, F_OK) != 0)
    #expect(socket.receive() == nil)
    #expect(!sender.send(.registrations))
    #expect(sender.failed.load(ordering: .relaxed) == 1)
  }

  @Test func aStaleSocketFileIsReplacedAndTheModeFollowsTheUmask() throws {
    let folder = try directory()
    defer { rmdir(folder) }
    let path = ListenerWakeSocket.path(forDatabase: folder + "/aprs.sqlite")
    // A listener that crashed left its socket file.
    let stale = try ListenerWakeSocket(path: path)
    let old = umask(0o007)
    defer { umask(old) }
    let socket = try ListenerWakeSocket(path: path)
    var info = stat()
    #expect(lstat(path, &info) == 0)
    #expect(info.st_mode & 0o777 == 0o770)
    #expect(WakeSender(listenerOf: folder + "/aprs.sqlite").send(.registrations))
    #expect(socket.receive() == [.registrations])
    // The old one going away leaves the new one's file alone.
    stale.close()
    #expect(access(path, F_OK) == 0)
    socket.close()
    #expect(access(path, F_OK) != 0)
  }

  @Test func aPathTooLongForASocketAddressIsRefused() {
    let long = "/tmp/" + String(repeating: "d", count: 120) + "/aprs.sqlite.listener-wake"
    #expect(throws: FileLockError.self) { try ListenerWakeSocket(path: long) }
  }
}
