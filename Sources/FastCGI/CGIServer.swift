import Logging
import Platform

/// Answers the one request of a CGI process (RFC 3875): parameters from the environment, the
/// body from standard input (exactly `CONTENT_LENGTH` bytes, checked against `bodyLimit` first),
/// the answer on standard output. The handler runs on the calling thread.
public struct CGIServer {
  /// The request's parameters: the process environment.
  public var environment: [String: String]
  /// The largest body accepted, in bytes.
  public var bodyLimit: Int
  public var logger: Logger
  /// Where the body is read from (standard input) and the answer written to (standard output).
  public var input: Int32
  public var output: Int32

  public init(
    environment: [String: String], bodyLimit: Int, logger: Logger, input: Int32 = 0, output: Int32 = 1
  ) {
    self.environment = environment
    self.bodyLimit = bodyLimit
    self.logger = logger
    self.input = input
    self.output = output
  }

  /// Reads the request, calls `handler` once, and returns when the answer is written.
  public func serve(_ handler: Handler) {
    var channel = CGIChannel(environment: environment, input: input, output: output)
    Exchange.serve(&channel, bodyLimit: bodyLimit, logger: logger, handler: handler)
  }

  /// Writes `response` to `output` without reading a request: for an answer that must go out
  /// before there is a handler (the configuration is broken). False when the write failed.
  @discardableResult
  public static func answer(_ response: Response, output: Int32 = 1) -> Bool {
    writeAll(output, response.encoded())
  }
}
