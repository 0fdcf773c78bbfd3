import APRS
import JSON
import Store

/// A provider payload that fits, and what had to give way for it to fit.
public struct BuiltPayload: Sendable, Equatable {
  /// The bytes to send (the FCM request body, or the APNs payload).
  public var bytes: [UInt8]
  /// The banner it carries (after any shortening).
  public var text: NotificationText
  /// The avatar image was left out to stay within the size limit.
  public var imageDropped: Bool
  /// The body was shortened to stay within the size limit.
  public var bodyShortened: Bool
}

/// The payload could not be made to fit even without image and body (absurdly long fields).
public struct PayloadTooLarge: Error, Sendable, Equatable {
  public var bytes: Int
}

/// Builds the FCM HTTP v1 message and the APNs payload and headers from a `PushContent`: pure.
///
/// Data keys exactly as docs/protocol.md lists them, all strings, never a key FCM reserves in `data`; a
/// collapse id unique per station; the whole payload at most `maxBytes`: the avatar image goes
/// first, then the body is shortened (on character boundaries, never inside a UTF-8 sequence).
///
/// Every APNs payload also carries a top-level `gcm.message_id` string unique per push: the app
/// receives pushes through FlutterFire, whose iOS plugin hands a notification to the app's
/// foreground, tap and launch handlers only when that key is there (docs/protocol.md). FCM payloads
/// never carry it (in FCM `data` it is a reserved key, and FCM adds its own).
public enum PushPayload {
  /// The providers' payload limit, enforced locally on the whole request body.
  public static let maxBytes = 4096
  /// An avatar image rides along only up to this many characters.
  public static let maxImageCharacters = 3000
  /// Keys FCM reserves in `data` (it refuses the whole message); keys starting `google` or `gcm` too.
  /// An FCM rule only: the APNs payload has its own top-level `gcm.message_id`.
  public static let reservedDataKeys: Set<String> = ["from", "notification", "message_type", "collapse_key"]
  /// The APNs collapse id limit, in bytes.
  public static let maxCollapseIDBytes = 64
  /// The top-level APNs payload key FlutterFire's iOS plugin requires before it hands a notification to
  /// the app (`PushMessageIDs` makes the values).
  public static let apnsMessageIDKey = "gcm.message_id"

  /// Whether FCM would refuse `key` in `data`.
  public static func isReserved(_ key: String) -> Bool {
    let lower = key.lowercased()
    return reservedDataKeys.contains(lower) || lower.hasPrefix("google") || lower.hasPrefix("gcm")
  }

  /// The collapse id of every push to `station`: the OS replaces the previous banner with the
  /// next one instead of stacking them. At most 64 bytes.
  public static func collapseID(station: String) -> String {
    var id = ""
    for scalar in ("aprs-" + station).unicodeScalars {
      guard id.utf8.count + String(scalar).utf8.count <= maxCollapseIDBytes else { break }
      id.unicodeScalars.append(scalar)
    }
    return id
  }

  /// The data map (docs/protocol.md), in a fixed order. The image only when at most 3000 characters
  /// and `includeImage`; the tombstone only for a known station that cleared its avatar.
  public static func data(_ content: PushContent, includeImage: Bool = true) -> [(key: String, value: String)]
  {
    if case .claimCode = content.kind {
      // The code is in the banner only: data may be kept by an app (a history, a log) where it must not be.
      return [("kind", "claim"), ("to", content.station)]
    }
    if case .forwardDisabled(let notice) = content.kind { return notice.data(station: content.station) }
    if case .sendFailed(let state) = content.kind {
      // docs/protocol.md "Sending messages": `kind`, `to` (the addressee) and `seqId`; `fromCall` names the same
      // conversation for clients that open it on a tap, `state` says rejected or expired.
      return [
        ("kind", "sendFailed"), ("to", content.fromCall), ("seqId", content.seqId ?? ""),
        ("state", state.rawValue), ("fromCall", content.fromCall),
      ]
    }
    var pairs: [(key: String, value: String)]
    if let entry = content.entry {
      // A subscription entry: `type` (its kind), `subscription` (its id), `event` for a watch, `room` and
      // `roomCount` for a net's room, then the sender
      // (`fromCall`, the watched station for a watch), `to` (its addressee: `BLN1WX`, a group, an NWS zone
      // product; the station for a watch) and `count`.
      pairs = [("type", entry.kind.rawValue), ("subscription", entry.subscription)]
      if let event = entry.event { pairs.append(("event", event.rawValue)) }
      if let room = entry.room {
        // A room's digest: the room and how many of its entries the push announces (the sender is the last).
        pairs += [("room", room.description), ("roomCount", String(content.roomCount ?? 1))]
      }
      pairs += [("fromCall", content.fromCall), ("to", content.addressee), ("count", String(content.count))]
    } else {
      pairs = [
        ("fromCall", content.fromCall), ("to", content.addressee), ("seqId", content.seqId ?? ""),
        ("count", String(content.count)),
      ]
    }
    switch content.avatar {
    case .none: break
    case .stored(let avatar):
      if let icon = avatar.icon { pairs.append(("fromAvatarIcon", icon)) }
      pairs.append(("fromAvatarHash", avatar.hash))
      if includeImage, let image = avatar.image, image.count <= maxImageCharacters {
        pairs.append(("fromAvatarImage", image))
      }
    case .cleared:
      pairs.append(("fromAvatarCleared", "1"))
    }
    return pairs
  }

