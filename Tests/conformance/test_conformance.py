"""`aprs-cloud conformance` end to end: against the real server (Tests/webclient/stack.py: `aprs-cloud up` with
nginx, the responder and the listener on loopback) every check passes; against a stand-in, a proxy on loopback
in front of the same server that changes one behaviour, the run fails and names the check of that behaviour.

Run (after `swift build`; `make test` does both):

    .build/pyenv-test/bin/python -m unittest discover -s Tests/conformance -p 'test_*.py'

Standard library only. The binaries come from $APRS_CLOUD_BIN (default .build/debug).
"""

from __future__ import annotations

import http.client
import http.server
import importlib.util
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.parse
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

_spec = importlib.util.spec_from_file_location("stack", os.path.join(ROOT, "Tests", "webclient", "stack.py"))
stack = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stack)

EXECUTABLE = os.path.join(os.environ.get("APRS_CLOUD_BIN", os.path.join(ROOT, ".build", "debug")), "aprs-cloud")
CHECKS = [
    "info", "health", "transport", "passcode", "identity", "error-bodies", "register", "sync", "sync-cursor",
    "heartbeat", "opt-ins-off", "avatars", "long-poll", "limits-retry-after", "unregister", "unregister-empty-token",
]
# Hop-by-hop fields, and the length the stand-in recomputes.
HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "proxy-connection", "upgrade"}


def run_conformance(url: str, *arguments: str) -> tuple[int, str, str]:
    process = subprocess.run(
        [EXECUTABLE, "conformance", url, *arguments], capture_output=True, text=True, timeout=120,
    )
    return process.returncode, process.stdout, process.stderr


class StandIn:
    """A loopback HTTP proxy in front of `upstream` that passes every exchange through, but for what
    `change(method, path, status, headers, body)` rewrites (it returns the new headers and body)."""

    def __init__(self, upstream: str, change, tls: tuple[str, str] | None = None):
        target = urllib.parse.urlsplit(upstream)
        host, port = target.hostname, target.port

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP}
                connection = http.client.HTTPConnection(host, port, timeout=330)
                try:
                    connection.request(self.command, self.path, body=body, headers=headers)
                    response = connection.getresponse()
                    answer = response.read()
                    fields = [(name, value) for name, value in response.getheaders() if name.lower() not in HOP]
                    fields, answer = change(self.command, self.path, response.status, fields, answer)
                finally:
                    connection.close()
                self.send_response_only(response.status, response.reason)
                for name, value in fields:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer)))
                self.send_header("Connection", "close")
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(answer)
                self.close_connection = True

            do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        scheme = "http"
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def unchanged(method, path, status, fields, body):
    return fields, body


def drop_retry_after(method, path, status, fields, body):
    """Every Retry-After header left out (docs/protocol.md "Errors": a 429 carries one)."""
    return [(name, value) for name, value in fields if name.lower() != "retry-after"], body


def wall_clock_sync(method, path, status, fields, body):
    """A sync's serverTime replaced by the wall clock (docs/protocol.md "The cursor": never the wall clock)."""
    if path == "/v1/sync" and status == 200:
        answer = json.loads(body)
        if isinstance(answer, dict) and "serverTime" in answer:
            answer["serverTime"] = int(time.time() * 1000)
            body = json.dumps(answer, separators=(",", ":")).encode()
    return fields, body


class ConformanceTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(EXECUTABLE, os.X_OK):
            raise RuntimeError(f"{EXECUTABLE} is missing: run `swift build` first")
        # stack.py keeps its log files open for the processes it starts.
        warnings.simplefilter("ignore", ResourceWarning)
        cls.stack = stack.Stack()

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()

    def results(self, stdout: str) -> dict[str, dict]:
        document = json.loads(stdout)
        return {check["name"]: check for check in document["checks"]}

    def test_this_server_passes_every_check_and_leaves_nothing_registered(self):
        started = time.monotonic()
        status, stdout, stderr = run_conformance(self.stack.url, "--json")
        elapsed = time.monotonic() - started
        results = self.results(stdout)
        self.assertEqual(list(results), CHECKS, stdout)
        failed = {name: check["reason"] for name, check in results.items() if check["status"] != "PASS"}
        self.assertEqual(failed, {}, stdout + stderr + self.stack.log())
        self.assertEqual(status, 0, stderr)
        self.assertLess(elapsed, 30, "a run against a local server stays under 30 s")
        for address, ssid in (("CONFRM-15", 15), ("CONFRM-14", 14)):
            answer = self.stack.api("settings", {"callsign": "CONFRM", "ssid": ssid, "auth": str(stack.passcode("CONFRM"))})
            self.assertEqual(answer.status, 404, f"{address} left registered: {answer.body!r}")

    def test_the_lines_name_each_check_with_its_section_and_a_station_that_existed_is_kept(self):
        auth = str(stack.passcode("KEEPME"))
        identity = {"callsign": "KEEPME", "ssid": 5, "auth": auth}
        kept = self.stack.api(
            "register", {**identity, "platform": "android", "pushToken": "their-phone-0123456789", "wantHistory": True}
        )
        self.assertEqual(kept.status, 200, kept.body)
        self.assertTrue(self.stack.wait_for_filter("KEEPME-5"), "KEEPME-5 never reached the listener's filter")
        self.stack.inject(stack.message_line("KJ7ABC-7", "KEEPME-5", "kept through the run", "7"))

        def stored():
            return self.stack.api("sync", identity).json()["messages"]

        before = stack.wait_until(stored, 15)
        self.assertTrue(before, "the message to KEEPME-5 was never stored")
        status, stdout, stderr = run_conformance(self.stack.url, "--callsign", "keepme-5")
        self.assertEqual(status, 0, stdout + stderr)
        lines = stdout.splitlines()
        self.assertTrue(any(line.startswith("PASS sync-cursor") and "docs/protocol.md#the-cursor" in line for line in lines), stdout)
        self.assertTrue(any(line.startswith("SKIP avatars") and "existed before the run" in line for line in lines), stdout)
        self.assertIn("note: KEEPME-5 was registered before the run", stdout)
        self.assertIn("note: KEEPME-5 holds stored entries", stdout)
        self.assertEqual(stored(), before, "the entries of a station that existed stay")
        # Its one device too, without the run's (the operator's view of the database).
        view = subprocess.run(
            [EXECUTABLE, "stations", "KEEPME-5", "--db", os.path.join(self.stack.directory, "var", "aprs-cloud.sqlite")],
            capture_output=True, text=True, timeout=30,
        )
        self.assertRegex(view.stdout, r"\ndevices +1\n", view.stdout + view.stderr)
        self.assertRegex(view.stdout, r"\nmessages +1\n", view.stdout)
        # The station that was there before the run is still there; the spare SSID the run made is gone.
        still = self.stack.api("settings", {"callsign": "KEEPME", "ssid": 5, "auth": auth})
        self.assertEqual(still.status, 403, still.body)
        spare = self.stack.api("settings", {"callsign": "KEEPME", "ssid": 4, "auth": auth})
        self.assertEqual(spare.status, 404, spare.body)
        devices = self.stack.api("unregister", {**identity, "pushToken": "their-phone-0123456789"})
        self.assertEqual(devices.status, 200, devices.body)
        self.stack.api("unregister", identity)

    def check_stand_in(self, change, broken: str):
        stand_in = StandIn(self.stack.url, change)
        try:
            status, stdout, stderr = run_conformance(stand_in.url, "--json")
        finally:
            stand_in.stop()
        self.assertEqual(status, 1, stdout + stderr)
        results = self.results(stdout)
        self.assertEqual(results[broken]["status"], "FAIL", stdout)
        others = {name: check["reason"] for name, check in results.items() if name != broken and check["status"] != "PASS"}
        self.assertEqual(others, {}, stdout)
        return results[broken]["reason"]

    def test_a_stand_in_without_retry_after_fails_limits_retry_after(self):
        reason = self.check_stand_in(drop_retry_after, "limits-retry-after")
        self.assertIn("without Retry-After", reason)

    def test_a_stand_in_whose_sync_says_the_wall_clock_fails_sync_cursor(self):
        reason = self.check_stand_in(wall_clock_sync, "sync-cursor")
        self.assertIn("never the wall clock", reason)

    def test_https_with_the_sites_ca_passes_and_an_untrusted_certificate_is_no_answer(self):
        directory = tempfile.mkdtemp(prefix="aprs-conformance-tls-")
        key, certificate = os.path.join(directory, "key.pem"), os.path.join(directory, "cert.pem")
        made = subprocess.run(
            [
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1",
            ],
            capture_output=True, text=True, timeout=30,
        )
        self.assertEqual(made.returncode, 0, made.stderr)
        stand_in = StandIn(self.stack.url, unchanged, tls=(certificate, key))
        try:
            status, stdout, stderr = run_conformance(stand_in.url, "--ca-file", certificate, "--json")
            refused, _, refusal = run_conformance(stand_in.url)
        finally:
            stand_in.stop()
            shutil.rmtree(directory, ignore_errors=True)
        failed = {name: check["reason"] for name, check in self.results(stdout).items() if check["status"] != "PASS"}
        self.assertEqual(failed, {}, stdout + stderr)
        self.assertEqual(status, 0, stderr)
        self.assertEqual(refused, 2, refusal)
        self.assertIn("does not answer", refusal)

    def test_a_server_that_does_not_answer_is_exit_2_and_bad_usage_too(self):
        probe = stack.free_port()
        status, stdout, stderr = run_conformance(f"http://127.0.0.1:{probe}")
        self.assertEqual(status, 2, stdout + stderr)
        self.assertIn("does not answer", stderr)
        self.assertEqual(run_conformance("ftp://127.0.0.1")[0], 2)
        self.assertEqual(run_conformance(self.stack.url, "--callsign", "TOOLONGCALL-1")[0], 2)


if __name__ == "__main__":
    unittest.main()
