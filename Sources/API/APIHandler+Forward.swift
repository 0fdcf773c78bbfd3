import APRS
import JSON
import Store

extension APIHandler {
  /// `POST /v1/forward/confirm` (docs/api.md "Forwarding"): `{callsign, ssid, id, code}` confirms the email target `id`
  /// with the code its confirmation mail carried; `{…, id, resend:true}` asks for another mail (a 429 naming the
  /// budget past one of ``Store/ConfirmationBudget``: the station's, the mailbox's, the domain's). Answers
  /// `{"target":{…}}`, the target as `/v1/settings` shows it. A wrong, expired or void code is a 400 naming `code`;
  /// an unknown `id` a 404; a target that is not waiting for a code a 409. Only the owner of a claimed station gets
  /// here; a confirmation is recorded in the station's audit trail under `client`.
  func forwardConfirm(_ body: RequestBody, station: StationAddress, client: ClientAddress, now: Int64)
    throws(APIError) -> APIResponse
  {
    let id = try body.requiredString("id", maxLength: 16)
    let address = station.description
    let target: ForwardTarget
    if try body.bool("resend") == true {
      let result = try store { () throws(StoreError) in
        try database.resendForwardConfirmation(station: address, id: id, now: now)
      }
      switch result {
      case .queued(let queued): target = queued
      case .limited(let retryAt, let budget):
        throw .rateLimited(
          what: budget.description, retryAfterSeconds: Int(max(1, (retryAt - now + 999) / 1000)))
      case .notFound: throw .forwardTargetNotFound(id: id)
      case .notPending(let other): throw .conflict(Self.notPending(other))
      }
    } else {
      let code = try body.requiredString("code", maxLength: 16).trimmingASCIISpaces()
      guard code.utf8.count == 6, code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
        throw .badRequest("code must be the 6 digits of the confirmation mail")
      }
      let result = try store { () throws(StoreError) in
        try database.confirmForwardTarget(station: address, id: id, code: code, now: now)
      }
      switch result {
      case .confirmed(let confirmed):
        target = confirmed
        try store { () throws(StoreError) in
          try database.recordAudit(
            AuditEntry(
              station: address, at: now, action: .settings, client: client.key,
              detail: "forward \(confirmed.id) confirmed"))
        }
      case .wrongCode:
        throw .badRequest(
          "code: wrong or expired confirmation code (after \(ForwardTarget.maximumWrongCodes) wrong ones, ask for"
            + " a new mail with resend:true)")
      case .notFound: throw .forwardTargetNotFound(id: id)
      case .notPending(let other): throw .conflict(Self.notPending(other))
      }
    }
    var writer = JSONWriter(capacity: 256)
    writer.beginObject()
    writer.key("target")
    Self.writeForwardTarget(target, to: &writer)
    writer.endObject()
    return .ok(writer, station: address)
  }

  private static func notPending(_ target: ForwardTarget) -> String {
    target.kind == .email
      ? "id: forward target \(target.id) is \(target.status.name), not waiting for a confirmation code"
      : "id: forward target \(target.id) is a \(target.kind.rawValue) target; only email targets are confirmed"
  }

  /// `forward`: each target with its `id`, `type`, address (`to` or `url`), the secret's hint (`secretHint` for a
  /// webhook, `tokenHint` for ntfy; never the secret), `priority` (ntfy), `always`, `status`, for a failing one
  /// `reason` and `failingSince`, for a disabled one `reason` and `disabledAt` (epoch ms), and for either its
  /// `reasonCode` when known (``Store/ForwardProblem``: `auth_refused`, `mailbox_full`, `redirect`, …) ([] when
  /// none).
  static func writeForward(_ targets: [ForwardTarget], to writer: inout JSONWriter) {
    writer.key("forward")
    writer.beginArray()
    for target in targets { writeForwardTarget(target, to: &writer) }
    writer.endArray()
  }

  static func writeForwardTarget(_ target: ForwardTarget, to writer: inout JSONWriter) {
    writer.beginObject()
    writer.key("id")
    writer.string(target.id)
    writer.key("type")
    writer.string(target.kind.rawValue)
    switch target.kind {
    case .email:
      writer.key("to")
      writer.string(target.address)
    case .ntfy:
      writer.key("url")
      writer.string(target.address)
      if let hint = target.secretHint {
        writer.key("tokenHint")
        writer.string(hint)
      }
      writer.key("priority")
      writer.int(target.priority)
    case .webhook:
      writer.key("url")
      writer.string(target.address)
      writer.key("secretHint")
      writer.string(target.secretHint ?? "…")
    }
    writer.key("always")
    writer.bool(target.always)
    writer.key("status")
    writer.string(target.status.name)
    switch target.status {
    case .failing(let reason, let since):
      writer.key("reason")
      writer.string(reason)
      writer.key("failingSince")
      writer.int(since)
    case .disabled(let reason, let at):
      writer.key("reason")
      writer.string(reason)
      writer.key("disabledAt")
      writer.int(at)
    case .active, .unconfirmed:
      break
    }
    if let problem = target.problem, target.status.reason != nil {
      writer.key("reasonCode")
      writer.string(problem.rawValue)
    }
    writer.endObject()
  }
}
