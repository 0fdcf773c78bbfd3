import Foundation
import Logging
import TestSupport

@testable import FastCGI

#if canImport(Glibc)
  import Glibc
#endif

/// A `FastCGIServer` on a unix socket in a fresh temporary folder, run on its own thread, its
/// log captured. `stop()` stops it and waits (bounded) for `run` to return.
final class ServerRig: @unchecked Sendable {
  let directory: String
  let socketPath: String
  let socket: ListenSocket
  let server: FastCGIServer
  let log = LogCapture()
  private let finished: Background<Result<Bool, StartupError>>
  private var stopped = false

  /// Starts `workers` workers; `handler(i)` is worker `i`'s handler.
  init(workers: Int, bodyLimit: Int = 1000, handler: @escaping @Sendable (Int) -> Handler) throws {
    directory = try makeTemporaryDirectory("fcgi")
    socketPath = directory + "/server.sock"
    socket = try ListenSocket.open(socketPath)
    server = try FastCGIServer(
      socket: socket, bodyLimit: bodyLimit, logger: Logger(level: .debug, fileDescriptor: log.writeFd))
    let server = server
    finished = Background {
      Result { () throws(StartupError) -> Bool in try server.run(handlers: (0..<workers).map(handler)) }
    }
  }

  /// Starts `workers` workers that may park requests; `code(i)` is worker `i`'s handler and resumer.
  init(
    workers: Int, bodyLimit: Int = 1000, parking: ParkingOptions,
    code: @escaping @Sendable (Int) -> WorkerHandlers
  ) throws {
    directory = try makeTemporaryDirectory("fcgi")
    socketPath = directory + "/server.sock"
    socket = try ListenSocket.open(socketPath)
    server = try FastCGIServer(
      socket: socket, bodyLimit: bodyLimit, logger: Logger(level: .debug, fileDescriptor: log.writeFd),
      parking: parking)
    let server = server
    finished = Background {
      Result { () throws(StartupError) -> Bool in try server.run(workers: (0..<workers).map(code)) }
    }
  }

  /// A new connection to the server.
  func connect() throws -> FastCGIClient { try FastCGIClient(path: socketPath) }

  /// One whole request on a new connection.
  func exchange(_ bytes: [UInt8]) throws -> FastCGIClient.Outcome {
    try FastCGIClient.exchange(path: socketPath, bytes)
  }

  /// Whether `run` has returned.
  var hasFinished: Bool { finished.isDone }

  /// Stops the server and returns what `run` returned, or nil if it did not return within
  /// `timeout` seconds.
  @discardableResult
  func stop(timeout: Double = 20) -> Bool? {
    server.stop()
    guard let result = finished.join(timeout: timeout) else { return nil }
    teardown()
    return try? result.get()
  }

  private func teardown() {
    guard !stopped else { return }
    stopped = true
    socket.close()
  }

  deinit {
    if !finished.isDone {
      server.stop()
      _ = finished.join(timeout: 20)
    }
    teardown()
    log.close()
    try? FileManager.default.removeItem(atPath: directory)
  }
}

/// The lines a `Logger` writes to a pipe, read by a thread of their own, with a wait for a line.
final class LogCapture: @unchecked Sendable {
  let writeFd: Int32
  private let readFd: Int32
  private let condition = NSCondition()
  private var text = ""
  private var closed = false

  init() {
    var fds: [Int32] = [-1, -1]
    precondition(pipe(&fds) == 0)
    readFd = fds[0]
    writeFd = fds[1]
    let thread = Thread { [self] in readLoop() }
    thread.start()
  }

  /// Every complete line so far.
  var lines: [String] {
    condition.lock()
    defer { condition.unlock() }
    return text.split(separator: "\n").map(String.init)
  }

  /// How many lines contain `fragment`.
  func count(_ fragment: String) -> Int { lines.filter { $0.contains(fragment) }.count }

  /// Waits until `count` lines contain `fragment`; false after `timeout` seconds.
  func wait(for fragment: String, count: Int = 1, timeout: Double = 20) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while text.split(separator: "\n").filter({ $0.contains(fragment) }).count < count {
      if !condition.wait(until: deadline) { return false }
    }
    return true
  }

  /// Ends the capture (the reader thread sees the end of the pipe).
  func close() {
    condition.lock()
    defer { condition.unlock() }
    guard !closed else { return }
    closed = true
    Glibc.close(writeFd)
  }

  private func readLoop() {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = buffer.withUnsafeMutableBytes { read(readFd, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { break }
      condition.lock()
      text += String(decoding: buffer[0..<count], as: UTF8.self)
      condition.broadcast()
      condition.unlock()
    }
    Glibc.close(readFd)
  }
}

/// A body run on a thread of its own (blocking socket calls must not sit on the few threads of
/// the concurrency pool the test bodies share), with a bounded wait for its result.
final class Background<Value: Sendable>: @unchecked Sendable {
  private let condition = NSCondition()
  private var value: Value?

  init(_ body: @escaping @Sendable () -> Value) {
    let thread = Thread { [self] in
      let result = body()
      condition.lock()
      value = result
      condition.broadcast()
      condition.unlock()
    }
    thread.start()
  }

  var isDone: Bool {
    condition.lock()
    defer { condition.unlock() }
    return value != nil
  }

  /// The result, or nil if the body has not finished within `timeout` seconds.
  func join(timeout: Double = 30) -> Value? {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while value == nil {
      if !condition.wait(until: deadline) { break }
    }
    return value
  }
}

/// Counts arrivals and lets threads wait for a number of them, or for `open()`.
final class Gate: @unchecked Sendable {
  private let condition = NSCondition()
  private var arrivals = 0
  private var isOpen = false

  /// Counts one arrival.
  func arrive() {
    condition.lock()
    arrivals += 1
    condition.broadcast()
    condition.unlock()
  }

  /// Waits until `count` arrivals; false after `timeout` seconds.
  func wait(forArrivals count: Int, timeout: Double = 20) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while arrivals < count {
      if !condition.wait(until: deadline) { return false }
    }
    return true
  }

  func open() {
    condition.lock()
    isOpen = true
    condition.broadcast()
    condition.unlock()
  }

  /// Waits until `open()`; false after `timeout` seconds.
  func waitUntilOpen(timeout: Double = 20) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while !isOpen {
      if !condition.wait(until: deadline) { return false }
    }
    return true
  }
}

/// Every request the handlers saw, in order.
final class Recorder: @unchecked Sendable {
  private let lock = NSLock()
  private var recorded: [Request] = []

  func record(_ request: Request) { lock.withLock { recorded.append(request) } }
  var requests: [Request] { lock.withLock { recorded } }
}

/// A handler that records the request and answers 200 with the body it got (or 413/400 with the
/// refusal), `X-Method`, `X-Path` and `X-Remote` headers.
func echoHandler(_ recorder: Recorder) -> Handler {
  { request, writer in
    recorder.record(request)
    let headers = [
      ("X-Method", request.method), ("X-Path", request.path), ("X-Remote", request.remoteAddress),
    ]
    switch request.body {
    case .success(let body):
      writer.send(Response(status: 200, reason: "OK", headers: headers, body: body))
    case .failure(let error):
      var status = 400
      if case .tooLarge = error { status = 413 }
      writer.send(
        Response(status: status, reason: "Refused", headers: headers, body: Array(error.description.utf8)))
    }
  }
}
