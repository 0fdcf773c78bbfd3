#if canImport(Glibc)
  import Glibc
#endif

/// The process's open-file limit (`RLIMIT_NOFILE`). Long polls hold a socket each while they wait,
/// in the responder and in nginx, so the responder and `aprs-cloud up` (for the nginx and responder
/// it starts) take all the hard limit allows: the soft limit is often 1024, the hard one far more.
public enum OpenFileLimit {
  /// Raises the soft limit to the hard limit; returns the soft limit now in effect (unchanged when
  /// raising fails).
  @discardableResult
  public static func raiseToHardLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    if limit.rlim_cur < limit.rlim_max {
      var raised = limit
      raised.rlim_cur = limit.rlim_max
      if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return Int(clamping: raised.rlim_cur) }
    }
    return Int(clamping: limit.rlim_cur)
  }

  /// The soft limit now in effect.
  public static var current: Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    return Int(clamping: limit.rlim_cur)
  }
}
