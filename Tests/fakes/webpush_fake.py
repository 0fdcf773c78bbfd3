#!/usr/bin/env python3
"""A fake Web Push / UnifiedPush service for the push sender's tests, and the independent RFC 8291 checks.

Decryption and encryption here are http_ece's (an independent implementation of RFC 8188/8291 on PyCA
`cryptography`), never the sender's own code: what the sender encrypts must open here, and what is encrypted
here must open in the sender's tests. Run it with the test venv's python (`make deps-test`:
.build/pyenv-test, with `cryptography` and `http_ece`).

    webpush_fake.py serve --dir DIR [--port 0] [--control-port 0] [--ready-file PATH] [--max-seconds N]
                          [--no-parent-watch]
    webpush_fake.py keypair                          -> {"private","p256dh","auth"} (base64url)
    webpush_fake.py encrypt --p256dh B --auth B [--salt B] [--sender-private B] < plaintext  -> body (base64url)
    webpush_fake.py decrypt --private B --auth B < body (base64url)  -> plaintext (base64url)

serve: HTTPS (HTTP/1.1, keep-alive) on 127.0.0.1 with DIR/server.pem and DIR/server-key.pem (from
make_push_credentials.sh), and a plain HTTP/1.1 JSON control API on 127.0.0.1. Once bound it writes
{"port":N,"control_port":M} to --ready-file (tmp + rename) and stdout. Exits on SIGTERM/SIGINT, when its parent
goes away (checked each second; --no-parent-watch turns that off) and after --max-seconds.

Push service: POST /push/<id> (a subscription made with /control/subscribe). Checks, in order (status, reason):
  404 unknown subscription (or one dropped by /control/unsubscribe);
  401 VAPID: `Authorization: vapid t=<JWT>, k=<key>` (parameters in any order); k 65 bytes 0x04 (base64url,
      unpadded); the JWT three unpadded base64url segments, header alg ES256 (typ JWT if present), an ES256
      signature that is raw r||s (64 bytes) and verifies with k; claims aud = this request's origin
      ("https://" + Host), exp an integer with now < exp <= now + 24 h (60 s skew allowed), sub starting
      "mailto:" (with an "@") or "https://";
  403 k differs from the subscription's applicationServerKey (when it was made with one, as browsers bind it);
  400 TTL missing or not a non-negative integer; Urgency not very-low/low/normal/high; Topic not 1-32
      characters of the base64url alphabet;
  413 body over 4096 bytes;
  400 with keys: Content-Encoding not aes128gcm, or the body does not decrypt (http_ece, with the
      subscription's private key and auth secret); without keys: a Content-Encoding header;
  then the next scripted answer for the subscription, if any; else 201 with a Location header.
Every request is recorded: id, status, reason, headers (lower-case names), bodyBytes, plaintext (text),
json (the plaintext parsed, when it is JSON), vapid {aud, exp, sub, k}, connection (a number per TCP
connection), httpVersion.

Control API:
  POST /control/subscribe {"keys":true, "host":"127.0.0.1"|"localhost", "vapidKey":B?}
       -> {"id","endpoint","p256dh","auth","private"} (p256dh/auth/private absent when keys is false)
  POST /control/unsubscribe {"id"}             the endpoint answers 404 from now on (410 with "gone":true)
  POST /control/script {"id","status","retryAfter"?,"times"?:1,"body"?}   answers after the checks pass
  GET  /control/requests[?id=ID]               {"requests":[...]} oldest first
  POST /control/wait {"count","id"?,"status"?,"timeoutMs"?}  {"ok":bool,"count":n} once that many were answered
  GET  /control/stats                          {"requests":n,"connections":m}
  POST /control/reset                          forgets requests and scripts (subscriptions stay)
  POST /control/clock {"offsetSeconds"}        VAPID exp is judged at this machine's time plus the offset (a
                                               sender whose clock a test moves ahead)
"""

import argparse
import base64
import itertools
import json
import os
import sys
import threading
import time
import urllib.parse

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils

from fake_server import (JSONControlHandler, TLSPostHandler, ThreadingServer, add_serve_options, serve_until_stopped,
                         server_tls, wait_for_count)

