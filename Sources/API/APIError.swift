/// Every way an API request can fail, each with its HTTP status and a human-readable reason.
///
/// The app decides success only by the absence of `error`, so every failure becomes
/// `{"error":"<message>"}` with the status below (docs/protocol.md, "Errors").
public enum APIError: Error, Equatable, Sendable {
  /// 400: malformed body or an invalid field; the message names the field.
  case badRequest(String)
  /// 401: the passcode does not match the callsign.
  case unauthorized
  /// 401: the station key presented is not the key of the station's claim (the message says why).
  case wrongStationKey(String)
  /// 403: the request needs what the caller does not have (the station key of a claimed station, a claim, a
  /// request from the server's own site); the message says which.
  case forbidden(String)
  /// 409: the request conflicts with the station's state (a claim of a claimed station).
  case conflict(String)
  /// 404: no such endpoint.
  case notFound(path: String)
  /// 404: the endpoint needs a registered station and this one is not (`/v1/send`, `/v1/settings`).
  case stationNotFound(String)
  /// 404: the station has no sent message with this `clientId` (`/v1/send` `cancel`).
  case sendNotFound(clientId: String)
  /// 404: the station has no forward target with this `id` (`/v1/forward/confirm`).
  case forwardTargetNotFound(id: String)
  /// 405: the endpoint exists but not for this method.
  case methodNotAllowed(allowed: String)
  /// 413: the body is larger than the limit.
  case payloadTooLarge(limit: Int)
  /// 429: too many requests of this kind for this station (or client address); retry after the given
  /// seconds.
  case rateLimited(what: String, retryAfterSeconds: Int)
  /// 503: the database is busy or unavailable.
  case unavailable(String)
  /// 503: a write the request needs cannot happen now for a fault of the storage (``Store/StorageFault``: the disk
  /// full, the write lock held past the busy timeout, an I/O error, a read-only file); `Retry-After` says when to
  /// try again. Nothing of the request was stored.
  case cannotStore(String, retryAfterSeconds: Int)
  /// 503: this server does not offer the request's service now, and only its operator can change that
  /// (`[send] enabled = false`, an APRS-IS login that is receive-only or unverified); the message says which.
  /// `Retry-After` is an hour: retrying soon does not help.
  case notOffered(String)
  /// 503: a global cap of the server is full (`[limits]`); the message says which. Retrying soon does
  /// not help, so `Retry-After` is an hour (the next prune may free room).
  case full(String)
  /// 500: anything else (never for bad input).
  case internalError(String)

  /// The HTTP status code.
  public var status: Int {
    switch self {
    case .badRequest: 400
    case .unauthorized, .wrongStationKey: 401
    case .forbidden: 403
    case .notFound, .stationNotFound, .sendNotFound, .forwardTargetNotFound: 404
    case .conflict: 409
    case .methodNotAllowed: 405
    case .payloadTooLarge: 413
    case .rateLimited: 429
    case .unavailable, .cannotStore, .notOffered, .full: 503
    case .internalError: 500
    }
  }

  /// The text of `{"error": …}`.
  public var message: String {
    switch self {
    case .badRequest(let reason): reason
    case .unauthorized: "auth does not match the callsign's APRS-IS passcode"
    case .notFound(let path): "no such endpoint: \(path.prefix(80))"
    case .stationNotFound(let station): "\(station) is not registered; register it first"
    case .sendNotFound(let clientId):
      "cancel: no message sent with clientId \"\(clientId.prefix(64))\" (unknown, or it rolled off)"
    case .forwardTargetNotFound(let id): "id: the station has no forward target \"\(id.prefix(16))\""
    case .methodNotAllowed(let allowed): "method not allowed; use \(allowed)"
    case .payloadTooLarge(let limit): "request body is larger than \(limit) bytes"
    case .rateLimited(let what, let seconds): "too many \(what); retry in \(seconds) s"
    case .unavailable(let reason): "storage is unavailable: \(reason)"
    case .cannotStore(let reason, let seconds): "cannot store: \(reason); retry in \(seconds) s"
    case .notOffered(let reason), .full(let reason): reason
    case .wrongStationKey(let reason), .forbidden(let reason), .conflict(let reason): reason
    case .internalError(let reason): "internal error: \(reason)"
    }
  }

  /// Headers the status calls for (`Allow` on 405, `Retry-After` on 429 and 503).
  public var headers: [(name: String, value: String)] {
    switch self {
    case .methodNotAllowed(let allowed): [("Allow", allowed)]
    // RFC 6750 §3: a refused bearer token names its scheme.
    case .wrongStationKey: [("WWW-Authenticate", #"Bearer realm="aprs-cloud", error="invalid_token""#)]
    case .rateLimited(_, let seconds): [("Retry-After", String(seconds))]
    case .unavailable: [("Retry-After", "1")]
    case .cannotStore(_, let seconds): [("Retry-After", String(seconds))]
    case .notOffered, .full: [("Retry-After", "3600")]
    default: []
    }
  }
}