  /// Whether `data(content)` carries an image that could be dropped.
  static func hasImage(_ content: PushContent) -> Bool {
    if case .stored(let avatar) = content.avatar, let image = avatar.image, image.count <= maxImageCharacters
    {
      return true
    }
    return false
  }

  // MARK: Size limit

  /// Writes the banner as `key: {"title":…,"body":…}`: FCM's `notification`, APNs' `alert`.
  static func writeBanner(_ text: NotificationText, as key: String, to writer: inout JSONWriter) {
    writer.key(key)
    writer.beginObject()
    writer.key("title")
    writer.string(text.title)
    writer.key("body")
    writer.string(text.body)
    writer.endObject()
  }

  /// Builds with `build(text, includeImage)` and makes the result fit `maxBytes`: first without
  /// the image, then with a shorter body.
  static func fit(
    _ content: PushContent, preview: Bool, limit: Int = maxBytes,
    _ build: (NotificationText, Bool) -> [UInt8]
  ) -> Result<BuiltPayload, PayloadTooLarge> {
    var text = NotificationText.make(content, preview: preview)
    // A person reads the banner: bidirectional controls in a message would disguise what it says.
    text.title = BidiControls.escaped(text.title)
    text.body = BidiControls.escaped(text.body)
    var bytes = build(text, true)
    if bytes.count <= limit {
      return .success(BuiltPayload(bytes: bytes, text: text, imageDropped: false, bodyShortened: false))
    }
    let imageDropped = hasImage(content)
    if imageDropped {
      bytes = build(text, false)
      if bytes.count <= limit {
        return .success(BuiltPayload(bytes: bytes, text: text, imageDropped: true, bodyShortened: false))
      }
    }
    // The body appears once, so every escaped byte cut from it is a byte cut from the payload.
    for _ in 0..<4 {
      guard bytes.count > limit, !text.body.isEmpty else { break }
      text.body = shorten(text.body, by: bytes.count - limit)
      bytes = build(text, false)
    }
    guard bytes.count <= limit else { return .failure(PayloadTooLarge(bytes: bytes.count)) }
    return .success(BuiltPayload(bytes: bytes, text: text, imageDropped: imageDropped, bodyShortened: true))
  }

  /// `text` with whole characters cut from its end until its JSON-escaped form is at least
  /// `excess` bytes shorter, then `…` appended (empty when nothing useful is left).
  static func shorten(_ text: String, by excess: Int) -> String {
    let ellipsis = "…"
    let needed = excess + ellipsis.utf8.count
    var removed = 0
    var end = text.endIndex
    while end > text.startIndex, removed < needed {
      let previous = text.index(before: end)
      removed += escapedLength(text[previous..<end])
      end = previous
    }
    guard end > text.startIndex else { return "" }
    return String(text[..<end]) + ellipsis
  }

  /// The length of `text` inside a JSON string as `JSONWriter` writes it.
  static func escapedLength(_ text: Substring) -> Int {
    var length = 0
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09: length += 2
      case 0..<0x20, 0x7F: length += 6
      default: length += 1
      }
    }
    return length
  }
}
