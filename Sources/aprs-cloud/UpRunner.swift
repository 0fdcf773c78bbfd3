import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// The thin shell around `UpSupervisor`: spawns, signals, reaps, probes /health, prints.
///
/// Single-threaded: the handled signals are blocked and taken with `sigtimedwait`, so there are no
/// signal handlers and no shared state.
struct UpRunner {
  let plan: UpPlan
  /// When dead children come back.
  var policy = UpSupervisor.Policy()
  /// How long to wait for the first healthy /health before saying so (the stack keeps running).
  var healthTimeout = 30.0

  func run() -> ExitStatus {
    let signals = UpProcess.blockSignals()
    var supervisor = UpSupervisor(names: plan.children.map(\.name), policy: policy)
    var exitCode: Int32?
    var healthy = false
    var warnedUnhealthy = false
    let healthDeadline = UpProcess.now() + healthTimeout
    var nextProbe = 0.0

    func perform(_ actions: [UpSupervisor.Action]) {
      for action in actions {
        switch action {
        case .spawn(let index):
          let child = plan.children[index]
          if let socket = child.socket { removeStaleSocket(socket) }
          switch UpProcess.spawn(child.path, child.arguments) {
          case .success(let pid):
            perform(supervisor.spawned(child: index, pid: pid, now: UpProcess.now()))
          case .failure(let error):
            perform(supervisor.spawnFailed(child: index, reason: error.description, now: UpProcess.now()))
          }
        case .signal(let pid, let signal, let group):
          UpProcess.send(signal, to: pid, group: group)
        case .log(let text):
          printError("aprs-cloud up: \(text)")
        case .exit(let code):
          exitCode = code
        }
      }
    }

    perform(supervisor.start(now: UpProcess.now()))
    while exitCode == nil {
      let probing = !healthy && !supervisor.shuttingDown
      if probing && UpProcess.now() >= nextProbe {
        if UpNetwork.healthStatus(plan.listen) == 200 {
          healthy = true
          printBanner()
        } else if !warnedUnhealthy && UpProcess.now() > healthDeadline {
          warnedUnhealthy = true
          printError(
            "aprs-cloud up: \(plan.listen.url)/health has not answered 200 within \(Int(healthTimeout)) s; "
              + "still trying (see the messages above and \(plan.dataDirectory)/nginx-error.log)")
        }
        // Every 0.1 s at first; after the warning, every 2 s (each failed probe is a line in nginx's log).
        nextProbe = UpProcess.now() + (warnedUnhealthy ? 2 : 0.1)
      }
      var timeout = 3600.0
      if let deadline = supervisor.nextDeadline { timeout = max(0, deadline - UpProcess.now()) }
      if probing && !healthy { timeout = min(timeout, max(0, nextProbe - UpProcess.now())) }
      if let signal = UpProcess.waitSignal(signals, timeout: timeout) {
        if signal == SIGINT || signal == SIGTERM || signal == SIGHUP {
          if !supervisor.shuttingDown { printError("aprs-cloud up: stopping") }
          perform(supervisor.shutdown(now: UpProcess.now()))
        }
      }
      // SIGCHLDs coalesce: reap whatever has exited, whichever signal (if any) woke us.
      for (pid, status) in UpProcess.reap() {
        perform(supervisor.exited(pid: pid, status: status, now: UpProcess.now()))
      }
      perform(supervisor.tick(now: UpProcess.now()))
    }
    for child in plan.children {
      if let socket = child.socket { removeStaleSocket(socket) }
    }
    return exitCode == 0 ? .success : .failure
  }

  private func removeStaleSocket(_ path: String) {
    var info = stat()
    if lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFSOCK { unlink(path) }
  }

  private func printBanner() {
    let url = plan.listen.url
    let json = "-H 'content-type: application/json'"
    // The tool as it was started (`.build/release/aprs-cloud` under `make run`): it need not be on PATH.
    let tool = CommandLine.arguments.first.flatMap { $0.isEmpty ? nil : $0 } ?? "aprs-cloud"
    let banner = """
      aprs-cloud is up at \(url) (data in \(plan.dataDirectory)).
      Configuration: \(plan.configPath)
      Metrics (Prometheus text, for this machine only): \(plan.metrics.url)/metrics
      Try it (N0CALL's passcode is 13023; `\(tool) passcode CALL` prints yours):
        curl -s \(url)/health
        curl -s \(url)/v1/register \(json) \\
          -d '{"callsign":"N0CALL","ssid":0,"auth":"13023","wantHistory":true,"since":0}'
        curl -s \(url)/v1/sync \(json) \\
          -d '{"callsign":"N0CALL","ssid":0,"auth":"13023","since":0}'
      Ctrl-C stops everything.

      """
    writeAll(1, Array(banner.utf8))
  }
}
