import Config
import Platform
import Store
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The push sender as a service: its own thread, its own database connection, one curl multi
/// handle. The listener creates it, calls `start()`, calls `notify()` after each commit that
/// stored messages, and `stop()` when it shuts down.
///
/// ```swift
/// PushService.globalInit()                 // once, before any thread starts
/// let push = PushService(options: PushServiceOptions(databasePath: path, push: try PushConfig(config)))
/// try push.start()
/// …                                        // after each commit that queued pushes:
/// push.notify()
/// …
/// push.stop()
/// ```
///
/// Besides `notify()` the thread reads the outbox every `pollIntervalMs` (1 s by default), so
/// pushes pending from before a crash or restart, and retries that came due, go out too.
/// Without credentials the service still runs (it publishes each provider's state as `off`).
public final class PushService: Sendable {
  /// The settings it was created with.
  public let options: PushServiceOptions

  private let wakeRequested = Atomic<Bool>(false)
  private let stopRequested = Atomic<Bool>(false)
  private let shared = Mutex<Shared>(Shared())

  private struct Shared: Sendable {
    var wake: CurlWakeHandle?
    /// Set when the push thread has ended.
    var done: Latch?
    var started = false
    var states: [DevicePlatform: ProviderState] = [:]
  }

  public init(options: PushServiceOptions) {
    self.options = options
  }

  /// libcurl's global initialisation: call once in `main` before starting any thread (`start()`
  /// calls it too, which is safe with this libcurl but not with every build of it).
  public static func globalInit() {
    CurlGlobal.initialize()
  }

  /// Opens the database connection, loads the providers' credentials (a bad file stops that
  /// provider alone, loudly) and starts the push thread. Throws when the database cannot be
  /// opened or the thread cannot start; calling it twice is an error.
  public func start() throws(PushError) {
    guard !shared.withLock({ $0.started }) else { throw PushError("the push service was already started") }
    CurlGlobal.initialize()
    let engine = try PushEngine(options: options)
    let box = EngineBox(engine: engine, service: self)
    engine.onStateChange = { [weak self] states in self?.shared.withLock { $0.states = states } }
    let initialStates = engine.states
    let done: Latch
    do {
      done = try startThread(name: "push") { box.service.run(box.engine) }
    } catch {
      engine.close()
      throw PushError("cannot start the push thread: \(String(cString: strerror(error.code)))")
    }
    shared.withLock {
      $0.started = true
      $0.done = done
      $0.wake = engine.http.wakeHandle
      $0.states = initialStates
    }
  }

  /// Wakes the push thread to read the outbox now. Cheap; call it after every commit that
  /// stored messages. Safe from any thread, before `start()` and after `stop()` too.
  public func notify() {
    wakeRequested.store(true, ordering: .releasing)
    shared.withLock { $0.wake?.wakeup() }
  }

  /// Stops the thread: no new sends; transfers on the wire get up to 2 s to finish; pushes
  /// not sent stay in the outbox for the next start. Returns when the thread has ended.
  public func stop() {
    stopRequested.store(true, ordering: .releasing)
    let done = shared.withLock { state -> Latch? in
      state.wake?.wakeup()
      let done = state.done
      state.done = nil
      return done
    }
    done?.wait()
  }

  /// Each provider's state as last published (`ok`, `off`, `stopped: …`).
  public var providerStates: [DevicePlatform: ProviderState] {
    shared.withLock { $0.states }
  }

  /// The push thread's loop.
  fileprivate func run(_ engine: PushEngine) {
    var stopDeadline: Int64?
    while true {
      if stopDeadline == nil, stopRequested.load(ordering: .acquiring) {
        stopDeadline = options.clock() + 2000
        engine.beginStop()
      }
      let woken = wakeRequested.exchange(false, ordering: .acquiringAndReleasing)
      let timeout = engine.iterate(woken: woken)
      if let stopDeadline, engine.http.runningCount == 0 || options.clock() >= stopDeadline { break }
      engine.http.wait(timeoutMs: stopDeadline == nil ? timeout : min(timeout, 50))
    }
    shared.withLock { $0.wake = nil }
    engine.close()
    options.logger.info("push sender stopped")
  }
}

/// Hands the engine (confined to one thread) to the new thread.
private final class EngineBox: @unchecked Sendable {
  let engine: PushEngine
  let service: PushService

  init(engine: PushEngine, service: PushService) {
    self.engine = engine
    self.service = service
  }
}
