#!/usr/bin/env python3
"""make bench: how long APRS-IS goes without the listener after a crash.

usage: restart_bench.py BIN_DIR ROOT [KILLS]

Runs `aprs-cloud up` (nginx, responder, listener) on a temporary data directory against the APRS-IS fake
(Tests/fakes/aprsis_fake.py) with one registered station, then KILLS times (default 20): SIGKILL to the
listener, and the time until the fake sees the new listener logged in with the same filter (the fake stamps
the logresp; both clocks are this machine's wall clock). `up` restarts a child that ran past its crash-loop
window at once; the window is shortened to 1 s here (APRS_CLOUD_UP_CRASH_LOOP_WINDOW) so the kills need not
be 5 s apart: the restart path is the same. Prints min, median and max.
"""

import json
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Control:
    """The fake's JSON-lines control connection."""

    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buffer = b""

    def __call__(self, **request) -> dict:
        self.sock.sendall(json.dumps(request).encode() + b"\n")
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("the fake's control connection ended")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)


def children_named(parent: int, name: str) -> list:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if ppid == parent and comm == name:
            found.append(int(entry))
    return found


def wait_for(condition, timeout: float, interval: float = 0.005):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    return None


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    bin_dir, root = sys.argv[1], sys.argv[2]
    kills = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    work = tempfile.mkdtemp(prefix="ac-restart-")
    fake = up = None
    try:
        ready = os.path.join(work, "ready.json")
        fake = subprocess.Popen(
            [sys.executable, os.path.join(root, "Tests/fakes/aprsis_fake.py"), "--port", "0", "--control-port", "0",
             "--ready-file", ready],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_for(lambda: os.path.exists(ready), 15, 0.05):
            raise RuntimeError("the APRS-IS fake did not start")
        ports = json.load(open(ready))
        control = Control(ports["control_port"])

        data = os.path.join(work, "var")
        os.mkdir(data)
        database = os.path.join(data, "aprs-cloud.sqlite")
        subprocess.run([os.path.join(bin_dir, "aprs-cloud"), "migrate", "--db", database], check=True,
                       stdout=subprocess.DEVNULL)
        now = int(time.time() * 1000)
        with sqlite3.connect(database) as db:
            db.execute(
                "INSERT INTO stations (address, base, ssid, platform, ack_messages, registered_at, heartbeat_at) "
                "VALUES ('N0CALL-7', 'N0CALL', 7, NULL, 1, ?, ?)", (now, now))
        config = os.path.join(work, "aprs-cloud.ini")
        with open(config, "w") as f:
            f.write(f"[aprsis]\nservers = 127.0.0.1:{ports['port']}\nlogin = N0CALL-10\npasscode = 13023\n"
                    "[server]\nlogLevel = warn\n[messaging.webpush]\nenabled = false\n")
        up = subprocess.Popen(
            [os.path.join(bin_dir, "aprs-cloud"), "up", "--http", f"127.0.0.1:{free_port()}", "--metrics", f"127.0.0.1:{free_port()}", "--data", data,
             "--config", config, "--nginx-dir", os.path.join(root, "nginx")],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "up.log"), "w"),
            env=dict(os.environ, APRS_CLOUD_UP_CRASH_LOOP_WINDOW="1"))
        if not control(cmd="wait", what="login", count=1, timeout=30)["ok"]:
            raise RuntimeError("the listener never logged in:\n" + open(os.path.join(work, "up.log")).read())
        first = [c for c in control(cmd="clients")["clients"] if c["logged_in"]][0]
        spec, last_login = first["filter"], first["logged_in_at"]

        times = []
        for _ in range(kills):
            time.sleep(max(0.0, last_login + 1.2 - time.time()))  # past up's (shortened) crash-loop window
            pids = children_named(up.pid, "aprs-listener")
            if len(pids) != 1:
                raise RuntimeError(f"expected one listener, found {pids}")
            os.kill(pids[0], signal.SIGKILL)
            killed = time.time()

            def back():
                for client in control(cmd="clients")["clients"]:
                    at = client.get("logged_in_at")
                    if client["logged_in"] and at and at > killed and client["filter"] == spec:
                        return at
                return None

            at = wait_for(back, 30)
            if at is None:
                raise RuntimeError("the listener did not come back within 30 s")
            times.append(at - killed)
            last_login = at
        ms = [t * 1000 for t in times]
        print(f"restart time after SIGKILL (min/median/max of {kills}): {min(ms):.0f} / "
              f"{statistics.median(ms):.0f} / {max(ms):.0f} ms  (kill -9 of the listener under aprs-cloud up -> "
              f"the APRS-IS fake sees the new login with the filter {spec!r})")
        return 0
    finally:
        if up is not None:
            up.terminate()
            try:
                up.wait(timeout=20)
            except subprocess.TimeoutExpired:
                up.kill()
        if fake is not None:
            fake.kill()
            fake.wait()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
