import Foundation
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// A minimal FastCGI responder on a unix socket, for testing nginx's side on its own: it records
/// what nginx passes (params, body) and answers as the test says, including never (for 504).
///
/// It speaks just enough of the protocol for nginx with `fastcgi_keep_conn off`: one request per
/// connection (BEGIN_REQUEST, PARAMS…, STDIN…), answered with STDOUT records and END_REQUEST.
final class FakeFastCGI: @unchecked Sendable {
  /// One request as the responder saw it.
  struct Request: Sendable {
    var params: [String: String]
    var body: [UInt8]
  }

  /// How to answer.
  enum Answer: Sendable {
    /// A CGI-style answer: `Status:` line, headers, body.
    case respond(status: Int, headers: [(String, String)], body: [UInt8])
    /// Read the request, then say nothing until the fake stops.
    case hang
  }

  typealias Handler = @Sendable (Request) -> Answer

  let path: String
  private let handler: Handler
  private let listener: Int32
  private let lock = NSLock()
  private var recorded: [Request] = []
  private var connections: Set<Int32> = []
  private var stopped = false

  /// A JSON answer.
  static func json(_ status: Int, _ body: String, headers: [(String, String)] = []) -> Answer {
    .respond(
      status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(body.utf8))
  }

  init(socketPath: String, handler: @escaping Handler) throws {
    path = socketPath
    self.handler = handler
    unlink(socketPath)
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket failed") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(socketPath.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
      throw TestFailure("socket path too long")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: bytes)
      raw[bytes.count] = 0
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard bound == 0, listen(fd, 64) == 0 else {
      close(fd)
      throw TestFailure("cannot listen on \(socketPath): errno \(errno)")
    }
    listener = fd
    let thread = Thread { [self] in acceptLoop() }
    thread.start()
  }

  /// Every request received so far.
  var requests: [Request] {
    lock.lock()
    defer { lock.unlock() }
    return recorded
  }

  /// Closes the listening socket (nginx then gets "connection refused": 502) and every open connection.
  func stop() {
    lock.lock()
    defer { lock.unlock() }
    guard !stopped else { return }
    stopped = true
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
    // Under the lock: a connection still in the set has not been closed by its thread yet.
    for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
  }

  deinit { stop() }

  private func acceptLoop() {
    while true {
      let fd = accept(listener, nil, nil)
      if fd < 0 {
        if errno == EINTR { continue }
        return
      }
      lock.lock()
      if stopped {
        lock.unlock()
        close(fd)
        return
      }
      connections.insert(fd)
      lock.unlock()
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      let thread = Thread { [self] in serve(fd) }
      thread.start()
    }
  }

  private func serve(_ fd: Int32) {
    defer {
      lock.lock()
      connections.remove(fd)
      lock.unlock()
      close(fd)
    }
    guard let (requestID, request) = readRequest(fd) else { return }
    lock.lock()
    recorded.append(request)
    lock.unlock()
    switch handler(request) {
    case .hang:
      // Wait until nginx gives up (closes) or the fake stops (shuts the socket down).
      var byte: UInt8 = 0
      while recv(fd, &byte, 1, 0) > 0 {}
    case .respond(let status, let headers, let body):
      var payload = Array("Status: \(status) Fake\r\n".utf8)
      for (name, value) in headers { payload += Array("\(name): \(value)\r\n".utf8) }
      payload += Array("\r\n".utf8) + body
      var offset = 0
      while offset < payload.count {
        let chunk = Array(payload[offset..<min(offset + 65_535, payload.count)])
        writeRecord(fd, type: 6, requestID: requestID, content: chunk)
        offset += chunk.count
      }
      writeRecord(fd, type: 6, requestID: requestID, content: [])
      writeRecord(fd, type: 3, requestID: requestID, content: [0, 0, 0, 0, 0, 0, 0, 0])
    }
  }

  /// Reads records until the end of STDIN. Returns the request id and the request.
  private func readRequest(_ fd: Int32) -> (UInt16, Request)? {
    var paramBytes: [UInt8] = []
    var body: [UInt8] = []
    var requestID: UInt16 = 1
    while true {
      guard let header = readExactly(fd, 8) else { return nil }
      let type = header[1]
      requestID = UInt16(header[2]) << 8 | UInt16(header[3])
      let length = Int(header[4]) << 8 | Int(header[5])
      let padding = Int(header[6])
      guard let content = readExactly(fd, length), readExactly(fd, padding) != nil else { return nil }
      switch type {
      case 4: paramBytes += content
      case 5:
        if length == 0 { return (requestID, Request(params: Self.decodeParams(paramBytes), body: body)) }
        body += content
      default: break
      }
    }
  }

  private static func decodeParams(_ bytes: [UInt8]) -> [String: String] {
    var params: [String: String] = [:]
    var index = 0
    func length() -> Int? {
      guard index < bytes.count else { return nil }
      if bytes[index] & 0x80 == 0 {
        index += 1
        return Int(bytes[index - 1])
      }
      guard index + 4 <= bytes.count else { return nil }
      let value =
        Int(bytes[index] & 0x7F) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8
        | Int(bytes[index + 3])
      index += 4
      return value
    }
    while let nameLength = length(), let valueLength = length(),
      index + nameLength + valueLength <= bytes.count
    {
      let name = String(decoding: bytes[index..<index + nameLength], as: UTF8.self)
      let value = String(
        decoding: bytes[index + nameLength..<index + nameLength + valueLength], as: UTF8.self)
      params[name] = value
      index += nameLength + valueLength
    }
    return params
  }

  private func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: count)
    var offset = 0
    while offset < count {
      let received = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + offset, count - offset, 0) }
      if received < 0 && errno == EINTR { continue }
      if received <= 0 { return nil }
      offset += received
    }
    return buffer
  }

  private func writeRecord(_ fd: Int32, type: UInt8, requestID: UInt16, content: [UInt8]) {
    let padding = (8 - content.count % 8) % 8
    var record: [UInt8] = [
      1, type, UInt8(requestID >> 8), UInt8(requestID & 0xFF),
      UInt8(content.count >> 8), UInt8(content.count & 0xFF), UInt8(padding), 0,
    ]
    record += content + [UInt8](repeating: 0, count: padding)
    try? sendAll(fd, record)  // nginx hung up: nothing more to say
  }
}
