import CCurl
import Platform
import Synchronization

/// One HTTPS request for the push providers.
struct HTTPRequest: Sendable {
  /// The full URL.
  var url: String
  /// Header lines, `name: value`.
  var headers: [String]
  /// The POST body.
  var body: [UInt8]
  /// A CA bundle to trust instead of the system's.
  var caFile: String?
  /// The whole transfer's limit, connect included (at least 1 s; the connect alone at most 10 s), ms. A slot of
  /// ``DeliverySlots`` gives an endpoint nobody vouches for 3 s.
  var timeoutMs: Int = 30_000
  /// Refuse to connect to an address that is not public unicast (`IPAddress.reservedRange`: loopback,
  /// private, link-local, multicast, …), whatever name resolved to it. Checked by libcurl's opensocket
  /// callback on each address it is about to connect to, before the socket exists (nothing is sent there;
  /// a name with public addresses too is reached through those). When every address was refused the
  /// transfer ends with `ProviderResponse.refusedAddress`. For Web Push and UnifiedPush endpoints, whose host
  /// a client chose, unless `[messaging.webpush] allowPrivateEndpoints`; FCM and APNs hosts come from the
  /// configuration. A connection already open to the host is reused without a new check (it was checked
  /// when it opened).
  var refusePrivateAddresses = false
}

/// One mail for the forwarder: SMTP(S) through the operator's server (`[forward.email]`).
struct MailRequest: Sendable {
  /// `smtps://host[:port]` (TLS from the start) or `smtp://host[:port]` (STARTTLS, required).
  var url: String
  /// The envelope sender (`MAIL FROM`).
  var from: String
  /// The one recipient (`RCPT TO`).
  var to: String
  /// The whole message: header lines, an empty line, the body; CRLF line ends.
  var message: [UInt8]
  /// The SMTP login, nil for none.
  var username: String?
  var password: String?
  /// A CA bundle to trust instead of the system's.
  var caFile: String?
  /// The whole transfer's limit, connect included (at least 1 s; the connect alone at most 10 s), ms. A slot of
  /// ``DeliverySlots`` gives an endpoint nobody vouches for 3 s.
  var timeoutMs: Int = 60_000
}

/// libcurl's process-wide initialisation, done once.
enum CurlGlobal {
  private static let state = Mutex<Bool>(false)

  /// Calls `curl_global_init` the first time (call it before starting threads).
  static func initialize() {
    state.withLock { done in
      guard !done else { return }
      curl_global_init(Int(CURL_GLOBAL_DEFAULT))
      done = true
    }
  }
}

/// The multi handle's address, for `curl_multi_wakeup` from other threads (which libcurl allows).
struct CurlWakeHandle: @unchecked Sendable {
  fileprivate let multi: UnsafeMutableRawPointer

  /// Interrupts a `curl_multi_poll` on the owning thread (or makes the next one return at once).
  func wakeup() {
    _ = curl_multi_wakeup(multi)
  }
}

/// One curl multi handle and its transfers, owned by one thread (everything but `wakeHandle`).
///
/// HTTP/2 over TLS with multiplexing: transfers to one host share one connection
/// (`CURLMOPT_PIPELINING` = `CURLPIPE_MULTIPLEX`, `CURLOPT_PIPEWAIT`, at most one connection per
/// host), which stays open between pushes. Easy handles are pooled and reused. This file and
/// `SigningKey.swift` (and `CurlEasy.swift`, the operator tools' blocking client) are the only places in the
/// module that touch C pointers.
final class CurlMulti {
  /// Transfer results that mean the connection went away under the request.
  static let connectionLostCodes: Set<CURLcode> = [
    CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING,
  ]

