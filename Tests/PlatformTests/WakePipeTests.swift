import Platform
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct WakePipeTests {
  /// Whether the read end is readable now (a poll that does not wait).
  private func isReadable(_ pipe: WakePipe) -> Bool {
    var probe = pollfd(fd: pipe.readDescriptor, events: Int16(POLLIN), revents: 0)
    return poll(&probe, 1, 0) == 1 && probe.revents & Int16(POLLIN) != 0
  }

  @Test func wakeMakesItReadableAndDrainEmptiesIt() throws {
    let pipe = try #require(WakePipe())
    #expect(!isReadable(pipe))
    pipe.wake()
    pipe.wake()
    #expect(isReadable(pipe))
    pipe.drain()
    #expect(!isReadable(pipe))
    pipe.drain()  // an empty pipe: returns at once (non-blocking)
    #expect(!isReadable(pipe))
  }

  @Test func wakeNeverBlocksOnAFullPipe() throws {
    let pipe = try #require(WakePipe())
    for _ in 0..<200_000 { pipe.wake() }  // more than a pipe holds (64 KiB by default)
    #expect(isReadable(pipe))
    pipe.drain()
    #expect(!isReadable(pipe))
  }

  @Test func wakeFromAnotherThreadEndsAPoll() throws {
    let pipe = try #require(WakePipe())
    let done = try startThread(name: "platform-test") { pipe.wake() }
    var probe = pollfd(fd: pipe.readDescriptor, events: Int16(POLLIN), revents: 0)
    #expect(poll(&probe, 1, 10_000) == 1)
    #expect(done.wait(timeoutMs: 10_000))
    pipe.drain()
  }

  @Test func descriptorsAreCloseOnExecAndNonBlocking() throws {
    let pipe = try #require(WakePipe())
    for fd in [pipe.readDescriptor, pipe.writeDescriptor] {
      #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
      #expect(fcntl(fd, F_GETFL) & O_NONBLOCK != 0)
    }
  }
}
