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
        connection = http.client.HTTPSConnection("127.0.0.1", self.https_port, context=self.tls, timeout=20)
        connection.request("POST", path, body, headers or {})
        response = connection.getresponse()
        response.read()
        return response.status, response.getheader("Retry-After")

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
