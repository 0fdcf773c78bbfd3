import Foundation
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Sends `request` as it is (no HTTP client fixes it up) to `127.0.0.1:port` and reads the answer until the
/// server closes the connection or 5 s pass: for request lines and headers curl would refuse to send.
func rawHTTP(port: Int, _ request: [UInt8]) throws -> HTTPResponse {
  let fd = try connectLoopbackTCP(port: port)
  defer { close(fd) }
  var timeout = timeval(tv_sec: 5, tv_usec: 0)
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  try sendAll(fd, request)
  var answer: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 65_536)
  while true {
    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    if count <= 0 { break }
    answer += buffer[..<count]
  }
  let text = String(decoding: answer, as: UTF8.self)
  guard let end = text.range(of: "\r\n\r\n") else { throw TestFailure("no HTTP head in: \(text)") }
  var lines = text[..<end.lowerBound].components(separatedBy: "\r\n")
  let statusLine = lines.removeFirst().split(separator: " ")
  guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
    throw TestFailure("status line: \(text)")
  }
  let headers = lines.compactMap { line -> (name: String, value: String)? in
    guard let colon = line.firstIndex(of: ":") else { return nil }
    return (
      line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    )
  }
  return HTTPResponse(
    status: status, headers: headers, body: Data(text[end.upperBound...].utf8), version: String(statusLine[0])
  )
}
