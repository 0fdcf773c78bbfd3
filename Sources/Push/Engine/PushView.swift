import Store

/// Which devices share one push of a batch: the same wants, and whether the station's claim governs them
/// (``QuietSplit/governs(_:)``).
struct PushViewKey: Hashable {
  var wants: Wants
  var governed: Bool

  init(_ device: DeviceRecord, governed: Bool) {
    wants = PushAudience.wants(of: device)
    self.governed = governed
  }
}

/// The push the devices of one ``PushViewKey`` get of a batch: the entries they see and what it says.
struct PushView {
  var ids: [Int64]
  var content: PushContent
}
