import APRS
import JSON
import Store

extension PushPayload {
  // MARK: FCM

  /// The FCM v1 `messages:send` request body for one device token.
  public static func fcm(
    _ content: PushContent, token: String, preview: Bool, ttlSeconds: Int64
  ) -> Result<BuiltPayload, PayloadTooLarge> {
    let collapse = content.collapseID
    return fit(content, preview: preview) { text, includeImage in
      var writer = JSONWriter(capacity: 1024)
      writer.beginObject()
      writer.key("message")
      writer.beginObject()
      writer.key("token")
      writer.string(token)
      writeBanner(text, as: "notification", to: &writer)
      writer.key("data")
      writer.beginObject()
      for (key, value) in data(content, includeImage: includeImage) {
        writer.key(key)
        writer.string(value)
      }
      writer.endObject()
      writer.key("android")
      writer.beginObject()
      writer.key("priority")
      writer.string(content.priority == .low ? "normal" : "high")
      writer.key("collapse_key")
      writer.string(collapse)
      writer.key("ttl")
      writer.string("\(max(0, ttlSeconds))s")
      writer.key("notification")
      writer.beginObject()
      writer.key("tag")
      writer.string(collapse)
      writer.endObject()
      writer.endObject()
      writer.endObject()
      writer.endObject()
      return writer.bytes
    }
  }
}
