#!/usr/bin/env python3
"""A fake forward receiver for the forwarder's tests: an HTTPS receiver (ntfy topics and webhooks) and an SMTP
server over TLS (aiosmtpd), both on 127.0.0.1, with a plain HTTP JSON control API.

Run it with the test venv's python (`make deps-test`: .build/pyenv-test, with aiosmtpd).

    forward_fake.py serve --dir DIR [--extra-https-ports N] [--ready-file PATH] [--max-seconds N] [--no-parent-watch]

DIR holds server.pem and server-key.pem (a certificate for IP 127.0.0.1 and localhost signed by the test run's own
CA, from make_push_credentials.sh). Once bound it writes {"https_port","smtp_port","control_port"} to --ready-file
(tmp + rename) and stdout; with --extra-https-ports N, N more HTTPS receivers (the same paths, scripts and
records) as "https_port_1" … "https_port_N" (many ports of one host, as one party's endpoints may be). Exits on SIGTERM/SIGINT, when its parent goes away and after --max-seconds.

HTTPS (HTTP/1.1, keep-alive): any POST path is a target. It answers the next scripted answer for the path, if any
(its status, body and headers: an ntfy error JSON, a Location); a path marked gone answers 404 or 410; a path made an
ntfy topic with a token answers as ntfy's server does (server.go maybeAuthenticate, errors.go): a request without
`Authorization` 403 {"code":40301}, a wrong Bearer token 401 {"code":40101} counted against the client's IP address,
and once an address had `authFailureLimit` (30, ntfy's visitor-auth-failure-limit-burst) failures, every request with
`Authorization` from it, right token or not, 429 {"code":42909}; else 200. Every request is recorded: path, headers (lower-case names),
body (text), bodyBase64 (the raw bytes, for a signature check), status, time, and concurrent (how many requests
to its path were being answered when it arrived, itself included; a script's delayMs holds the answer that long).

SMTP over TLS from the start (SMTPS, as on port 465): EHLO, AUTH PLAIN/LOGIN (user `aprs`, password
`test-password`; anything else is 535), MAIL FROM, RCPT TO (an address marked refused answers its code, 550 by
default, with its reply text: by default `<code> <class>.1.1 <address>: mailbox unavailable`), DATA. Every mail taken is recorded: from, to (list), data (text), authenticated, time.

Control API:
  GET  /control/requests[?path=P]              {"requests":[...]} oldest first
  GET  /control/mails                          {"mails":[...]} oldest first
  POST /control/script {"path","status","retryAfter"?,"times"?:1,"delayMs"?:0,"body"?:str,"headers"?:{name:value}}
       the next answers of that path
  POST /control/gone {"path","status"?:410}    the path answers 404 or 410 from now on
  POST /control/ntfy {"path","token","authFailureLimit"?:30}   the path is an ntfy topic that takes that token
  POST /control/refuse {"address","code"?:550,"reply"?:str} RCPT TO of that address is refused with the code (and
       the reply text after it, e.g. "5.2.2 Mailbox full"); code 0 takes it again
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
        self.ntfy = {}
        self.auth_failures = {}
        self.auth_failure_limit = 30


STATE = State()


class ReceiverHandler(TLSPostHandler):
    server_version = "forward-fake"

    def do_POST(self):
        body = self.read_body()
        path = urllib.parse.urlsplit(self.path).path
        headers = {name.lower(): value for name, value in self.headers.items()}
        status, extra, delay, answer = 200, [], 0, None
        client = self.client_address[0]
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
                extra.extend((script.get("headers") or {}).items())
                if script.get("body") is not None:
                    answer = script["body"].encode()
            elif path in STATE.gone:
                status = STATE.gone[path]
            elif path in STATE.ntfy:
                status, answer = ntfy_answer(STATE.ntfy[path], headers.get("authorization"), client)
            STATE.requests.append({
                "path": path, "headers": headers, "body": body.decode("utf-8", "replace"),
                "bodyBase64": base64.b64encode(body).decode(), "status": status, "time": time.time(),
                "concurrent": concurrent})
            STATE.lock.notify_all()
        try:
            if delay:
                time.sleep(delay / 1000.0)
            if answer is None:
                answer = b'{"ok":true}' if status < 300 else b'{"error":"scripted"}'
            self.answer(status, answer, extra)
        finally:
            with STATE.lock:
                STATE.active[path] -= 1


def ntfy_error(code, http, message):
    return http, ('{"code":%d,"http":%d,"error":"%s","link":"https://ntfy.sh/docs/publish/#authentication"}'
                  % (code, http, message)).encode()


def ntfy_answer(token, authorization, client):
    """ntfy's answer to a publish on a topic that takes `token` (call with STATE.lock held)."""
    if authorization is None:
        return ntfy_error(40301, 403, "forbidden")
    if STATE.auth_failures.get(client, 0) >= STATE.auth_failure_limit:
        return ntfy_error(42909, 429, "limit reached: too many auth failures")
    if authorization != "Bearer " + token:
        STATE.auth_failures[client] = STATE.auth_failures.get(client, 0) + 1
        return ntfy_error(40101, 401, "unauthorized")
    return 200, b'{"id":"fake","event":"message"}'


class MailHandler:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        with STATE.lock:
            refusal = STATE.refused.get(address.lower())
        if refusal is not None:
            code, reply = refusal
            if reply is None:
                reply = "%d.1.1 <%s>: mailbox unavailable" % (code // 100, address)
            return "%d %s" % (code, reply)
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
                     "times": int(request.get("times", 1)), "delayMs": int(request.get("delayMs", 0)),
                     "body": request.get("body"), "headers": request.get("headers")}
            with STATE.lock:
                STATE.scripts.setdefault(request["path"], []).append(entry)
            return self.reply({"ok": True})
        if path == "/control/gone":
            with STATE.lock:
                STATE.gone[request["path"]] = int(request.get("status", 410))
            return self.reply({"ok": True})
        if path == "/control/ntfy":
            with STATE.lock:
                STATE.ntfy[request["path"]] = request["token"]
                STATE.auth_failure_limit = int(request.get("authFailureLimit", STATE.auth_failure_limit))
            return self.reply({"ok": True})
        if path == "/control/refuse":
            code = int(request.get("code", 550))
            with STATE.lock:
                if code == 0:
                    STATE.refused.pop(request["address"].lower(), None)
                else:
                    STATE.refused[request["address"].lower()] = (code, request.get("reply"))
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
    extra = [ThreadingServer(("127.0.0.1", 0), ReceiverHandler) for _ in range(args.extra_https_ports)]
    control = ThreadingServer(("127.0.0.1", 0), ControlHandler)
    smtp_port = start_smtp(server_tls(args.dir, alpn=None))
    ready = {"https_port": receiver.server_address[1], "smtp_port": smtp_port,
             "control_port": control.server_address[1]}
    for index, server in enumerate(extra, start=1):
        ready["https_port_%d" % index] = server.server_address[1]
    serve_until_stopped((receiver, control, *extra), ready, args)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve_parser = commands.add_parser("serve")
    add_serve_options(serve_parser)
    serve_parser.add_argument("--extra-https-ports", type=int, default=0,
                              help="more HTTPS receivers (the same paths and records) on N more ports")
    args = parser.parse_args(argv)
    serve(args)


if __name__ == "__main__":
    main(sys.argv[1:])
