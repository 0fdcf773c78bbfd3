import APRS
import JSON
import Store

extension PushPayload {
  // MARK: APNs

  /// The APNs payload: `aps` with the alert (and `sound` unless the push is ``PushPriority/low``),
  /// `gcm.message_id` (`messageID`, unique per push), then the data keys at the top level.
  public static func apns(_ content: PushContent, preview: Bool, messageID: String)
    -> Result<BuiltPayload, PayloadTooLarge>
  {
    fit(content, preview: preview) { text, includeImage in
      var writer = JSONWriter(capacity: 1024)
      writer.beginObject()
      writer.key("aps")
      writer.beginObject()
      writeBanner(text, as: "alert", to: &writer)
      // A low-priority push (subscription entries, what the station's radio answered) makes no sound.
      if content.priority != .low {
        writer.key("sound")
        writer.string("default")
      }
      writer.key("thread-id")
      writer.string(content.station)
      writer.endObject()
      writer.key(apnsMessageIDKey)
      writer.string(messageID)
      for (key, value) in data(content, includeImage: includeImage) {
        writer.key(key)
        writer.string(value)
      }
      writer.endObject()
      return writer.bytes
    }
  }

  /// The APNs request headers (without `authorization`, which the sender adds).
  /// `expiration` is epoch seconds after which APNs stops trying.
  /// `collapseID` defaults to the station's (``PushContent/collapseID`` gives a push's own).
  /// `priority`: `apns-priority` 10 (at once) or, for ``PushPriority/low``, 5 (by the device's power; still an
  /// `alert` push: Apple requires 5 for background pushes and allows it for alerts, which it may then group,
  /// deliver in bursts or throttle).
  public static func apnsHeaders(
    station: String, bundleId: String, expiration: Int64, collapseID: String? = nil,
    priority: PushPriority = .high
  ) -> [(String, String)] {
    [
      ("apns-topic", bundleId), ("apns-push-type", "alert"), ("apns-priority", priority == .low ? "5" : "10"),
      ("apns-expiration", String(max(0, expiration))),
      ("apns-collapse-id", collapseID ?? Self.collapseID(station: station)),
      ("content-type", "application/json"),
    ]
  }
}
