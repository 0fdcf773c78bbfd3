import Testing

@testable import Listener
@testable import Store

#if canImport(Glibc)
  import Glibc
#endif

/// What a listener holding its host's lock file does about a lease someone else has.
@Suite struct LeaseContestTests {
  private func lease(_ holder: String) -> LeaseRecord {
    LeaseRecord(holder: holder, acquiredAt: 1_000, expiresAt: 61_000)
  }

  @Test func aHolderOnThisHostIsDeadAndTakenOverAtOnce() {
    for standby in [false, true] {
      #expect(
        LeaseContest.decide(lease: lease("vps1:4242:9f"), host: "vps1", standby: standby)
          == .takeOver(staleHolder: "vps1:4242:9f"))
    }
  }

  @Test func aHolderOnAnotherHostIsTrustedUntilItsLeaseLapses() {
    #expect(
      LeaseContest.decide(lease: lease("vps2:1:a"), host: "vps1", standby: false)
        == .refuse(holder: "vps2:1:a"))
    #expect(
      LeaseContest.decide(lease: lease("vps2:1:a"), host: "vps1", standby: true) == .wait(holder: "vps2:1:a"))
    // A host whose name only starts like ours is another host.
    #expect(
      LeaseContest.decide(lease: lease("vps10:1:a"), host: "vps1", standby: false)
        == .refuse(holder: "vps10:1:a"))
    #expect(
      LeaseContest.decide(lease: lease("vps1"), host: "vps1", standby: false)
        == .takeOver(staleHolder: "vps1"))
  }

  @Test func noLeaseMeansTryAgain() {
    #expect(LeaseContest.decide(lease: nil, host: "vps1", standby: false) == .retry)
  }

  @Test func holderIdentity() {
    let holder = LeaseHolder(host: "vps1", pid: 4242, tag: "9f")
    #expect(holder.description == "vps1:4242:9f")
    #expect(LeaseHolder.host(of: holder.description) == "vps1")
    #expect(LeaseHolder.host(of: "thief") == "thief")
    let current = LeaseHolder.current()
    #expect(!current.host.isEmpty && !current.host.contains(":"))
    #expect(current.pid == getpid())
  }

  @Test func theLockFileSitsBesideTheDatabaseWithLinksResolved() throws {
    let test = try TestDatabase()
    defer { test.remove() }
    #expect(ListenerRuntime.lockPath(forDatabase: test.path) == test.path + ".listener-lock")
    let link = test.directory + "/link.sqlite"
    #expect(symlink(test.path, link) == 0)
    defer { unlink(link) }
    #expect(ListenerRuntime.lockPath(forDatabase: link) == test.path + ".listener-lock")
    #expect(
      ListenerRuntime.lockPath(forDatabase: test.directory + "/new.sqlite") == test.directory
        + "/new.sqlite.listener-lock")
  }
}
