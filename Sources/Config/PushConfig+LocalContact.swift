extension PushConfig.WebPush {
  /// The host of a VAPID contact (`subject`) that names a local machine, nil for one the push services take:
  /// `localhost` and `*.localhost`, `*.local`, `*.localdomain`, `*.invalid`, or a name without a dot
  /// (`mailto:root@myhost`). Apple's Web Push service refuses every push whose VAPID `sub` is such a name
  /// (`403 {"reason":"BadJwtToken"}`), while Chrome's and Firefox's accept it (docs/push.md "Web Push and UnifiedPush"). Pure; the host is
  /// lower-cased, without a port, path or trailing dot.
  public static func localContactHost(_ subject: String) -> String? {
    let lower = subject.lowercased()
    var host: Substring
    if lower.hasPrefix("mailto:") {
      guard let at = lower.lastIndex(of: "@") else { return nil }
      host = lower[lower.index(after: at)...]
      if let query = host.firstIndex(of: "?") { host = host[..<query] }
    } else if lower.hasPrefix("https://") {
      host = lower.dropFirst("https://".count)
      if let end = host.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { host = host[..<end] }
      if let at = host.lastIndex(of: "@") { host = host[host.index(after: at)...] }
      if host.hasPrefix("[") { return nil }  // an IPv6 literal: not a name
      if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
    } else {
      return nil
    }
    while host.hasSuffix(".") { host = host.dropLast() }
    guard !host.isEmpty else { return nil }
    let name = String(host)
    let localSuffixes = [".localhost", ".local", ".localdomain", ".invalid"]
    if name == "localhost" || !name.contains(".") || localSuffixes.contains(where: { name.hasSuffix($0) }) {
      return name
    }
    return nil
  }
}
