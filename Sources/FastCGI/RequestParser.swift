/// Reads one connection's FastCGI records as they arrive, however they are cut, and says when a
/// request's parameters are complete and when the request is ready for the handler. Pure: bytes in,
/// events out; the server does the reading.
///
/// What it accepts, and what it does with records no web server sends (the same fates libfcgi gave
/// them, pinned by the FastCGI tests):
/// - Version 1 only; a FCGI_BEGIN_REQUEST whose content is not 8 bytes, or a role other than
///   responder, authorizer or filter, ends the connection (`invalid`).
/// - Records for another request id, FCGI_STDIN before the parameters end, FCGI_ABORT_REQUEST before
///   the request is handed over, and unknown types are skipped. Management records (request id 0)
///   are answered (`takeReplies()`): FCGI_GET_VALUES_RESULT or FCGI_UNKNOWN_TYPE.
/// - FCGI_PARAMS content is collected (at most `paramsLimit` bytes) and decoded when the empty
///   record ends it, or when the connection ends first (then what came counts).
/// - The body is checked against the limit before any of it is kept (`BodyLength`): too large or
///   an invalid `CONTENT_LENGTH` makes the request ready at once with the refusal, a byte without a
///   `CONTENT_LENGTH` at that byte; otherwise it is ready when `CONTENT_LENGTH` bytes and the empty
///   FCGI_STDIN record are in, or when the connection ends (the body ended early).
/// - After the request is handed over, FCGI_ABORT_REQUEST for it reports `aborted`; all else is
///   skipped until `reset()` (a kept connection's next request).
struct RequestParser {
  /// What `feed`, `next` and `endOfInput` found.
  enum Event: Equatable {
    /// Nothing to act on until more bytes come.
    case needMore
    /// The parameters are complete (`takeParameters()`); the body comes next.
    case started
    /// The request is complete; its body, or why there is none.
    case ready(Result<[UInt8], RequestBodyError>)
    /// The web server aborted the request after it was handed over.
    case aborted
    /// The connection ended without a request, or broke the protocol: close it.
    case invalid(String)
    /// The connection ended after the request was handed over.
    case ended
  }

  enum Phase: Equatable {
    case awaitingBegin, params, stdin, complete
  }

  /// Most bytes of FCGI_PARAMS content one request may send (nginx sends a few hundred).
  static let paramsLimit = 1 << 20
  private static let contentLength = ParamsDecoder.Names(["CONTENT_LENGTH"])

  /// The largest body accepted, in bytes.
  let bodyLimit: Int
  private(set) var phase = Phase.awaitingBegin
  /// The request id of the request being read (valid from FCGI_BEGIN_REQUEST on).
  private(set) var requestID: UInt16 = 0
  /// Whether the web server keeps the connection for another request (`FCGI_KEEP_CONN`).
  private(set) var keepConnection = false
  /// Whether the empty FCGI_STDIN record that ends the request's body has been read: until then the
  /// web server may still be sending, and closing would cut it off.
  private(set) var stdinEnded = false

  private var input: [UInt8] = []
  private var position = 0
  private var record: Current?
  private var paramsBytes: [UInt8] = []
  private var parameters: [UInt8]?
  private var bodyLength = BodyLength.absent
  private var body: [UInt8] = []
  private var replies: [UInt8] = []
  /// The content of a management or begin record, gathered until it is complete.
  private var collected: [UInt8] = []

  /// The record being read: its header, how much of its content and padding is still to come, and
  /// where its content goes.
  private struct Current {
    var type: UInt8
    var requestID: UInt16
    var contentLength: Int
    var remaining: Int
    var padding: Int
    var route: Route
    var acted = false
  }

  private enum Route {
    case skip, collect, params, stdin
  }

  init(bodyLimit: Int) {
    self.bodyLimit = bodyLimit
  }

  /// Takes `bytes` in and reads on.
  mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Event {
    if position == input.count {
      input.removeAll(keepingCapacity: input.capacity <= 65_536)
      position = 0
    } else if position > 0 {
      input.removeFirst(position)
      position = 0
    }
    input.append(contentsOf: bytes)
    return next()
  }