  /// Bytes of a response body kept (the rest is counted and dropped).
  /// `scheme://host[:port]` of `url`, without its path and query (which may hold a secret: a Web Push endpoint's
  /// path, an ntfy topic, a webhook's token), for logs and errors.
  static func origin(of url: String) -> String {
    let bytes = Array(url.utf8)
    var start = 0
    if let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: Array("://".utf8)) {
      start = colon + 3
    }
    let end = bytes[start...].firstIndex {
      $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
    }
    return String(decoding: bytes[..<(end ?? bytes.count)], as: UTF8.self)
  }

  static let maxResponseBytes = 65_536

  private let multi: UnsafeMutableRawPointer
  private var active: [UnsafeMutableRawPointer: Transfer] = [:]
  private var idle: [UnsafeMutableRawPointer] = []
  private var closed = false

  /// The transfers started and not finished yet.
  var runningCount: Int { active.count }

  /// For `curl_multi_wakeup` from another thread.
  let wakeHandle: CurlWakeHandle

  init() throws(PushError) {
    CurlGlobal.initialize()
    guard let multi = curl_multi_init() else { throw PushError("curl_multi_init failed") }
    self.multi = multi
    wakeHandle = CurlWakeHandle(multi: multi)
    _ = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX)
    _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, 1)
    // FCM, APNs (two environments), the OAuth host, and the Web Push services' origins.
    _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, 32)
  }

  deinit {
    close()
  }

  /// Aborts every transfer and frees the handles. Call it on the owning thread.
  func close() {
    guard !closed else { return }
    closed = true
    for (easy, transfer) in active {
      curl_multi_remove_handle(multi, easy)
      transfer.release()
      curl_easy_cleanup(easy)
    }
    active.removeAll()
    for easy in idle { curl_easy_cleanup(easy) }
    idle.removeAll()
    curl_multi_cleanup(multi)
  }

  /// Starts `request`; `tag` comes back with its response from `perform()`.
  func start(_ request: HTTPRequest, tag: Int) throws(PushError) {
    let transfer = Transfer(tag: tag, body: request.body)
    for header in request.headers { transfer.headers = curl_slist_append(transfer.headers, header) }
    try add(transfer, url: request.url, timeoutMs: request.timeoutMs, caFile: request.caFile) {
      easy, user, check in
      check(ccurl_easy_setopt_long(easy, CURLOPT_POST, 1))
      check(ccurl_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)))
      check(ccurl_easy_setopt_ptr(easy, CURLOPT_POSTFIELDS, transfer.body.baseAddress))
      check(ccurl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, transfer.headers))
      check(ccurl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)))
      check(ccurl_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1))
      check(ccurl_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1))
      check(ccurl_easy_setopt_string(easy, CURLOPT_USERAGENT, "aprs-cloud-push/1"))
      if request.refusePrivateAddresses {
        check(ccurl_easy_setopt_opensocket(easy, curlOpenSocket))
        check(ccurl_easy_setopt_ptr(easy, CURLOPT_OPENSOCKETDATA, user))
      }
    }
  }

  /// Starts sending `request` (SMTP over TLS: `smtps://`, or `smtp://` with STARTTLS required); `tag` comes back
  /// with its result from `perform()`: status 250 when the server took the mail, else the transport error with
  /// the server's last reply code as `status` (550 for a refused recipient), 0 when it never answered, and its last
  /// reply line as `mailReply` (for the enhanced status code, RFC 3463, which libcurl's error text leaves out: read
  /// through `CURLOPT_DEBUGFUNCTION`, which libcurl hands every reply line as `CURLINFO_HEADER_IN`).
  func startMail(_ request: MailRequest, tag: Int) throws(PushError) {
    let transfer = Transfer(tag: tag, body: request.message)
    transfer.isMail = true
    transfer.headers = curl_slist_append(transfer.headers, "<" + request.to + ">")
    try add(transfer, url: request.url, timeoutMs: request.timeoutMs, caFile: request.caFile) {
      easy, user, check in
      check(ccurl_easy_setopt_string(easy, CURLOPT_MAIL_FROM, "<" + request.from + ">"))
      check(ccurl_easy_setopt_slist(easy, CURLOPT_MAIL_RCPT, transfer.headers))
      check(ccurl_easy_setopt_long(easy, CURLOPT_UPLOAD, 1))
      check(ccurl_easy_setopt_off(easy, CURLOPT_INFILESIZE_LARGE, curl_off_t(request.message.count)))
      check(ccurl_easy_setopt_write(easy, CURLOPT_READFUNCTION, curlRead))
      check(ccurl_easy_setopt_ptr(easy, CURLOPT_READDATA, user))
      check(ccurl_easy_setopt_long(easy, CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue)))
      if let username = request.username { check(ccurl_easy_setopt_string(easy, CURLOPT_USERNAME, username)) }
      if let password = request.password { check(ccurl_easy_setopt_string(easy, CURLOPT_PASSWORD, password)) }
      check(ccurl_easy_setopt_debug(easy, curlDebug))
      check(ccurl_easy_setopt_ptr(easy, CURLOPT_DEBUGDATA, user))
      check(ccurl_easy_setopt_long(easy, CURLOPT_VERBOSE, 1))
    }
  }

  /// Puts `transfer` on the wire: a pooled (or new) easy handle with the options every transfer shares (URL,
  /// timeouts, the error buffer, the response sink, the CA bundle) and those `configure` sets (it reports each
  /// `CURLcode` to its third argument); on any failure the transfer's buffers are freed and nothing is started.
  private func add(
    _ transfer: Transfer, url: String, timeoutMs: Int, caFile: String?,
    configure: (UnsafeMutableRawPointer, UnsafeMutableRawPointer, (CURLcode) -> Void) -> Void
  ) throws(PushError) {
    guard !closed else {
      transfer.release()
      throw PushError("the HTTP client is closed")
    }
    let easy: UnsafeMutableRawPointer
    if let reused = idle.popLast() {
      curl_easy_reset(reused)
      easy = reused
    } else {
      guard let created = curl_easy_init() else {
        transfer.release()
        throw PushError("curl_easy_init failed")
      }
      easy = created
    }
    let user = Unmanaged.passUnretained(transfer).toOpaque()
    var ok = true
    func check(_ code: CURLcode) { if code != CURLE_OK { ok = false } }
    check(ccurl_easy_setopt_string(easy, CURLOPT_URL, url))
    check(ccurl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
    let limit = max(1_000, timeoutMs)
    check(ccurl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, limit))
    check(ccurl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, min(10_000, limit)))
    check(ccurl_easy_setopt_ptr(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer))
    check(ccurl_easy_setopt_write(easy, CURLOPT_WRITEFUNCTION, curlWrite))
    check(ccurl_easy_setopt_ptr(easy, CURLOPT_WRITEDATA, user))
    if let caFile { check(ccurl_easy_setopt_string(easy, CURLOPT_CAINFO, caFile)) }
    configure(easy, user, check)
    guard ok, curl_multi_add_handle(multi, easy) == CURLM_OK else {
      transfer.release()
      curl_easy_cleanup(easy)
      // The origin only: a Web Push endpoint's path, an ntfy topic or a webhook's path may be secrets.
      throw PushError("cannot start a request to \(CurlMulti.origin(of: url))")
    }
    active[easy] = transfer
  }

  /// Waits for network activity, a `wakeup()`, libcurl's own timers or `timeoutMs`.
  func wait(timeoutMs: Int) {
    var ready: Int32 = 0
    _ = curl_multi_poll(multi, nil, 0, Int32(max(0, min(timeoutMs, 60_000))), &ready)
  }

  /// Drives every transfer and returns the ones that finished.
  func perform() -> [(tag: Int, response: ProviderResponse)] {
    var running: Int32 = 0
    _ = curl_multi_perform(multi, &running)
    var finished: [(tag: Int, response: ProviderResponse)] = []
    var left: Int32 = 0
    while let message = curl_multi_info_read(multi, &left) {
      guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
      let result = message.pointee.data.result
      guard let transfer = active.removeValue(forKey: easy) else {
        curl_multi_remove_handle(multi, easy)
        continue
      }
      var response = ProviderResponse(status: 0)
      if result == CURLE_OK {
        var status = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        // The header as sent (seconds or an HTTP date), judged later by the sender's own clock; libcurl's
        // CURLINFO_RETRY_AFTER would turn a date into seconds by the system clock.
        var header: UnsafeMutablePointer<curl_header>?
        var retryAfter: RetryAfter?
        if curl_easy_header(easy, "Retry-After", 0, UInt32(CURLH_HEADER), -1, &header) == CURLHE_OK,
          let value = header?.pointee.value
        {
          retryAfter = RetryAfter(header: String(cString: value))
        }
        response = ProviderResponse(status: status, body: transfer.response, retryAfter: retryAfter)
        // A redirect's target, named in the answer and never followed (RFC 9110 §10.2.2).
        if (300...399).contains(status),
          curl_easy_header(easy, "Location", 0, UInt32(CURLH_HEADER), -1, &header) == CURLHE_OK,
          let value = header?.pointee.value
        {
          response.location = String(String(cString: value).prefix(300))
        }
      } else {
        let detail = String(cString: transfer.errorBuffer)
        let summary = String(cString: curl_easy_strerror(result))
        response.transportError = detail.isEmpty ? summary : detail
        response.connectionLost = CurlMulti.connectionLostCodes.contains(result)
        if transfer.isMail {
          // The SMTP server's last reply (550 for a refused recipient), when it answered at all.
          var code = 0
          _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code)
          response.status = code
          // The reply that carried that code (libcurl may have said QUIT since: `221 Bye` comes last).
          response.mailReply = transfer.replies.last { code > 0 && $0.hasPrefix(String(code)) }
        }
        // Refused by `curlOpenSocket`, and no other address of the host was tried.
        if transfer.opened == 0 { response.refusedAddress = transfer.refused }
      }
      curl_multi_remove_handle(multi, easy)
      transfer.release()
      if idle.count < 256 { idle.append(easy) } else { curl_easy_cleanup(easy) }
      finished.append((transfer.tag, response))
    }
    return finished
  }
}

