import Store

/// The URL an ntfy or webhook target is posted to.
enum ForwardEndpoint {
  /// `target`'s `https://` URL as libcurl takes it. Throws, naming only its origin, when it is not one.
  static func url(of target: ForwardTarget) throws(PushError) -> String {
    guard let endpoint = WebPushEndpoint(target.address) else {
      throw PushError("not an https:// URL: \(CurlMulti.origin(of: target.address))")
    }
    return endpoint.url
  }
}
