import APRS
import CompanionFiles
import Store

extension APIHandler {
  /// The endpoints, by path. ``route`` is the table: each endpoint's methods, who may call it, what it wakes in the
  /// listener and what answers it (docs/design.md "Who may do what").
  enum Endpoint: String, CaseIterable {
    case register = "/v1/register"
    case heartbeat = "/v1/heartbeat"
    case sync = "/v1/sync"
    case unregister = "/v1/unregister"
    case avatars = "/v1/avatars"
    case send = "/v1/send"
    case settings = "/v1/settings"
    case claim = "/v1/claim"
    case read = "/v1/read"
    case export = "/v1/export"
    case audit = "/v1/audit"
    case forwardConfirm = "/v1/forward/confirm"
    case health = "/health"
    case metrics = "/metrics"
    case status = "/status"
    case info = "/v1/info"

    /// The table row of this endpoint.
    var route: Route {
      switch self {
      case .register:
        Route(
          .caller(.station) { (handler: APIHandler, caller: Caller) throws(APIError) in
            try .response(handler.register(caller))
          },
          wakes: [.registrations])
      case .heartbeat:
        Route(
          .caller(.station) { (handler: APIHandler, caller: Caller) throws(APIError) in
            try .response(handler.heartbeat(caller))
          },
          wakes: [.registrations])
      case .sync:
        Route(
          .caller(.station) { (handler: APIHandler, caller: Caller) throws(APIError) in
            try handler.sync(caller)
          })
      case .unregister:
        Route(
          .caller(.station) { (handler: APIHandler, caller: Caller) throws(APIError) in
            try .response(handler.unregister(caller))
          },
          wakes: [.registrations])
      case .avatars:
        Route(
          .caller(.station) { (handler: APIHandler, caller: Caller) throws(APIError) in
            try .response(handler.avatars(caller.body, station: caller.station))
          })
      case .send:
        Route(
          .caller(.owner("sending messages")) { (handler: APIHandler, caller: Caller) throws(APIError) in
            try .response(
              handler.send(caller.body, station: caller.station, client: caller.client, now: caller.now))
          },
          wakes: [.sends])
      case .settings:
        Route(
          .caller(.owner("reading or changing settings")) {
            (handler: APIHandler, caller: Caller) throws(APIError) in
            try .response(
              handler.settings(caller.body, station: caller.station, client: caller.client, now: caller.now))
          },
          wakes: [.registrations, .sends])
      case .claim: Route(.claimant, wakes: [.registrations])
      case .read:
        Route(
          .caller(.devices("marking messages read")) {
            (handler: APIHandler, caller: Caller) throws(APIError) in
            try .response(handler.read(caller.body, station: caller.station, now: caller.now))
          })
      case .export:
        Route(
          .caller(.owner("exporting the station")) { (handler: APIHandler, caller: Caller) throws(APIError) in
            try .response(handler.export(station: caller.station, now: caller.now))
          })
      case .audit:
        Route(
          .caller(.owner("reading the audit trail")) {
            (handler: APIHandler, caller: Caller) throws(APIError) in
            try .response(handler.audit(station: caller.station))
          })
      case .forwardConfirm:
        Route(
          .caller(.owner("confirming forward targets")) {
            (handler: APIHandler, caller: Caller) throws(APIError) in
            try .response(
              handler.forwardConfirm(
                caller.body, station: caller.station, client: caller.client, now: caller.now))
          })
      case .health: Route(methods: ["GET", "HEAD"], allow: "GET", .open { $0.health() })
      case .metrics: Route(methods: ["GET"], allow: "GET", .privateListener { $0.metrics() })
      case .status: Route(methods: ["GET", "HEAD"], allow: "GET", .privateListener { $0.statusPage() })
      case .info: Route(methods: ["GET", "HEAD", "POST"], allow: "GET, HEAD, POST", .open { $0.info() })
      }
    }
  }

  /// One row of the endpoint table.
  struct Route {
    /// The methods taken.
    let methods: Set<String>
    /// The methods as a 405's `Allow` header lists them.
    let allow: String
    /// Who may call it and what answers.
    let access: Access
    /// What a successful request wakes in the listener, none for most (a sync wakes it only when it marked pulls:
    /// ``noteSync(_:)``; settings also wake the sends: a net's join or leave).
    let wakes: [ListenerWake]

    init(
      methods: Set<String> = ["POST"], allow: String = "POST", _ access: Access, wakes: [ListenerWake] = []
    ) {
      self.methods = methods
      self.allow = allow
      self.access = access
      self.wakes = wakes
    }
  }

  /// Who may call an endpoint, and its answer.
  enum Access {
    /// Anyone, with no station in the body.
    case open((APIHandler) -> APIResponse)
    /// Anyone, but only on the private listener (`/metrics`, `/status`); the public server and CGI answer 404.
    case privateListener((APIHandler) -> APIResponse)
    /// A station's caller before its claim is read: `POST /v1/claim` judges the key itself.
    case claimant
    /// A station's caller that ``APIHandler/authorize(_:_:)`` let through by `rule`.
    case caller(CallerRule, (APIHandler, Caller) throws(APIError) -> APIAnswer)
  }

  /// What a station's caller must be, beyond naming the station with its passcode and not being banned.
  enum CallerRule: Equatable {
    /// Nothing more: the station's devices, keyed or not, and whoever creates it.
    case station
    /// A caller the station's devices answer to (the owner, or anyone while the station is unclaimed) of a
    /// registered station; `what` names what needs it in the 403 of a claimed station's keyless caller.
    case devices(String)
    /// The owner of a registered station, with a proven claim; `what` names what needs it in the 403.
    case owner(String)
  }
}
