"""Tests of webpush_fake.py: its decryption is RFC 8291's (the RFC's own example, both ways), and it accepts
exactly the pushes RFC 8030/8291/8292 describe and refuses the rest with the documented status.

Run with the test venv's python (make deps-test): python -m unittest discover -s Tests/fakes -p 'test_*.py'
"""

import base64
import http.client
import json
import os
import shutil
import ssl
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import webpush_fake  # noqa: E402
from fake_server import start_for_test, stop_for_test  # noqa: E402
from cryptography.hazmat.primitives import hashes  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, utils  # noqa: E402

b64 = webpush_fake.b64decode
enc = webpush_fake.b64encode

# RFC 8291 Appendix A.
RFC = {
    "plaintext": b"When I grow up, I want to be a watermelon",
    "as_private": "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw",
    "ua_private": "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94",
    "ua_public": "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
    "auth": "BTBZMqHH6r4Tts7J_aSIgg",
    "salt": "DGv6ra1nlYgDCS1FRnbzlw",
    "body": "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8w"
            "EqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN",
}


class RFC8291Vector(unittest.TestCase):
    def test_decrypts_the_rfc_example(self):
        plaintext = webpush_fake.decrypt(b64(RFC["body"]), b64(RFC["ua_private"]), b64(RFC["auth"]))
        self.assertEqual(plaintext, RFC["plaintext"])

    def test_encrypts_the_rfc_example_byte_for_byte(self):
        body = webpush_fake.encrypt(RFC["plaintext"], b64(RFC["ua_public"]), b64(RFC["auth"]),
                                    salt=b64(RFC["salt"]), sender_private=b64(RFC["as_private"]))
        self.assertEqual(enc(body), RFC["body"])

    def test_command_line_round_trip(self):
        keys = json.loads(run_tool("keypair"))
        body = run_tool("encrypt", "--p256dh=" + keys["p256dh"], "--auth=" + keys["auth"], stdin=b"hello").strip()
        self.assertEqual(len(b64(body)), 86 + len("hello") + 1 + 16)
        self.assertEqual(b64(run_tool("decrypt", "--private=" + keys["private"], "--auth=" + keys["auth"],
                                      stdin=body.encode())), b"hello")


def run_tool(*args, stdin=b""):
    result = subprocess.run([sys.executable, os.path.join(HERE, "webpush_fake.py"), *args], input=stdin,
                            capture_output=True, timeout=30, check=True)
    return result.stdout.decode()