  /// Reads on in the bytes already taken in (after `started`, or to find what comes after `ready`).
  mutating func next() -> Event {
    while true {
      if phase == .stdin, let refusal = immediateRefusal() {
        phase = .complete
        return .ready(.failure(refusal))
      }
      if record == nil {
        guard input.count - position >= Record.headerLength else { return .needMore }
        if let problem = startRecord() { return .invalid(problem) }
      }
      if let event = readContent() { return event }
      guard var current = record else { continue }
      if current.remaining > 0 { return .needMore }
      if !current.acted {
        current.acted = true
        record = current
        if let event = act(current) { return event }
        guard record != nil else { continue }
        current = record!
      }
      let skipped = min(current.padding, input.count - position)
      position += skipped
      current.padding -= skipped
      record = current
      if current.padding > 0 { return .needMore }
      record = nil
    }
  }

  /// The connection ended (read returned 0 or failed): what the bytes so far amount to.
  mutating func endOfInput() -> Event {
    switch phase {
    case .awaitingBegin:
      return .invalid("the connection ended before a request")
    case .params:
      record = nil
      if let problem = finishParams() { return .invalid(problem) }
      return .started
    case .stdin:
      record = nil
      if let refusal = immediateRefusal() {
        phase = .complete
        return .ready(.failure(refusal))
      }
      phase = .complete
      if case .exact(let length) = bodyLength, body.count < length {
        let received = body.count
        body = []
        return .ready(.failure(.endedEarly(received: received, expected: length)))
      }
      return .ready(.success(takeBody()))
    case .complete:
      return .ended
    }
  }

  /// The FCGI_PARAMS bytes (well-formed name-value pairs), once `started` was reported (then they
  /// are handed over and forgotten).
  mutating func takeParameters() -> [UInt8] {
    defer { parameters = nil }
    return parameters ?? []
  }

  /// The answers to management records read so far (then forgotten).
  mutating func takeReplies() -> [UInt8] {
    defer { replies = [] }
    return replies
  }

  /// Whether bytes that came after the request are waiting to be read.
  var hasBufferedInput: Bool { position < input.count }

  /// Forgets the request that was answered and gets ready for the next one on a kept connection
  /// (bytes already taken in stay).
  mutating func reset() {
    phase = .awaitingBegin
    requestID = 0
    keepConnection = false
    stdinEnded = false
    paramsBytes = []
    parameters = nil
    bodyLength = .absent
    body = []
  }

  /// Drops every buffer (a parked or answered request keeps only its state, not its bytes).
  mutating func releaseBuffers() {
    if position == input.count {
      input = []
      position = 0
    }
    paramsBytes = []
    body = []
  }

  // MARK: Records

  /// Reads the header at `position`; returns why the connection must end, if it must.
  private mutating func startRecord() -> String? {
    let base = position
    guard input[base] == Record.version else { return "FastCGI version \(input[base]) is not 1" }
    let type = input[base + 1]
    let id = UInt16(input[base + 2]) << 8 | UInt16(input[base + 3])
    let length = Int(input[base + 4]) << 8 | Int(input[base + 5])
    let padding = Int(input[base + 6])
    position += Record.headerLength
    var route = Route.skip
    if id == 0 {
      route = .collect
    } else {
      switch type {
      case Record.beginRequest where phase == .awaitingBegin:
        guard length == 8 else { return "FCGI_BEGIN_REQUEST with \(length) bytes of content instead of 8" }
        route = .collect
      case Record.params where phase == .params && id == requestID:
        route = .params
      case Record.stdin where phase == .stdin && id == requestID:
        route = .stdin
      case Record.abortRequest where phase == .complete && id == requestID:
        route = .collect
      case Record.stdin where phase == .complete && id == requestID && length == 0:
        stdinEnded = true
      default:
        route = .skip
      }
    }
    record = Current(
      type: type, requestID: id, contentLength: length, remaining: length, padding: padding, route: route)
    if route == .collect { collected = [] }
    return nil
  }