/// The buffers of one transfer, alive until it finishes.
private final class Transfer {
  let tag: Int
  let body: UnsafeMutableBufferPointer<UInt8>
  let errorBuffer: UnsafeMutablePointer<CChar>
  var headers: UnsafeMutablePointer<curl_slist>?
  var response: [UInt8] = []
  var dropped = 0
  /// The first address `curlOpenSocket` refused, and the sockets it opened.
  var refused: IPAddress?
  var opened = 0
  /// An SMTP upload: `body` is read out from `sent` on.
  var isMail = false
  var sent = 0
  /// A mail's last reply lines from the server (`curlDebug`), at most 8 of at most 300 bytes each.
  var replies: [String] = []

  init(tag: Int, body: [UInt8]) {
    self.tag = tag
    self.body = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, body.count))
    _ = self.body.initialize(from: body)
    errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
  }

  /// Frees the C-side buffers (after the easy handle stopped using them).
  func release() {
    curl_slist_free_all(headers)
    headers = nil
    body.deallocate()
    errorBuffer.deallocate()
  }
}

/// `CURLOPT_WRITEFUNCTION`: appends the received bytes to the transfer's response.
private let curlWrite: ccurl_write_callback = { data, size, count, user in
  let length = size * count
  guard let data, let user else { return length }
  let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
  let room = CurlMulti.maxResponseBytes - transfer.response.count
  if room > 0 {
    let raw = UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: min(room, length))
    transfer.response.append(contentsOf: raw)
  }
  transfer.dropped += max(0, length - max(0, room))
  return length
}

