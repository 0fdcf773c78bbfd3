"""What the HTTPS fakes (webpush_fake.py, forward_fake.py) share: a threaded HTTP server, the server TLS context
from the test run's own certificate, a JSON control handler, the `serve` options, the ready file and the rules
that stop the process (SIGTERM/SIGINT, the parent gone, --max-seconds)."""

import http.server
import json
import os
import signal
import socketserver
import ssl
import sys
import threading
import time


class ThreadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def server_tls(directory, alpn=("http/1.1",)):
    """A TLS server context with DIR/server.pem and DIR/server-key.pem (make_push_credentials.sh)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(directory, "server.pem"), os.path.join(directory, "server-key.pem"))
    if alpn:
        context.set_alpn_protocols(list(alpn))
    return context


class JSONControlHandler(http.server.BaseHTTPRequestHandler):
    """The base of a fake's control API: HTTP/1.1, quiet, JSON in and out."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, value, status=200):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_json(self):
        """The request body as JSON ({} when empty); raises ValueError when it is not JSON."""
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}")


class TLSPostHandler(http.server.BaseHTTPRequestHandler):
    """The base of a fake's HTTPS side (HTTP/1.1, keep-alive): set `tls` to a server_tls() context before serving.
    GET is a 405; a subclass answers POST."""

    protocol_version = "HTTP/1.1"
    tls = None

    def setup(self):
        # The TLS handshake happens here, in the connection's own thread, never in the accepting one.
        self.request = self.tls.wrap_socket(self.request, server_side=True)
        super().setup()

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.answer(405, b"POST only")

    def read_body(self):
        """The request body as sent (Content-Length bytes)."""
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""


def wait_for_count(condition, matching, count, timeout_ms):
    """A control API's wait: until `matching()` (called with `condition`, a threading.Condition, held) lists
    `count` items or `timeout_ms` passed. Returns its answer, {"ok": bool, "count": n}."""
    deadline = time.time() + timeout_ms / 1000.0
    with condition:
        while len(matching()) < count and time.time() < deadline:
            condition.wait(max(0.0, deadline - time.time()))
        found = len(matching())
    return {"ok": found >= count, "count": found}


def add_serve_options(parser):
    """The options every fake's `serve` takes: --dir, --ready-file, --max-seconds, --no-parent-watch."""
    parser.add_argument("--dir", required=True)
    parser.add_argument("--ready-file")
    parser.add_argument("--max-seconds", type=float, default=0)
    parser.add_argument("--no-parent-watch", dest="parent_watch", action="store_false")


def serve_until_stopped(servers, ready, args):
    """Serves each of `servers` in a thread, announces `ready` (a dict: the ports) in --ready-file (tmp + rename)
    and on stdout, then waits for SIGTERM/SIGINT, the parent going away or --max-seconds, and exits at once."""
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    text = json.dumps(ready)
    if args.ready_file:
        temporary = args.ready_file + ".tmp"
        with open(temporary, "w") as handle:
            handle.write(text + "\n")
        os.rename(temporary, args.ready_file)
    print(text, flush=True)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    # A parent that blocks its stop signals (as the push sender's process does) passes the mask on.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    parent = os.getppid()
    started = time.time()
    while not stop.wait(1.0):
        if args.parent_watch and os.getppid() != parent:
            break
        if args.max_seconds and time.time() - started > args.max_seconds:
            break
    # No orderly shutdown: a connection stuck mid-request must not keep a test waiting for this process.
    sys.stdout.flush()
    os._exit(0)


def start_for_test(script, prefix):
    """For the fakes' own tests: makes the test run's credentials in a new temporary directory, starts `script`
    (beside this file) with `serve` there (300 s at most) and waits up to 15 s for its ready file. Returns the
    process, the directory and the ports it announced (a dict)."""
    import subprocess
    import tempfile

    here = os.path.dirname(os.path.abspath(__file__))
    directory = tempfile.mkdtemp(prefix=prefix)
    subprocess.run(["/bin/sh", os.path.join(here, "make_push_credentials.sh"), directory], check=True,
                   capture_output=True, timeout=60)
    ready = os.path.join(directory, "ready.json")
    process = subprocess.Popen(
        [sys.executable, os.path.join(here, script), "serve", "--dir", directory, "--ready-file", ready,
         "--max-seconds", "300"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 15
    while not os.path.exists(ready) and time.time() < deadline:
        time.sleep(0.02)
    with open(ready) as handle:
        return process, directory, json.load(handle)


def stop_for_test(process):
    """Stops a fake started by start_for_test (SIGTERM, 10 s at most)."""
    process.terminate()
    process.wait(10)
    process.stderr.close()
