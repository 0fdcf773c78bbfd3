import Platform
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct WakeSignalTests {
  @Test func aSignalGivenBeforeTheWaitIsKeptAndTakenOnce() {
    let wake = WakeSignal()
    wake.signal()
    wake.signal()
    // Kept while nobody waited: the wait returns at once, however long it would wait.
    #expect(wake.wait(timeoutMs: 86_400_000) == .woken)
    // Taken: nothing is pending any more.
    #expect(wake.wait(timeoutMs: 0) == .timedOut)
  }

  @Test func aStopEndsEveryWaitAndWinsOverAPendingSignal() {
    let wake = WakeSignal()
    wake.signal()
    wake.stop()
    #expect(wake.isStopped)
    #expect(wake.wait(timeoutMs: 86_400_000) == .stopped)
    #expect(wake.wait(timeoutMs: 0) == .stopped)
  }

  @Test func aSignalFromAnotherThreadWakesTheWaiter() throws {
    let wake = WakeSignal()
    let started = Latch()
    let done = try startThread(name: "signaller") {
      started.wait()
      wake.signal()
    }
    started.set()
    #expect(wake.wait(timeoutMs: 60_000) == .woken)
    done.wait()
  }
}

@Suite struct PathWatchTests {
  private func directory() throws -> String {
    var template = Array("/tmp/ac-pathwatch-XXXXXX".utf8CString)
    let made = try #require(mkdtemp(&template))
    return String(cString: made)
  }

  private func create(_ path: String) {
    let fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
    close(fd)
  }

  @Test func aDeletedFileWakesTheWatcherAtOnce() throws {
    let folder = try directory()
    defer { rmdir(folder) }
    let path = folder + "/db.sqlite"
    create(path)
    let watch = PathWatch(path: path)
    #expect(watch.isWatching)
    // Another entry of the folder (the write-ahead log, say) and a write to the file are not about its name.
    create(folder + "/db.sqlite-wal")
    let fd = open(path, O_WRONLY | O_CLOEXEC)
    _ = write(fd, "x", 1)
    close(fd)
    #expect(watch.wait(timeoutMs: 50) == .timedOut)
    unlink(folder + "/db.sqlite-wal")
    unlink(path)
    #expect(watch.wait(timeoutMs: 60_000) == .changed)
  }

  @Test func aFileRenamedOverTheNameWakesTheWatcher() throws {
    let folder = try directory()
    defer { rmdir(folder) }
    let path = folder + "/db.sqlite"
    create(path)
    create(folder + "/new.sqlite")
    let watch = PathWatch(path: path)
    rename(folder + "/new.sqlite", path)
    #expect(watch.wait(timeoutMs: 60_000) == .changed)
    unlink(path)
  }

  @Test func cancelEndsTheWait() throws {
    let folder = try directory()
    defer { rmdir(folder) }
    let watch = PathWatch(path: folder + "/missing.sqlite")
    watch.cancel()
    #expect(watch.wait(timeoutMs: 86_400_000) == .cancelled)
  }
}