  /// Moves the record's content that has arrived to where it goes. Returns an event when the body
  /// decides the request on the spot (a byte without `CONTENT_LENGTH`, or the parameters overflow).
  private mutating func readContent() -> Event? {
    guard var current = record, current.remaining > 0 else { return nil }
    let count = min(current.remaining, input.count - position)
    guard count > 0 else { return nil }
    let slice = input[position..<position + count]
    switch current.route {
    case .skip:
      break
    case .collect:
      collected.append(contentsOf: slice)
    case .params:
      guard paramsBytes.count + count <= Self.paramsLimit else {
        return .invalid("the parameters are larger than \(Self.paramsLimit) bytes")
      }
      paramsBytes.append(contentsOf: slice)
    case .stdin:
      switch bodyLength {
      case .absent:
        // A body without a length: refused at its first byte.
        position += count
        current.remaining -= count
        current.route = .skip
        record = current
        phase = .complete
        body = []
        return .ready(.failure(.lengthRequired))
      case .exact(let length):
        let wanted = min(count, length - body.count)
        body.append(contentsOf: slice.prefix(wanted))
        if body.count == length {
          position += count
          current.remaining -= count
          current.route = .skip
          record = current
          return finishExactBody()
        }
      case .tooLarge, .invalid:
        break
      }
    }
    position += count
    current.remaining -= count
    record = current
    return nil
  }

  /// The body has its `CONTENT_LENGTH` bytes: the request is ready. The empty FCGI_STDIN record that
  /// ends the stream is taken along when it is already here (nginx sends it in the same write).
  private mutating func finishExactBody() -> Event {
    phase = .complete
    if let current = record, current.remaining == 0, current.padding <= input.count - position {
      position += current.padding
      record = nil
      let base = position
      if input.count - base >= Record.headerLength, input[base] == Record.version,
        input[base + 1] == Record.stdin,
        UInt16(input[base + 2]) << 8 | UInt16(input[base + 3]) == requestID, input[base + 4] == 0,
        input[base + 5] == 0, input.count - base - Record.headerLength >= Int(input[base + 6])
      {
        position += Record.headerLength + Int(input[base + 6])
        stdinEnded = true
      }
    }
    return .ready(.success(takeBody()))
  }

  /// What a record whose content is complete means.
  private mutating func act(_ current: Current) -> Event? {
    if current.requestID == 0 {
      replies += Record.managementReply(type: current.type, content: collected)
      collected = []
      return nil
    }
    switch current.route {
    case .collect where current.type == Record.beginRequest:
      let role = UInt16(collected[0]) << 8 | UInt16(collected[1])
      guard Record.roles.contains(role) else { return .invalid("FastCGI role \(role) is not served") }
      keepConnection = collected[2] & Record.keepConnection != 0
      requestID = current.requestID
      collected = []
      phase = .params
      return nil
    case .collect where current.type == Record.abortRequest:
      collected = []
      return .aborted
    case .params where current.contentLength == 0:
      if let problem = finishParams() { return .invalid(problem) }
      return .started
    case .stdin where current.contentLength == 0:
      phase = .complete
      stdinEnded = true
      if case .exact(let length) = bodyLength, body.count < length {
        let received = body.count
        body = []
        return .ready(.failure(.endedEarly(received: received, expected: length)))
      }
      return .ready(.success(takeBody()))
    default:
      return nil
    }
  }

  /// Decodes the parameters and classifies the body; returns why the connection must end, if it must.
  private mutating func finishParams() -> String? {
    do {
      try ParamsDecoder.check(paramsBytes[...])
    } catch {
      return error.reason
    }
    let contentLength = ParamsDecoder.values(of: Self.contentLength, in: paramsBytes[...])[0]
    parameters = paramsBytes
    paramsBytes = []
    bodyLength = BodyLength.classify(contentLength, limit: bodyLimit)
    if case .exact(let length) = bodyLength { body.reserveCapacity(length) }
    phase = .stdin
    return nil
  }

  /// The refusal a `CONTENT_LENGTH` earns before any of the body is read, if it earns one.
  private func immediateRefusal() -> RequestBodyError? {
    switch bodyLength {
    case .tooLarge: .tooLarge(limit: bodyLimit)
    case .invalid: .invalidLength
    case .absent, .exact: nil
    }
  }

  private mutating func takeBody() -> [UInt8] {
    defer { body = [] }
    return body
  }
}
