/// What one delivery is for, which decides what its outcome does.
enum DeliveryPurpose: Equatable {
  /// A push or forward of the engine's coalesced batch with this id (outbox rows behind it; the push test numbers
  /// its own): its outcome moves the batch's rows toward done, failed or due again.
  case batch(Int)
  /// A notice with no outbox row behind it: only logged and counted (a lost one is asked for again by whoever
  /// needs it).
  case notice(Notice)
  /// An email target's confirmation mail carrying this code: its outcome is the target's, not any batch's.
  case confirmation(code: String)

  /// The notices the engine sends outside the outbox.
  enum Notice: Equatable {
    /// A claim's proof code (`POST /v1/claim` where the station is in use).
    case claimCode
    /// A forward target was disabled (``ForwardNotice``).
    case forwardDisabled
  }

  /// The batch id, nil for a notice or a confirmation mail.
  var batchID: Int? {
    if case .batch(let id) = self { return id }
    return nil
  }
}