/// `CURLOPT_READFUNCTION` of a mail: the next bytes of the transfer's message.
private let curlRead: ccurl_write_callback = { buffer, size, count, user in
  guard let buffer, let user else { return 0 }
  let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
  let length = min(size * count, transfer.body.count - transfer.sent)
  guard length > 0, let base = transfer.body.baseAddress else { return 0 }
  UnsafeMutableRawPointer(buffer).copyMemory(from: base + transfer.sent, byteCount: length)
  transfer.sent += length
  return length
}

/// `CURLOPT_DEBUGFUNCTION` of a mail: keeps the server's last reply lines (`CURLINFO_HEADER_IN`); nothing else
/// libcurl reports is kept or printed.
private let curlDebug: curl_debug_callback = { _, type, data, size, user in
  guard type == CURLINFO_HEADER_IN, let data, let user, size > 0 else { return 0 }
  let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
  let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: min(size, 300))
  let line = String(decoding: bytes, as: UTF8.self).trimmingTrailingLineEnd()
  if !line.isEmpty {
    if transfer.replies.count >= 8 { transfer.replies.removeFirst() }
    transfer.replies.append(line)
  }
  return 0
}

extension String {
  /// Without the CR and LF at its end.
  fileprivate func trimmingTrailingLineEnd() -> String {
    var scalars = unicodeScalars[...]
    while let last = scalars.last, last == "\r" || last == "\n" { scalars = scalars.dropLast() }
    return String(String.UnicodeScalarView(scalars))
  }
}

/// `CURLOPT_OPENSOCKETFUNCTION` of a transfer with `refusePrivateAddresses`: no socket for an address that is
/// not public unicast (noted on the transfer, and libcurl goes on to the host's next address or fails with
/// `CURLE_COULDNT_CONNECT`); libcurl's own socket otherwise.
private let curlOpenSocket: curl_opensocket_callback = { user, _, address in
  guard let user, let address else { return CURL_SOCKET_BAD }
  let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
  var bytes = [UInt8](repeating: 0, count: 16)
  let count = Int(ccurl_sockaddr_ip(address, &bytes))
  guard let ip = IPAddress(bytes: Array(bytes.prefix(count))), ip.isPublic else {
    if transfer.refused == nil {
      transfer.refused = IPAddress(bytes: Array(bytes.prefix(count)))
    }
    return CURL_SOCKET_BAD
  }
  let socket = ccurl_open_socket(address)
  if socket != CURL_SOCKET_BAD { transfer.opened += 1 }
  return socket
}
