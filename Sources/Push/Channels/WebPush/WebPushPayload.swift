import JSON
import Store

/// The Web Push / UnifiedPush message: a JSON object with `title`, `body` and the data keys of the FCM push
/// (docs/protocol.md), and its RFC 8030 headers. Pure.
///
/// The service worker (or the UnifiedPush app) shows the notification itself from `title` and `body` and opens
/// `fromCall`'s conversation on a tap, as the app does with an FCM push.
public enum WebPushPayload {
  /// The most plaintext a push carries: what keeps an encrypted body within 4096 bytes (RFC 8291 §4), and
  /// 4096 for an unencrypted UnifiedPush body.
  public static func maxBytes(encrypted: Bool) -> Int {
    encrypted ? WebPushEncryption.maxPlaintextBytes : PushPayload.maxBytes
  }

  /// The JSON body, made to fit `maxBytes(encrypted:)` (the image goes first, then the body is shortened).
  public static func body(_ content: PushContent, preview: Bool, encrypted: Bool)
    -> Result<BuiltPayload, PayloadTooLarge>
  {
    PushPayload.fit(content, preview: preview, limit: maxBytes(encrypted: encrypted)) { text, includeImage in
      var writer = JSONWriter(capacity: 1024)
      writer.beginObject()
      writer.key("title")
      writer.string(text.title)
      writer.key("body")
      writer.string(text.body)
      for (key, value) in PushPayload.data(content, includeImage: includeImage) {
        writer.key(key)
        writer.string(value)
      }
      writer.endObject()
      return writer.bytes
    }
  }

  /// The headers the engine knows: `TTL` (seconds the push service keeps an undelivered push) and `Urgency`
  /// (RFC 8030 §5.3): `high` for a message for a person (deliver at once, even on a phone saving power), `low`
  /// for a ``PushPriority/low`` push (subscription entries: delivered when the device is on power and Wi-Fi or
  /// awake anyway). The sender adds `Topic`, `Authorization`, `Content-Type` and `Content-Encoding`.
  public static func headers(ttlSeconds: Int64, priority: PushPriority = .high) -> [(String, String)] {
    [("ttl", String(max(0, ttlSeconds))), ("urgency", priority == .low ? "low" : "high")]
  }
}
