#!/usr/bin/env python3
"""A fake forward receiver for the forwarder's tests: an HTTPS receiver (ntfy topics and webhooks) and an SMTP
server over TLS (aiosmtpd), both on 127.0.0.1, with a plain HTTP JSON control API.

Run it with the test venv's python (`make deps-test`: .build/pyenv-test, with aiosmtpd).

    forward_fake.py serve --dir DIR [--ready-file PATH] [--max-seconds N] [--no-parent-watch]

DIR holds server.pem and server-key.pem (a certificate for IP 127.0.0.1 and localhost signed by the test run's own
CA, from make_push_credentials.sh). Once bound it writes {"https_port","smtp_port","control_port"} to --ready-file
(tmp + rename) and stdout. Exits on SIGTERM/SIGINT, when its parent goes away and after --max-seconds.

HTTPS (HTTP/1.1, keep-alive): any POST path is a target. It answers the next scripted answer for the path, if any;
a path marked gone answers 404 or 410; else 200. Every request is recorded: path, headers (lower-case names),
body (text), bodyBase64 (the raw bytes, for a signature check), status, time, and concurrent (how many requests
to its path were being answered when it arrived, itself included; a script's delayMs holds the answer that long).

SMTP over TLS from the start (SMTPS, as on port 465): EHLO, AUTH PLAIN/LOGIN (user `aprs`, password
`test-password`; anything else is 535), MAIL FROM, RCPT TO (an address marked refused answers its code, 550 by
default), DATA. Every mail taken is recorded: from, to (list), data (text), authenticated, time.

Control API:
  GET  /control/requests[?path=P]              {"requests":[...]} oldest first
  GET  /control/mails                          {"mails":[...]} oldest first
  POST /control/script {"path","status","retryAfter"?,"times"?:1,"delayMs"?:0}   the next answers of that path
  POST /control/gone {"path","status"?:410}    the path answers 404 or 410 from now on
  POST /control/refuse {"address","code"?:550} RCPT TO of that address is refused with the code
  POST /control/wait {"kind":"http"|"mail","count","path"?,"to"?,"status"?,"timeoutMs"?}
       {"ok":bool,"count":n} once that many requests (answered with status) or mails arrived
"""

import argparse
import asyncio
import base64
import sys
import threading
import time
import urllib.parse

from aiosmtpd.smtp import SMTP, AuthResult

from fake_server import (JSONControlHandler, TLSPostHandler, ThreadingServer, add_serve_options, serve_until_stopped,
                         server_tls, wait_for_count)

USER = "aprs"
PASSWORD = "test-password"


class State:
    def __init__(self):
        self.lock = threading.Condition()
        self.requests = []
        self.mails = []
        self.scripts = {}
        self.active = {}
        self.gone = {}
        self.refused = {}


STATE = State()


class ReceiverHandler(TLSPostHandler):
    server_version = "forward-fake"

    def do_POST(self):
        body = self.read_body()
        path = urllib.parse.urlsplit(self.path).path
        headers = {name.lower(): value for name, value in self.headers.items()}
        status, extra, delay = 200, [], 0
        with STATE.lock:
            STATE.active[path] = STATE.active.get(path, 0) + 1
            concurrent = STATE.active[path]
            queue = STATE.scripts.get(path) or []
            script = queue[0] if queue else None
            if script is not None:
                script["times"] -= 1
                if script["times"] <= 0:
                    queue.pop(0)
                status = script["status"]
                delay = script.get("delayMs") or 0
                if script.get("retryAfter") is not None:
                    extra.append(("Retry-After", str(script["retryAfter"])))
            elif path in STATE.gone:
                status = STATE.gone[path]
            STATE.requests.append({
                "path": path, "headers": headers, "body": body.decode("utf-8", "replace"),
                "bodyBase64": base64.b64encode(body).decode(), "status": status, "time": time.time(),
                "concurrent": concurrent})
            STATE.lock.notify_all()
        try:
            if delay:
                time.sleep(delay / 1000.0)
            self.answer(status, b'{"ok":true}' if status < 300 else b'{"error":"scripted"}', extra)
        finally:
            with STATE.lock:
                STATE.active[path] -= 1