class Sender:
    """A minimal, independent application server: VAPID with PyCA, the body with http_ece."""

    def __init__(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.k = enc(webpush_fake.public_bytes(self.key))

    def jwt(self, claims, header=None, der=False):
        segments = [enc(json.dumps(header or {"typ": "JWT", "alg": "ES256"}).encode()),
                    enc(json.dumps(claims).encode())]
        signature = self.key.sign(".".join(segments).encode(), ec.ECDSA(hashes.SHA256()))
        if not der:
            r, s = utils.decode_dss_signature(signature)
            signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
        return ".".join(segments + [enc(signature)])

    def claims(self, origin, **changes):
        claims = {"aud": origin, "exp": int(time.time()) + 12 * 3600, "sub": "mailto:ops@example.org"}
        claims.update(changes)
        return {k: v for k, v in claims.items() if v is not None}


class FakeService(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.process, cls.dir, ports = start_for_test("webpush_fake.py", "webpush-fake-test-")
        cls.port, cls.control_port = ports["port"], ports["control_port"]
        cls.origin = "https://127.0.0.1:%d" % cls.port
        cls.tls = ssl.create_default_context(cafile=os.path.join(cls.dir, "ca.pem"))
        cls.sender = Sender()

    @classmethod
    def tearDownClass(cls):
        stop_for_test(cls.process)
        shutil.rmtree(cls.dir, ignore_errors=True)

    def control(self, method, path, body=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.control_port, timeout=30)
        connection.request(method, path, json.dumps(body) if body is not None else None)
        answer = json.loads(connection.getresponse().read())
        connection.close()
        return answer

    def push(self, subscription, body=None, headers=None, connection=None, claims=None, **jwt_options):
        url = subscription["endpoint"]
        path = url[url.index("/push/"):]
        own = connection is None
        connection = connection or http.client.HTTPSConnection("127.0.0.1", self.port, context=self.tls,
                                                               timeout=30)
        if body is None:
            body = b'{"title":"hi"}'
            if "p256dh" in subscription:
                body = webpush_fake.encrypt(body, b64(subscription["p256dh"]), b64(subscription["auth"]))
        jwt = self.sender.jwt(claims or self.sender.claims(self.origin), **jwt_options)
        sent = {"Authorization": "vapid t=%s, k=%s" % (jwt, self.sender.k), "TTL": "60", "Urgency": "high",
                "Topic": "N0CALL7", "Content-Type": "application/octet-stream"}
        if "p256dh" in subscription:
            sent["Content-Encoding"] = "aes128gcm"
        sent.update(headers or {})
        sent = {k: v for k, v in sent.items() if v is not None}
        connection.request("POST", path, body, sent)
        response = connection.getresponse()
        response.read()
        if own:
            connection.close()
        return response

    def last(self, subscription):
        return self.control("GET", "/control/requests?id=" + subscription["id"])["requests"][-1]

    def test_accepts_an_encrypted_push_and_decrypts_it(self):
        subscription = self.control("POST", "/control/subscribe", {})
        self.assertEqual(self.push(subscription).status, 201)
        record = self.last(subscription)
        self.assertEqual(record["json"], {"title": "hi"})
        self.assertEqual(record["vapid"]["aud"], self.origin)
        self.assertEqual(record["vapid"]["k"], self.sender.k)
        self.assertEqual(record["headers"]["urgency"], "high")

    def test_unencrypted_unifiedpush(self):
        subscription = self.control("POST", "/control/subscribe", {"keys": False})
        self.assertNotIn("p256dh", subscription)
        self.assertEqual(self.push(subscription, body=b'{"to":"N0CALL"}').status, 201)
        self.assertEqual(self.last(subscription)["json"], {"to": "N0CALL"})
        self.assertEqual(self.push(subscription, body=b"x", headers={"Content-Encoding": "aes128gcm"}).status, 400)

    def test_vapid_refusals(self):
        subscription = self.control("POST", "/control/subscribe", {})
        now = int(time.time())
        cases = [
            ({"claims": self.sender.claims("https://127.0.0.1:1")}, "aud"),
            ({"claims": self.sender.claims(self.origin, exp=now + 25 * 3600)}, "exp"),
            ({"claims": self.sender.claims(self.origin, exp=now - 3600)}, "exp"),
            ({"claims": self.sender.claims(self.origin, sub=None)}, "sub"),
            ({"claims": self.sender.claims(self.origin, sub="ops@example.org")}, "sub"),
            ({"der": True}, "signature"),
            ({"header": {"alg": "HS256", "typ": "JWT"}}, "ES256"),
        ]
        for options, word in cases:
            response = self.push(subscription, **options)
            self.assertEqual(response.status, 401, options)
            self.assertIn(word, self.last(subscription)["reason"], options)
        self.assertEqual(self.push(subscription, headers={"Authorization": "Bearer x"}).status, 401)

    def test_the_clock_offset_moves_where_exp_is_judged(self):
        subscription = self.control("POST", "/control/subscribe", {})
        ahead = self.sender.claims(self.origin, exp=int(time.time()) + 30 * 3600)
        self.assertEqual(self.push(subscription, claims=ahead).status, 401)
        self.control("POST", "/control/clock", {"offsetSeconds": 24 * 3600})
        try:
            self.assertEqual(self.push(subscription, claims=ahead).status, 201)
            self.assertEqual(self.push(subscription).status, 401)
        finally:
            self.control("POST", "/control/clock", {"offsetSeconds": 0})
        self.assertEqual(self.push(subscription).status, 201)

    def test_a_subscription_bound_to_another_key_answers_403(self):
        other = Sender()
        subscription = self.control("POST", "/control/subscribe", {"vapidKey": other.k})
        self.assertEqual(self.push(subscription).status, 403)

    def test_header_refusals(self):
        subscription = self.control("POST", "/control/subscribe", {})
        self.assertEqual(self.push(subscription, headers={"TTL": None}).status, 400)
        self.assertEqual(self.push(subscription, headers={"TTL": "-1"}).status, 400)
        self.assertEqual(self.push(subscription, headers={"Urgency": "urgent"}).status, 400)
        self.assertEqual(self.push(subscription, headers={"Topic": "a" * 33}).status, 400)
        self.assertEqual(self.push(subscription, headers={"Topic": "has space"}).status, 400)
        self.assertEqual(self.push(subscription, headers={"Content-Encoding": "aesgcm"}).status, 400)
        self.assertEqual(self.push(subscription, body=b"\0" * 4097).status, 413)
        self.assertEqual(self.push(subscription, body=b"\0" * 200).status, 400)
        self.assertIn("decrypt", self.last(subscription)["reason"])

    def test_scripted_answers_and_gone_subscriptions(self):
        subscription = self.control("POST", "/control/subscribe", {})
        self.control("POST", "/control/script", {"id": subscription["id"], "status": 429, "retryAfter": 7})
        self.control("POST", "/control/script", {"id": subscription["id"], "status": 503, "times": 2})
        first = self.push(subscription)
        self.assertEqual((first.status, first.getheader("Retry-After")), (429, "7"))
        self.assertEqual([self.push(subscription).status for _ in range(3)], [503, 503, 201])
        self.control("POST", "/control/unsubscribe", {"id": subscription["id"], "gone": True})
        self.assertEqual(self.push(subscription).status, 410)
        self.assertEqual(self.push({"id": "nope", "endpoint": self.origin + "/push/nope"}, body=b"").status, 404)

    def test_wait_and_connection_numbers(self):
        subscription = self.control("POST", "/control/subscribe", {})
        connection = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.tls, timeout=30)
        for _ in range(3):
            self.assertEqual(self.push(subscription, connection=connection).status, 201)
        connection.close()
        answer = self.control("POST", "/control/wait", {"id": subscription["id"], "count": 3, "status": 201,
                                                        "timeoutMs": 2000})
        self.assertEqual(answer, {"ok": True, "count": 3})
        records = self.control("GET", "/control/requests?id=" + subscription["id"])["requests"]
        self.assertEqual(len({r["connection"] for r in records}), 1)
        self.assertFalse(self.control("POST", "/control/wait", {"id": subscription["id"], "count": 4,
                                                                "timeoutMs": 100})["ok"])


if __name__ == "__main__":
    unittest.main()
