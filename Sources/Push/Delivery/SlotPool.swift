/// The engine's one ``DeliverySlots``, shared by the channels that reach endpoints anyone may name: Web Push and
/// UnifiedPush (the push lane), ntfy, webhooks and email (the forward lane). Confined to the push thread.
/// FCM and APNs keep their own bound (each a known service over one HTTP/2 connection; no station can aim them
/// anywhere else).
final class SlotPool {
  var slots: DeliverySlots

  init(limits: DeliverySlotLimits = DeliverySlotLimits()) {
    slots = DeliverySlots(limits: limits)
  }
}