MAX_BODY = 4096
URGENCIES = {"very-low", "low", "normal", "high"}
B64URL = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
SKEW = 60


def b64decode(text):
    """base64url, with or without padding."""
    text = text.strip()
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64encode(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def public_bytes(private_key):
    return private_key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def private_from_bytes(scalar):
    return ec.derive_private_key(int.from_bytes(scalar, "big"), ec.SECP256R1())


def new_keypair():
    key = ec.generate_private_key(ec.SECP256R1())
    scalar = key.private_numbers().private_value.to_bytes(32, "big")
    return {"private": b64encode(scalar), "p256dh": b64encode(public_bytes(key)), "auth": b64encode(os.urandom(16))}


def encrypt(plaintext, p256dh, auth, salt=None, sender_private=None):
    """RFC 8291 by http_ece: one aes128gcm record of rs 4096."""
    sender = private_from_bytes(sender_private) if sender_private else ec.generate_private_key(ec.SECP256R1())
    return http_ece.encrypt(plaintext, salt=salt or os.urandom(16), private_key=sender, dh=p256dh,
                            auth_secret=auth, version="aes128gcm")


def decrypt(body, private, auth):
    return http_ece.decrypt(body, private_key=private_from_bytes(private), auth_secret=auth, version="aes128gcm")


class Refused(Exception):
    def __init__(self, status, reason):
        super().__init__(reason)
        self.status = status
        self.reason = reason


def parse_vapid(header):
    """{t, k} of `vapid t=..., k=...`."""
    if not header or not header.lower().startswith("vapid "):
        raise Refused(401, "Authorization is not a vapid header")
    params = {}
    for part in header[6:].split(","):
        name, sep, value = part.strip().partition("=")
        if not sep:
            raise Refused(401, "malformed vapid parameter: %r" % part)
        params[name.strip().lower()] = value.strip()
    if "t" not in params or "k" not in params:
        raise Refused(401, "vapid header without t or k")
    return params


def verify_vapid(header, origin, now):
    """The checked claims and key, or Refused."""
    params = parse_vapid(header)
    try:
        key_bytes = b64decode(params["k"])
    except Exception:
        raise Refused(401, "k is not base64url")
    if "=" in params["k"] or len(key_bytes) != 65 or key_bytes[0] != 4:
        raise Refused(401, "k is not an unpadded 65-byte uncompressed point")
    try:
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key_bytes)
    except ValueError:
        raise Refused(401, "k is not a point on P-256")
    segments = params["t"].split(".")
    if len(segments) != 3 or any("=" in s or not s for s in segments):
        raise Refused(401, "t is not a compact JWS of three unpadded segments")
    try:
        header_json = json.loads(b64decode(segments[0]))
        claims = json.loads(b64decode(segments[1]))
        signature = b64decode(segments[2])
    except Exception:
        raise Refused(401, "t does not decode")
    if header_json.get("alg") != "ES256" or header_json.get("typ", "JWT") != "JWT":
        raise Refused(401, "JWT header is not alg ES256, typ JWT: %r" % header_json)
    if len(signature) != 64:
        raise Refused(401, "signature is %d bytes, not raw r||s (64)" % len(signature))
    der = utils.encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        public.verify(der, (segments[0] + "." + segments[1]).encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise Refused(401, "ES256 signature does not verify with k")
    if claims.get("aud") != origin:
        raise Refused(401, "aud %r is not this origin %r" % (claims.get("aud"), origin))
    exp = claims.get("exp")
    if not isinstance(exp, int) or isinstance(exp, bool):
        raise Refused(401, "exp is not an integer")
    if exp <= now - SKEW or exp > now + 86400 + SKEW:
        raise Refused(401, "exp %d is not within 24 h ahead of %d" % (exp, now))
    sub = claims.get("sub")
    if not isinstance(sub, str) or not (
            (sub.startswith("mailto:") and "@" in sub) or sub.startswith("https://")):
        raise Refused(401, "sub is not a mailto: or https: contact: %r" % sub)
    return {"aud": claims["aud"], "exp": exp, "sub": sub, "k": params["k"]}


class State:
    def __init__(self):
        self.lock = threading.Condition()
        self.subscriptions = {}
        self.scripts = {}
        # Seconds added to this machine's time where the fake judges a VAPID exp (/control/clock).
        self.clock_offset = 0
        self.requests = []
        self.ids = itertools.count(1)
        self.connections = itertools.count(1)
        self.connections_opened = 0
        self.port = 0


STATE = State()


class PushHandler(TLSPostHandler):
    server_version = "webpush-fake"

    def setup(self):
        super().setup()
        with STATE.lock:
            self.connection_number = next(STATE.connections)
            STATE.connections_opened += 1

    def do_POST(self):
        body = self.read_body()
        path = urllib.parse.urlsplit(self.path).path
        sub_id = path[len("/push/"):] if path.startswith("/push/") else None
        headers = {name.lower(): value for name, value in self.headers.items()}
        record = {"id": sub_id, "path": path, "headers": headers, "bodyBytes": len(body),
                  "connection": self.connection_number, "httpVersion": self.request_version,
                  "plaintext": None, "json": None, "vapid": None, "time": time.time()}
        status, reason, extra, answer_body = 201, "created", [], b""
        try:
            status, reason, extra, answer_body = self.check(sub_id, headers, body, record)
        except Refused as refusal:
            status, reason, answer_body = refusal.status, refusal.reason, refusal.reason.encode()
        record["status"] = status
        record["reason"] = reason
        with STATE.lock:
            STATE.requests.append(record)
            STATE.lock.notify_all()
        self.answer(status, answer_body, extra)

    def check(self, sub_id, headers, body, record):
        with STATE.lock:
            subscription = STATE.subscriptions.get(sub_id)
        if subscription is None or subscription.get("gone"):
            status = 410 if subscription is not None and subscription.get("gone") == 410 else 404
            raise Refused(status, "no such subscription")
        host = headers.get("host", "").lower()
        record["vapid"] = verify_vapid(headers.get("authorization"), "https://" + host, int(time.time()) + STATE.clock_offset)
        if subscription.get("vapidKey") and record["vapid"]["k"] != subscription["vapidKey"]:
            raise Refused(403, "k is not the applicationServerKey of this subscription")
        ttl = headers.get("ttl")
        if ttl is None or not ttl.isdigit():
            raise Refused(400, "TTL missing or not a non-negative integer: %r" % ttl)
        urgency = headers.get("urgency")
        if urgency is not None and urgency not in URGENCIES:
            raise Refused(400, "Urgency %r" % urgency)
        topic = headers.get("topic")
        if topic is not None and not (1 <= len(topic) <= 32 and set(topic) <= B64URL):
            raise Refused(400, "Topic %r is not 1-32 base64url characters" % topic)
        if len(body) > MAX_BODY:
            raise Refused(413, "body of %d bytes" % len(body))
        if subscription.get("private"):
            if headers.get("content-encoding") != "aes128gcm":
                raise Refused(400, "Content-Encoding %r, expected aes128gcm" % headers.get("content-encoding"))
            try:
                plaintext = decrypt(body, b64decode(subscription["private"]), b64decode(subscription["auth"]))
            except Exception as error:
                raise Refused(400, "does not decrypt: %s" % error)
        else:
            if "content-encoding" in headers:
                raise Refused(400, "Content-Encoding on an unencrypted push")
            plaintext = body
        record["plaintext"] = plaintext.decode("utf-8", "replace")
        record["plaintextBytes"] = len(plaintext)
        try:
            record["json"] = json.loads(plaintext)
        except ValueError:
            pass
        with STATE.lock:
            queue = STATE.scripts.get(sub_id) or []
            script = queue[0] if queue else None
            if script is not None:
                script["times"] -= 1
                if script["times"] <= 0:
                    queue.pop(0)
        if script is not None:
            extra = []
            if script.get("retryAfter") is not None:
                extra.append(("Retry-After", str(script["retryAfter"])))
            return script["status"], "scripted", extra, script.get("body", "").encode()
        location = "https://%s/message/%d" % (host, len(STATE.requests) + 1)
        return 201, "created", [("Location", location)], b""


class ControlHandler(JSONControlHandler):
    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        if url.path == "/control/requests":
            wanted = query.get("id", [None])[0]
            with STATE.lock:
                items = [r for r in STATE.requests if wanted is None or r["id"] == wanted]
            return self.reply({"requests": items})
        if url.path == "/control/stats":
            with STATE.lock:
                return self.reply({"requests": len(STATE.requests), "connections": STATE.connections_opened})
        self.reply({"error": "no such control path"}, 404)

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        try:
            request = self.read_json()
        except ValueError:
            return self.reply({"error": "not JSON"}, 400)
        if path == "/control/subscribe":
            with STATE.lock:
                sub_id = "s%d" % next(STATE.ids)
            host = request.get("host", "127.0.0.1")
            subscription = {"id": sub_id, "endpoint": "https://%s:%d/push/%s" % (host, STATE.port, sub_id)}
            if request.get("keys", True):
                subscription.update(new_keypair())
            if request.get("vapidKey"):
                subscription["vapidKey"] = request["vapidKey"]
            with STATE.lock:
                STATE.subscriptions[sub_id] = subscription
            return self.reply(subscription)
        if path == "/control/unsubscribe":
            with STATE.lock:
                if request.get("id") in STATE.subscriptions:
                    STATE.subscriptions[request["id"]]["gone"] = 410 if request.get("gone") else 404
            return self.reply({"ok": True})
        if path == "/control/script":
            entry = {"status": int(request["status"]), "retryAfter": request.get("retryAfter"),
                     "times": int(request.get("times", 1)), "body": request.get("body", "")}
            with STATE.lock:
                STATE.scripts.setdefault(request["id"], []).append(entry)
            return self.reply({"ok": True})
        if path == "/control/wait":
            def matching():
                return [r for r in STATE.requests
                        if (request.get("id") is None or r["id"] == request["id"])
                        and (request.get("status") is None or r["status"] == request["status"])]
            return self.reply(wait_for_count(STATE.lock, matching, request["count"], request.get("timeoutMs", 10000)))
        if path == "/control/clock":
            with STATE.lock:
                STATE.clock_offset = int(request["offsetSeconds"])
            return self.reply({"ok": True})
        if path == "/control/reset":
            with STATE.lock:
                STATE.requests.clear()
                STATE.scripts.clear()
            return self.reply({"ok": True})
        self.reply({"error": "no such control path"}, 404)


def serve(args):
    PushHandler.tls = server_tls(args.dir)
    push = ThreadingServer(("127.0.0.1", args.port), PushHandler)
    control = ThreadingServer(("127.0.0.1", args.control_port), ControlHandler)
    STATE.port = push.server_address[1]
    serve_until_stopped((push, control), {"port": STATE.port, "control_port": control.server_address[1]}, args)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve_parser = commands.add_parser("serve")
    add_serve_options(serve_parser)
    serve_parser.add_argument("--port", type=int, default=0)
    serve_parser.add_argument("--control-port", type=int, default=0)
    commands.add_parser("keypair")
    encrypt_parser = commands.add_parser("encrypt")
    encrypt_parser.add_argument("--p256dh", required=True)
    encrypt_parser.add_argument("--auth", required=True)
    encrypt_parser.add_argument("--salt")
    encrypt_parser.add_argument("--sender-private")
    decrypt_parser = commands.add_parser("decrypt")
    decrypt_parser.add_argument("--private", required=True)
    decrypt_parser.add_argument("--auth", required=True)
    args = parser.parse_args(argv)
    if args.command == "serve":
        serve(args)
    elif args.command == "keypair":
        print(json.dumps(new_keypair()))
    elif args.command == "encrypt":
        body = encrypt(sys.stdin.buffer.read(), b64decode(args.p256dh), b64decode(args.auth),
                       b64decode(args.salt) if args.salt else None,
                       b64decode(args.sender_private) if args.sender_private else None)
        print(b64encode(body))
    elif args.command == "decrypt":
        print(b64encode(decrypt(b64decode(sys.stdin.read()), b64decode(args.private), b64decode(args.auth))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
