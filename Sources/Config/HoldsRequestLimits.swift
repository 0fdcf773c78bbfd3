/// A configuration that holds the ``RequestLimits`` (``ServerConfig``, the API's `APIConfig`) and reads each limit
/// as if it were its own: `config.maxBody` is `config.limits.maxBody`, for reading and writing.
@dynamicMemberLookup
public protocol HoldsRequestLimits {
  /// The limits, as the configuration file gives them.
  var limits: RequestLimits { get set }
}

extension HoldsRequestLimits {
  /// A limit of ``limits``, read and written as if it were this value's own.
  public subscript<Value>(dynamicMember keyPath: WritableKeyPath<RequestLimits, Value>) -> Value {
    get { limits[keyPath: keyPath] }
    set { limits[keyPath: keyPath] = newValue }
  }
}
