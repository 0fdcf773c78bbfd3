"""Tests of forward_fake.py: its SMTP server speaks SMTP over TLS as a real submission server does (AUTH, refused
recipients, the message as sent), and its HTTPS receiver answers and records as documented.

Run with the test venv's python (make deps-test): python -m unittest discover -s Tests/fakes -p 'test_*.py'
"""

import base64
import http.client
import json
import os
import shutil
import smtplib
import ssl
import unittest

from fake_server import start_for_test, stop_for_test


class ForwardFake(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.process, cls.dir, ports = start_for_test("forward_fake.py", "forward-fake-test-")
        cls.https_port, cls.smtp_port, cls.control_port = ports["https_port"], ports["smtp_port"], ports["control_port"]
        cls.tls = ssl.create_default_context(cafile=os.path.join(cls.dir, "ca.pem"))

    @classmethod
    def tearDownClass(cls):
        stop_for_test(cls.process)
        shutil.rmtree(cls.dir, ignore_errors=True)

    def control(self, method, path, body=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.control_port, timeout=20)
        connection.request(method, path, json.dumps(body) if body is not None else None,
                           {"content-type": "application/json"})
        return json.loads(connection.getresponse().read())

    def post(self, path, body, headers=None):
        return self.exchange(path, body, headers)[:2]

    def exchange(self, path, body, headers=None):
        """(status, Retry-After, body, Location) of one POST."""
        connection = http.client.HTTPSConnection("127.0.0.1", self.https_port, context=self.tls, timeout=20)
        connection.request("POST", path, body, headers or {})
        response = connection.getresponse()
        answer = response.read()
        return response.status, response.getheader("Retry-After"), answer, response.getheader("Location")

    def smtp(self):
        return smtplib.SMTP_SSL("127.0.0.1", self.smtp_port, context=self.tls, timeout=20)

    def test_a_mail_over_tls_with_auth_is_recorded_as_sent(self):
        message = "Subject: APRS from KJ7ABC-7\r\n\r\nHello\r\n.leading dot\r\n"
        with self.smtp() as client:
            client.login("aprs", "test-password")
            refused = client.sendmail("aprs@example.org", ["me@example.org"], message)
        self.assertEqual(refused, {})
        mails = [m for m in self.control("GET", "/control/mails")["mails"] if m["to"] == ["me@example.org"]]
        self.assertEqual(len(mails), 1)
        self.assertEqual(mails[0]["from"], "aprs@example.org")
        self.assertTrue(mails[0]["authenticated"])
        self.assertIn("Subject: APRS from KJ7ABC-7", mails[0]["data"])
        self.assertIn(".leading dot", mails[0]["data"])  # the dot stuffing undone, as a real server does

    def test_a_wrong_password_is_535(self):
        with self.smtp() as client:
            with self.assertRaises(smtplib.SMTPAuthenticationError) as caught:
                client.login("aprs", "wrong")
        self.assertEqual(caught.exception.smtp_code, 535)

    def test_a_refused_recipient_gets_its_code(self):
        self.control("POST", "/control/refuse", {"address": "Nobody@Example.org"})
        with self.smtp() as client:
            client.login("aprs", "test-password")
            with self.assertRaises(smtplib.SMTPRecipientsRefused) as caught:
                client.sendmail("aprs@example.org", ["nobody@example.org"], "Subject: x\r\n\r\nx\r\n")
        self.assertEqual(caught.exception.recipients["nobody@example.org"][0], 550)
        self.assertIn(b"5.1.1", caught.exception.recipients["nobody@example.org"][1])

    def test_a_refusal_carries_its_code_and_reply_and_can_be_lifted(self):
        for code, reply in ((552, "5.2.2 Mailbox full"), (452, "4.2.2 Mailbox full, try later")):
            self.control("POST", "/control/refuse", {"address": "full@example.org", "code": code, "reply": reply})
            with self.smtp() as client:
                client.login("aprs", "test-password")
                with self.assertRaises(smtplib.SMTPRecipientsRefused) as caught:
                    client.sendmail("aprs@example.org", ["full@example.org"], "Subject: x\r\n\r\nx\r\n")
            self.assertEqual(caught.exception.recipients["full@example.org"], (code, reply.encode()))
        self.control("POST", "/control/refuse", {"address": "full@example.org", "code": 0})
        with self.smtp() as client:
            client.login("aprs", "test-password")
            self.assertEqual(client.sendmail("aprs@example.org", ["full@example.org"], "Subject: x\r\n\r\nx\r\n"), {})

    def test_scripts_answer_their_body_and_headers(self):
        body = '{"code":42901,"http":429,"error":"limit reached: too many requests"}'
        self.control("POST", "/control/script", {"path": "/n", "status": 429, "body": body})
        self.control("POST", "/control/script",
                     {"path": "/n", "status": 308, "headers": {"Location": "https://elsewhere.example/n"}})
        status, _, answer, _ = self.exchange("/n", b"x")
        self.assertEqual((status, json.loads(answer)["code"]), (429, 42901))
        status, _, _, location = self.exchange("/n", b"x")
        self.assertEqual((status, location), (308, "https://elsewhere.example/n"))

    def test_an_ntfy_topic_refuses_wrong_tokens_and_then_this_address(self):
        self.control("POST", "/control/ntfy", {"path": "/topic-good", "token": "tk_good", "authFailureLimit": 3})
        self.control("POST", "/control/ntfy", {"path": "/topic-revoked", "token": "tk_new"})
        good = {"Authorization": "Bearer tk_good"}
        self.assertEqual(self.exchange("/topic-good", b"hi", good)[0], 200)
        status, _, answer, _ = self.exchange("/topic-good", b"hi")
        self.assertEqual((status, json.loads(answer)["code"]), (403, 40301))
        for _ in range(3):
            status, _, answer, _ = self.exchange("/topic-revoked", b"hi", {"Authorization": "Bearer tk_old"})
            self.assertEqual((status, json.loads(answer)["code"]), (401, 40101))
        # ntfy counts the failures per client address: now even the good token is refused.
        status, _, answer, _ = self.exchange("/topic-good", b"hi", good)
        self.assertEqual((status, json.loads(answer)["code"]), (429, 42909))

    def test_the_receiver_answers_scripts_and_gone_paths_and_records_raw_bodies(self):
        self.control("POST", "/control/script", {"path": "/s", "status": 503, "retryAfter": 7})
        self.assertEqual(self.post("/s", b"{}"), (503, "7"))
        self.assertEqual(self.post("/s", b"{}"), (200, None))
        self.control("POST", "/control/gone", {"path": "/g"})
        self.assertEqual(self.post("/g", b"x")[0], 410)
        body = b'{"text":"caf\xc3\xa9"}'
        self.post("/raw", body, {"X-APRS-Cloud-Signature": "t=1,v1=00"})
        record = self.control("GET", "/control/requests?path=/raw")["requests"][0]
        self.assertEqual(base64.b64decode(record["bodyBase64"]), body)
        self.assertEqual(record["headers"]["x-aprs-cloud-signature"], "t=1,v1=00")
        waited = self.control("POST", "/control/wait", {"kind": "http", "path": "/s", "count": 2, "timeoutMs": 1000})
        self.assertTrue(waited["ok"])
        self.assertFalse(self.control("POST", "/control/wait",
                                      {"kind": "http", "path": "/s", "count": 3, "timeoutMs": 100})["ok"])


if __name__ == "__main__":
    unittest.main()
