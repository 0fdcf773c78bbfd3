import Config

/// The email channel's request: a mail through the operator's SMTP server (`[forward.email]`), either a stored
/// message (``ForwardPayload/messageMail(from:to:station:message:)``) or a target's confirmation code
/// (``ForwardPayload/confirmationMail(from:to:station:code:now:)``).
enum EmailRequest {
  /// The mail of `job`. Throws when `[forward.email]` is not configured or the job carries neither a message nor
  /// a code.
  static func mail(_ job: DeliveryJob, settings: PushConfig.Forward, now: Int64) throws(PushError)
    -> MailRequest
  {
    guard let email = settings.email else {
      throw PushError("email forwarding is not configured ([forward.email] url)")
    }
    let target = job.target
    let message: [UInt8]
    if case .confirmation(let code) = job.purpose {
      message = ForwardPayload.confirmationMail(
        from: email.from, to: target.address, station: target.station, code: code, now: now)
    } else if let entry = job.entry {
      message = ForwardPayload.messageMail(
        from: email.from, to: target.address, station: target.station, message: entry.message)
    } else {
      throw PushError("a forward without a message")
    }
    return MailRequest(
      url: email.url, from: email.from, to: target.address, message: message, username: email.username,
      password: email.password, caFile: settings.caFile)
  }
}
