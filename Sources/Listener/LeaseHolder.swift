import Store

#if canImport(Glibc)
  import Glibc
#endif

/// A listener's identity in the lease: `HOST:PID:TAG` (the host name, the process id, and a random tag because a
/// pid is reused after a reboot).
public struct LeaseHolder: Sendable, Equatable, CustomStringConvertible {
  /// The host name (`gethostname`), `localhost` when it has none.
  var host: String
  /// The process id.
  var pid: Int32
  /// A random hex tag.
  var tag: String

  init(host: String, pid: Int32, tag: String) {
    self.host = host
    self.pid = pid
    self.tag = tag
  }

  /// This process.
  public static func current() -> LeaseHolder {
    var name = [CChar](repeating: 0, count: 256)
    gethostname(&name, name.count - 1)
    let host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return LeaseHolder(
      host: host.isEmpty ? "localhost" : host, pid: getpid(),
      tag: String(UInt32.random(in: 0...UInt32.max), radix: 16))
  }

  /// `HOST:PID:TAG`, as stored in the lease.
  public var description: String { "\(host):\(pid):\(tag)" }

  /// The host part of a stored holder: the text before its first `:` (all of it without one).
  static func host(of holder: String) -> Substring {
    holder.prefix { $0 != ":" }
  }
}

/// What a listener that holds its host's lock file does about a lease another holder has. Pure.
///
/// Every listener on a host takes the lock file beside the database before the lease, and the kernel drops that lock
/// when its process dies. So once a listener has the lock, a lease held by a holder on the same host belongs to a
/// dead process (a `kill -9`, a crash, a power cut) and is taken over at once; only a holder on another host (a
/// `--standby` pair sharing the file) is trusted to be alive until its lease lapses.
enum LeaseContest: Equatable, Sendable {
  /// The holder is on this host, so it is dead: take the lease over now.
  case takeOver(staleHolder: String)
  /// A listener on another host holds it: exit (no `--standby`).
  case refuse(holder: String)
  /// A listener on another host holds it: wait for it to lapse (`--standby`).
  case wait(holder: String)
  /// Nobody holds it (it was released meanwhile): try again at once.
  case retry

  /// The decision for `lease` (nil: none) seen by a listener on `host`.
  static func decide(lease: LeaseRecord?, host: String, standby: Bool) -> LeaseContest {
    guard let lease else { return .retry }
    if LeaseHolder.host(of: lease.holder) == host[...] { return .takeOver(staleHolder: lease.holder) }
    return standby ? .wait(holder: lease.holder) : .refuse(holder: lease.holder)
  }
}