class MailHandler:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        with STATE.lock:
            code = STATE.refused.get(address.lower())
        if code is not None:
            return "%d 5.1.1 <%s>: mailbox unavailable" % (code, address)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        with STATE.lock:
            STATE.mails.append({
                "from": envelope.mail_from, "to": list(envelope.rcpt_tos),
                "data": envelope.content.decode("utf-8", "replace"),
                "authenticated": bool(getattr(session, "authenticated", False)), "time": time.time()})
            STATE.lock.notify_all()
        return "250 Message accepted for delivery"


def authenticate(server, session, envelope, mechanism, auth_data):
    login = getattr(auth_data, "login", b"") or b""
    password = getattr(auth_data, "password", b"") or b""
    if login == USER.encode() and password == PASSWORD.encode():
        return AuthResult(success=True)
    return AuthResult(success=False, handled=False)


def start_smtp(context):
    """An asyncio loop in a thread serving SMTPS on an ephemeral port; returns the port."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder = {}

    def factory():
        return SMTP(MailHandler(), hostname="forward-fake", authenticator=authenticate, auth_require_tls=False)

    async def start():
        server = await loop.create_server(factory, "127.0.0.1", 0, ssl=context)
        holder["port"] = server.sockets[0].getsockname()[1]
        ready.set()

    def run():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        loop.run_forever()

    threading.Thread(target=run, daemon=True).start()
    ready.wait(10)
    return holder["port"]


class ControlHandler(JSONControlHandler):
    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        if url.path == "/control/requests":
            wanted = query.get("path", [None])[0]
            with STATE.lock:
                items = [r for r in STATE.requests if wanted is None or r["path"] == wanted]
            return self.reply({"requests": items})
        if url.path == "/control/mails":
            with STATE.lock:
                return self.reply({"mails": list(STATE.mails)})
        self.reply({"error": "no such control path"}, 404)

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        try:
            request = self.read_json()
        except ValueError:
            return self.reply({"error": "not JSON"}, 400)
        if path == "/control/script":
            entry = {"status": int(request["status"]), "retryAfter": request.get("retryAfter"),
                     "times": int(request.get("times", 1)), "delayMs": int(request.get("delayMs", 0))}
            with STATE.lock:
                STATE.scripts.setdefault(request["path"], []).append(entry)
            return self.reply({"ok": True})
        if path == "/control/gone":
            with STATE.lock:
                STATE.gone[request["path"]] = int(request.get("status", 410))
            return self.reply({"ok": True})
        if path == "/control/refuse":
            code = int(request.get("code", 550))
            with STATE.lock:
                if code == 0:
                    STATE.refused.pop(request["address"].lower(), None)
                else:
                    STATE.refused[request["address"].lower()] = code
            return self.reply({"ok": True})
        if path == "/control/wait":
            def matching():
                if request.get("kind") == "mail":
                    return [m for m in STATE.mails if request.get("to") is None or request["to"] in m["to"]]
                return [r for r in STATE.requests
                        if (request.get("path") is None or r["path"] == request["path"])
                        and (request.get("status") is None or r["status"] == request["status"])]
            return self.reply(wait_for_count(STATE.lock, matching, request["count"], request.get("timeoutMs", 10000)))
        self.reply({"error": "no such control path"}, 404)


def serve(args):
    ReceiverHandler.tls = server_tls(args.dir)
    receiver = ThreadingServer(("127.0.0.1", 0), ReceiverHandler)
    control = ThreadingServer(("127.0.0.1", 0), ControlHandler)
    smtp_port = start_smtp(server_tls(args.dir, alpn=None))
    ready = {"https_port": receiver.server_address[1], "smtp_port": smtp_port,
             "control_port": control.server_address[1]}
    serve_until_stopped((receiver, control), ready, args)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve_parser = commands.add_parser("serve")
    add_serve_options(serve_parser)
    args = parser.parse_args(argv)
    serve(args)


if __name__ == "__main__":
    main(sys.argv[1:])
