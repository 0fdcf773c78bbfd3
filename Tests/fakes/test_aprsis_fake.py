"""Tests of the fake APRS-IS server (Tests/fakes/aprsis_fake.py), standard library only.

Run: python3 -m unittest discover -s Tests/fakes -p 'test_*.py'

Each test starts its own fake on port 0 and drives it with plain sockets. Every read has a timeout.
"""

import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "aprsis_fake.py")
READ_TIMEOUT = 3.0
BANNER = b"# aprsc 2.1.21-gfake"
W1AW_PASSCODE = b"25988"


class Conn:
    """A line-oriented client socket; every read is bounded."""

    def __init__(self, port, rcvbuf=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(READ_TIMEOUT)
        self.sock.connect(("127.0.0.1", port))
        self.buf = b""
        self.eof = False

    def send(self, data: bytes):
        self.sock.sendall(data)

    def readline(self, timeout=READ_TIMEOUT):
        """The next line without its CR LF; None on EOF; raises socket.timeout."""
        deadline = time.monotonic() + timeout
        while b"\r\n" not in self.buf:
            if self.eof:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout("no line")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                self.eof = True
                if not self.buf:
                    return None
                line, self.buf = self.buf, b""
                return line
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def next_non_keepalive(self, timeout=READ_TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            line = self.readline(max(0.01, deadline - time.monotonic()))
            if line is None or not line.startswith(BANNER + b" "):
                return line

    def expect_silence(self, seconds):
        """True if nothing (not even EOF) arrives within seconds."""
        try:
            line = self.readline(seconds)
        except socket.timeout:
            return True
        raise AssertionError(f"expected silence, got {line!r}")

    def read_until_eof(self, timeout=READ_TIMEOUT):
        deadline = time.monotonic() + timeout
        lines = []
        while True:
            line = self.readline(max(0.01, deadline - time.monotonic()))
            if line is None:
                return lines
            lines.append(line)

    def login(self, login=b"N0CALL", pcode=b"13023", extra=b"", banner=True):
        if banner:
            assert self.readline() == BANNER
        self.send(b"user " + login + b" pass " + pcode + b" vers aprs-cloud 0.1" + extra + b"\r\n")
        line = self.next_non_keepalive()
        while line is not None and not line.startswith(b"# logresp"):
            line = self.next_non_keepalive()
        return line

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class FakeTestCase(unittest.TestCase):
    fake_args = []

    def setUp(self):
        self.errfile = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, FAKE, "--port", "0", "--control-port", "0", "--full-feed-port", "0", *self.fake_args],
            stdout=subprocess.PIPE,
            stderr=self.errfile,
        )
        ready, _, _ = select.select([self.proc.stdout], [], [], 5.0)
        if not ready:
            self.proc.kill()
            self.fail("fake did not report its ports")
        self.ports = json.loads(self.proc.stdout.readline())
        self.ctl_sock = socket.create_connection(("127.0.0.1", self.ports["control_port"]), timeout=10)
        self.ctl_file = self.ctl_sock.makefile("rwb")
        self.conns = []

    def tearDown(self):
        for conn in self.conns:
            conn.close()
        self.ctl_file.close()
        self.ctl_sock.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=3)
        self.proc.stdout.close()
        self.errfile.close()

    def ctl(self, **request):
        self.ctl_file.write(json.dumps(request).encode() + b"\n")
        self.ctl_file.flush()
        line = self.ctl_file.readline()
        self.assertTrue(line, "control connection closed")
        return json.loads(line)

    def ok(self, **request):
        reply = self.ctl(**request)
        self.assertTrue(reply.get("ok"), reply)
        return reply

    def connect(self, full=False, rcvbuf=None):
        conn = Conn(self.ports["full_feed_port" if full else "port"], rcvbuf)
        self.conns.append(conn)
        return conn

    def logged_in(self, login=b"N0CALL", pcode=b"13023", extra=b"", full=False):
        conn = self.connect(full)
        self.assertTrue(conn.login(login, pcode, extra).startswith(b"# logresp"))
        return conn

    def set_filter(self, conn, spec: bytes):
        conn.send(b"#filter " + spec + b"\r\n")
        self.assertEqual(conn.next_non_keepalive(), b"# filter " + spec + b" active")

    def inject(self, line, expect):
        reply = self.ok(cmd="inject", line=line)
        self.assertEqual(reply["delivered"], expect, line)
        return reply

    def history(self):
        return {h["id"]: h for h in self.ok(cmd="clients")["history"]}

    def wait_history(self, reason, timeout=3.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ended = [h for h in self.history().values() if h["ended"] == reason]
            if ended:
                return ended
            time.sleep(0.02)
        self.fail(f"no connection ended with {reason!r}: {self.history()}")


class LoginTests(FakeTestCase):
    def test_banner_comes_first(self):
        conn = self.connect()
        self.assertEqual(conn.readline(), BANNER)

    def test_verified_logins(self):
        conn = self.connect()
        self.assertEqual(conn.login(b"N0CALL", b"13023"), b"# logresp N0CALL verified, server T2FAKE")
        conn2 = self.connect()
        self.assertEqual(conn2.login(b"TESTING", b"31421"), b"# logresp TESTING verified, server T2FAKE")
        conn3 = self.connect()
        self.assertEqual(conn3.login(b"N0CALL-10", b"13023"), b"# logresp N0CALL-10 verified, server T2FAKE")
        clients = self.ok(cmd="clients")["clients"]
        self.assertEqual([c["verified"] for c in clients], [True, True, True])
        self.assertEqual(clients[0]["vers"], "aprs-cloud 0.1")
        self.assertEqual(self.ok(cmd="wait", what="login", count=3, timeout=1)["count"], 3)

    def test_logged_in_at_marks_the_logresp(self):
        before = time.time()
        conn = self.connect()
        # The TCP connect returns before the fake's loop has taken the connection: wait for it to count it.
        self.ok(cmd="wait", what="connect", count=1, timeout=5)
        self.assertIsNone(self.ok(cmd="clients")["clients"][0]["logged_in_at"])
        conn.login(b"N0CALL", b"13023")
        after = time.time()
        client = self.ok(cmd="clients")["clients"][0]
        self.assertTrue(before <= client["connected_at"] <= client["logged_in_at"] <= after, (before, client, after))
        conn.close()
        self.ok(cmd="wait", what="disconnect", count=1, timeout=5)
        ended = self.ok(cmd="clients")["history"][0]
        self.assertEqual(ended["logged_in_at"], client["logged_in_at"])

    def test_unverified_logins(self):
        conn = self.connect()
        self.assertEqual(conn.login(b"N0CALL", b"-1"), b"# logresp N0CALL unverified, server T2FAKE")
        conn2 = self.connect()
        self.assertEqual(conn2.login(b"TESTING", b"31420"), b"# logresp TESTING unverified, server T2FAKE")
        self.assertEqual([c["verified"] for c in self.ok(cmd="clients")["clients"]], [False, False])

    def test_vers_without_version_is_refused(self):
        conn = self.connect()
        self.assertEqual(conn.readline(), BANNER)
        conn.send(b"user N0CALL pass 13023 vers aprs-cloud\r\n")
        self.assertIn(b"invalid", conn.readline().lower())
        conn.send(b"user N0CALL pass 13023 vers aprs-cloud filter g/N0CALL\r\n")
        self.assertIn(b"invalid", conn.readline().lower())
        # still connected: a correct login works
        conn.send(b"user N0CALL pass 13023 vers aprs-cloud 0.1 filter g/N0CALL\r\n")
        self.assertEqual(conn.readline(), b"# logresp N0CALL verified, server T2FAKE")
        self.assertEqual(self.ok(cmd="clients")["clients"][0]["filter"], "g/N0CALL")

    def test_three_bad_login_lines_disconnect(self):
        conn = self.connect()
        self.assertEqual(conn.readline(), BANNER)
        conn.send(b"hello\r\nuser\r\nuser N0CALL pass 13023 vers onlyname\r\n")
        answers = conn.read_until_eof()
        self.assertEqual(len(answers), 3, answers)
        for answer in answers:
            self.assertTrue(b"invalid" in answer.lower() or b"not allowed" in answer.lower(), answer)
        self.assertEqual(self.wait_history("bad login")[0]["login"], None)

    def test_line_endings_cr_lf_crlf(self):
        for ending in (b"\n", b"\r", b"\r\n"):
            conn = self.connect()
            self.assertEqual(conn.readline(), BANNER)
            conn.send(b"user N0CALL-1 pass 13023 vers x 1" + ending)
            self.assertEqual(conn.readline(), b"# logresp N0CALL-1 verified, server T2FAKE")

    def test_second_verified_login_kicks_the_first(self):
        first = self.logged_in()
        second = self.logged_in()
        self.assertEqual(first.read_until_eof(), [])
        self.assertEqual(self.wait_history("kicked")[0]["id"], 1)
        self.assertEqual([c["id"] for c in self.ok(cmd="clients")["clients"]], [2])
        second.send(b"#filter g/X\r\n")
        self.assertEqual(second.readline(), b"# filter g/X active")

    def test_login_timeout(self):
        self.ok(cmd="set", login_timeout=0.3)
        conn = self.connect()
        self.assertEqual(conn.readline(), BANNER)
        self.assertEqual(conn.read_until_eof(), [])
        self.wait_history("login timeout")

    def test_keepalive_format_and_before_logresp(self):
        self.ok(cmd="set", keepalive=0.2, keepalive_before_logresp=True)
        conn = self.connect()
        self.assertEqual(conn.readline(), BANNER)
        conn.send(b"user N0CALL pass 13023 vers aprs-cloud 0.1\r\n")
        line = conn.readline()
        while line != b"# logresp N0CALL verified, server T2FAKE":
            self.assertTrue(line.startswith(BANNER + b" "), line)
            self.assertRegex(line, rb"^# aprsc 2\.1\.21-gfake \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT T2FAKE 127\.0\.0\.1:\d+$")
            line = conn.readline()
        self.assertTrue(conn.readline(1.0).startswith(BANNER + b" "))

    def test_refuse_logins(self):
        self.ok(cmd="set", refuse_logins=True)
        conn = self.connect()
        self.assertEqual(conn.readline(), BANNER)
        conn.send(b"user N0CALL pass 13023 vers aprs-cloud 0.1\r\n")
        self.assertIn(b"not allowed", conn.readline())
        self.assertEqual(conn.read_until_eof(), [])
        self.wait_history("refused")

    def test_banner_delay(self):
        self.ok(cmd="set", banner_delay=0.4)
        conn = self.connect()
        started = time.monotonic()
        conn.send(b"user N0CALL pass 13023 vers aprs-cloud 0.1\r\n")  # sent early: waits for the banner
        self.assertEqual(conn.readline(), BANNER)
        self.assertGreaterEqual(time.monotonic() - started, 0.35)
        self.assertEqual(conn.readline(), b"# logresp N0CALL verified, server T2FAKE")


class FilterTests(FakeTestCase):
    def test_filter_active_echo_even_with_parse_errors(self):
        conn = self.logged_in()
        conn.send(b"# a comment: ignored\r\n#FILTER g/N0CALL-5/OH7LZB\r\n")
        self.assertEqual(conn.next_non_keepalive(), b"# filter g/N0CALL-5/OH7LZB active")
        self.set_filter(conn, b"g/N0CALL-5/OH7LZB b/W1AW*")
        self.set_filter(conn, b"g/N0CALL zz/what r/60/25/100")
        client = self.ok(cmd="clients")["clients"][0]
        self.assertEqual(client["filter"], "g/N0CALL zz/what r/60/25/100")
        self.assertEqual(client["filters_received"][1:], ["g/N0CALL-5/OH7LZB b/W1AW*", "g/N0CALL zz/what r/60/25/100"])
        self.assertEqual(self.ok(cmd="wait", what="filter", count=3, timeout=1)["count"], 3)

    def test_filter_line_over_510_bytes_plus_crlf_is_dropped_silently(self):
        # Measured against aprsc 2.1.21: 510 bytes of content (512 with CR LF) are answered, 511 are dropped.
        conn = self.logged_in()
        self.set_filter(conn, b"g/KEEP")
        prefix = b"#filter g/"
        body = prefix + b"A" * (511 - len(prefix))  # 511 bytes of content
        self.assertEqual(len(body) + 2, 513)
        conn.send(body + b"\r\n")
        fits = prefix + b"B" * (510 - len(prefix))  # exactly 510 plus CR LF: accepted
        conn.send(fits + b"\r\n")
        self.assertEqual(conn.next_non_keepalive(), b"# filter " + fits[len(b"#filter ") :][:255] + b" active")
        client = self.ok(cmd="clients")["clients"][0]
        self.assertEqual(client["filters_dropped"], 1)
        self.assertEqual(len(client["filters_received"]), 2)
        # a dropped line leaves the filter unchanged
        self.set_filter(conn, b"g/KEEP")
        conn.send(body + b"\n")
        self.inject("SRC>APRS::KEEP     :still here{1", 1)
        self.assertEqual(conn.next_non_keepalive(), b"SRC>APRS::KEEP     :still here{1")

    def test_filter_answer_quotes_the_first_255_bytes_like_aprsc(self):
        # aprsc answers from a 256-byte copy of the spec (FILTER_S_SIZE): `# filter <first 255> active`.
        conn = self.logged_in()
        calls = [b"KJ%04d-%d" % (i, i % 15 + 1) for i in range(60)]
        full = b"g/" + b"/".join(calls)
        for length in (254, 255, 256, 500):
            spec = full[:length]
            self.assertEqual(len(spec), length)
            conn.send(b"#filter " + spec + b"\r\n")
            self.assertEqual(conn.next_non_keepalive(), b"# filter " + spec[:255] + b" active", length)
            # The filter in effect is the whole spec, not the quote.
            self.assertEqual(self.ok(cmd="clients")["clients"][0]["filter"], spec.decode())
        last = calls[40]
        self.assertTrue(255 < full.index(last) and full.index(last) + len(last) < 500)
        self.inject("SRC>APRS::" + last.decode().ljust(9) + ":beyond the quote{1", 1)
        self.assertEqual(conn.next_non_keepalive(), b"SRC>APRS::" + last.ljust(9) + b":beyond the quote{1")

    def test_filter_answer_echoes_blanks_and_sanitizes_like_aprsc(self):
        # aprsc takes everything after the one space verbatim and replaces control and non-ASCII bytes by `_`.
        conn = self.logged_in()
        conn.send(b"#filter  g/ABC  \r\n")
        self.assertEqual(conn.next_non_keepalive(), b"# filter  g/ABC   active")
        conn.send(b"#filter g/AB\xc3\xa9C\tD\r\n")
        self.assertEqual(conn.next_non_keepalive(), b"# filter g/AB__C_D active")

    def test_g_call_does_not_match_call_dash_zero(self):
        conn = self.logged_in(b"SVC", b"-1")
        self.set_filter(conn, b"g/N0CALL/KJ7*")
        self.inject("SRC>APRS::N0CALL-0 :zero{1", 0)
        self.inject("SRC>APRS::N0CALL0  :longer{2", 0)
        self.inject("SRC>APRS::n0call   :exact{3", 1)
        self.inject("SRC>APRS::KJ7XYZ-15:prefix{4", 1)
        self.inject("SRC>APRS::KJ6XYZ   :other{5", 0)
        self.assertEqual(conn.next_non_keepalive(), b"SRC>APRS::n0call   :exact{3")
        self.assertEqual(conn.next_non_keepalive(), b"SRC>APRS::KJ7XYZ-15:prefix{4")

    def test_own_packets_are_never_sent_back_even_when_the_filter_matches(self):
        sender = self.logged_in(b"W1AW", W1AW_PASSCODE, extra=b" filter g/OH7LZB b/W1AW")
        other = self.logged_in(b"OTHER", b"-1", extra=b" filter g/OH7LZB")
        line = b"W1AW>APZ001,TCPIP*::OH7LZB   :to a station I filter for{7"
        sender.send(line + b"\r\n")
        self.ok(cmd="wait", what="forwarded", count=1, timeout=2)
        self.assertEqual(other.next_non_keepalive(), b"W1AW>APZ001,TCPIP*,qAC,T2FAKE::OH7LZB   :to a station I filter for{7")
        self.assertTrue(sender.expect_silence(0.3))

    def test_duplicates_within_30s_are_dropped_wherever_they_come_from(self):
        conn = self.logged_in(b"SVC", b"-1", extra=b" filter g/OH7LZB")
        line = "W1AW>APRS,TCPIP*::OH7LZB   :same{1"
        self.inject(line, 1)
        self.ok(cmd="advance", seconds=29)
        self.assertTrue(self.ok(cmd="inject", line=line)["duplicate"])
        sender = self.logged_in(b"W1AW", W1AW_PASSCODE)
        sender.send(line.encode() + b"\r\n")
        self.ok(cmd="wait", what="transmitted", count=1, timeout=2)
        self.assertEqual(self.ok(cmd="transmitted")["transmitted"][0]["dropped"], "duplicate")
        self.ok(cmd="advance", seconds=2)
        self.inject(line, 1)
        self.assertEqual(conn.next_non_keepalive(), line.encode())
        self.assertEqual(conn.next_non_keepalive(), line.encode())

    def test_g_exact_ssid(self):
        conn = self.logged_in(b"SVC", b"-1")
        self.set_filter(conn, b"g/N0CALL-5")
        self.inject("SRC>APRS::N0CALL   :no{1", 0)
        self.inject("SRC>APRS::N0CALL-55:no{2", 0)
        self.inject("SRC>APRS::N0CALL-5 :yes{3", 1)
        self.assertEqual(conn.next_non_keepalive(), b"SRC>APRS::N0CALL-5 :yes{3")

    def test_g_case_insensitive_and_unpadded(self):
        conn = self.logged_in(b"SVC", b"-1")
        self.set_filter(conn, b"g/n0call")
        self.inject("SRC>APRS::N0CALL   :upper{1", 1)
        self.inject("SRC>APRS::n0call   :lower{2", 1)
        self.inject("SRC>APRS::N0CALL:unpadded{3", 1)
        self.assertEqual(
            [conn.next_non_keepalive() for _ in range(3)],
            [b"SRC>APRS::N0CALL   :upper{1", b"SRC>APRS::n0call   :lower{2", b"SRC>APRS::N0CALL:unpadded{3"],
        )

    def test_g_prefix(self):
        self.logged_in(b"SVC", b"-1", extra=b" filter g/N0C*")
        self.inject("SRC>APRS::N0CALL-7 :a", 1)
        self.inject("SRC>APRS::N0CX     :b", 1)
        self.inject("SRC>APRS::N1CALL   :c", 0)

    def test_g_entries_cut_to_nine(self):
        self.logged_in(b"SVC", b"-1", extra=b" filter g/ABCDEFGHIJK")
        self.inject("SRC>APRS::ABCDEFGHI:nine{1", 1)
        self.inject("SRC>APRS::ABCDEFGH :eight{1", 0)

    def test_g_acks_match_positions_do_not(self):
        self.logged_in(b"SVC", b"-1", extra=b" filter g/N0CALL")
        self.inject("SRC>APRS::N0CALL   :ack12", 1)
        self.inject("SRC>APRS::N0CALL   :rej13", 1)
        self.inject("N0CALL>APRS:!6028.51N/02505.68E#", 0)

    def test_b_matches_source_not_addressee(self):
        self.logged_in(b"SVC", b"-1", extra=b" filter b/OH7AA*")
        self.inject("OH7AA-1>APRS::SOMEONE  :from oh7aa", 1)
        self.inject("OH7AA-1>APRS:!6028.51N/02505.68E#", 1)
        self.inject("OTHER>APRS::OH7AA-1  :to oh7aa", 0)

    def test_third_party_matches_inner_addressee(self):
        conn = self.logged_in(b"SVC", b"-1", extra=b" filter g/DEF")
        line = "A-1>APRS,B-2,WIDE1*:}C>APU25N,TCPIP,A-1*::DEF      :ack56"
        self.inject(line, 1)
        self.assertEqual(conn.next_non_keepalive(), line.encode())
        self.inject("A-1>APRS,B-2,WIDE1*:}C>APU25N,TCPIP,A-1*::GHI      :hello{1", 0)

    def test_telemetry_metadata_is_not_a_message(self):
        self.logged_in(b"SVC", b"-1", extra=b" filter g/N0CALL")
        for kind in ("PARM", "UNIT", "EQNS", "BITS"):
            self.inject(f"N0CALL>APRS::N0CALL   :{kind}.Volt,Temp", 0)
        self.inject("N0CALL>APRS::N0CALL   :PARMESAN{1", 1)

    def test_or_of_parts_and_negative_part(self):
        self.logged_in(b"SVC", b"-1", extra=b" filter g/AAA b/BBB -b/BAD")
        self.inject("X>APRS::AAA      :1", 1)
        self.inject("BBB>APRS:>status", 1)
        self.inject("BAD>APRS::AAA      :2", 0)

    def test_g_wildcards_as_aprsc(self):
        # A trailing `*` is a prefix (the prefix itself included); a `*` elsewhere marks the entry as a
        # wildcard and is dropped; a `*` after 9 characters is lost; entries and keys ignore case.
        self.logged_in(b"SVC", b"-1", extra=b" filter g/n0c*/OH*DA/ABCDEFGHI*")
        self.inject("SRC>APRS::N0C      :prefix itself", 1)
        self.inject("SRC>APRS::n0call-15:lower case key", 1)
        self.inject("SRC>APRS::OHDA1    :star in the middle", 1)
        self.inject("SRC>APRS::OH1DA    :not a middle wildcard", 0)
        self.inject("SRC>APRS::ABCDEFGHI:nine", 1)
        self.inject("SRC>APRS::ABCDEFGH :eight", 0)

    def test_bare_star_matches_nothing(self):
        conn = self.logged_in(b"SVC", b"-1")
        self.set_filter(conn, b"g/* b/*")
        self.inject("SRC>APRS::N0CALL   :to anyone{1", 0)
        self.inject("N0CALL>APRS:!6028.51N/02505.68E#", 0)
        self.set_filter(conn, b"g/*/K*")
        self.inject("SRC>APRS::K1ABC    :k{1", 1)
        self.inject("SRC>APRS::W1AW     :w{1", 0)

    def test_widest_prefix_line_fits_and_matches_every_call(self):
        conn = self.logged_in(b"SVC", b"-1")
        spec = b"g/" + b"/".join(bytes([c]) + b"*" for c in b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        self.set_filter(conn, spec)
        for addressee in ("2E0ABC", "K1ABC-7", "ZZ9ZZZ-15", "BLN1"):
            self.inject(f"SRC>APRS::{addressee:<9}:hi", 1)

    def test_b_wildcards_match_the_source(self):
        self.logged_in(b"SVC", b"-1", extra=b" filter b/kj7*/W1AW")
        self.inject("KJ7ABC-9>APRS:>status", 1)
        self.inject("W1AW>APRS:>status", 1)
        self.inject("W1AW-1>APRS:>status", 0)

    def test_filter_command_forms(self):
        conn = self.logged_in()
        self.set_filter(conn, b"g/KEEP b/X* -b/BAD r/60/25/10")
        conn.send(b"#filter?\r\n")
        self.assertEqual(conn.next_non_keepalive(), b"# filters: -b/BAD g/KEEP b/X* r/60/25/10 ")
        for bad in (b"#filter", b"#filterg/OTHER"):
            conn.send(bad + b"\r\n")
            self.assertEqual(
                conn.next_non_keepalive(), b"# Filter: Bad input, no space character after filter command"
            )
        self.inject("SRC>APRS::KEEP     :still{1", 1)
        self.assertEqual(conn.next_non_keepalive(), b"SRC>APRS::KEEP     :still{1")
        conn.send(b"#filter default\r\n")
        self.assertEqual(conn.next_non_keepalive(), b"# User filters reset to default")
        self.inject("SRC>APRS::KEEP     :gone{2", 0)
        # Any `#` line with the word filter is a filter command, as in aprsc: never send one by accident.
        conn.send(b"# a comment about my FILTER g/OOPS\r\n")
        self.assertEqual(conn.next_non_keepalive(), b"# filter g/OOPS active")
        self.inject("SRC>APRS::OOPS     :oops{3", 1)
        self.assertEqual(conn.next_non_keepalive(), b"SRC>APRS::OOPS     :oops{3")
        conn.send(b"#filter \r\n")
        self.assertEqual(conn.next_non_keepalive(), b"# filter  active")
        self.inject("SRC>APRS::OOPS     :cleared{4", 0)

    def test_login_call_gets_messages_without_filter(self):
        conn = self.logged_in(b"N0CALL-10", b"13023")
        self.inject("SRC>APRS::N0CALL-10:for the login{1", 1)
        self.inject("SRC>APRS::N0CALL   :other ssid{1", 0)
        self.assertEqual(conn.next_non_keepalive(), b"SRC>APRS::N0CALL-10:for the login{1")

    def test_full_feed_gets_everything(self):
        user = self.logged_in(b"SVC", b"-1")
        full = self.logged_in(b"FULL", b"-1", full=True)
        self.inject("SRC>APRS:!6028.51N/02505.68E#", 1)
        self.assertEqual(full.next_non_keepalive(), b"SRC>APRS:!6028.51N/02505.68E#")
        full.send(b"#filter g/X\r\n")
        self.assertEqual(full.next_non_keepalive(), b"# No user-specified filters on this port")
        self.assertTrue(user.expect_silence(0.2))


class TransmitTests(FakeTestCase):
    def test_three_hour_rule_and_courtesy_position(self):
        conn = self.logged_in()  # N0CALL, verified, no filter
        conn.send(b"W1AW>APZ001,TCPIP*::SENDER   :ack1\r\n")
        self.ok(cmd="wait", what="transmitted", count=1, timeout=2)
        self.inject("SENDER>APRS::W1AW     :hi again{2", 1)
        self.assertEqual(conn.next_non_keepalive(), b"SENDER>APRS::W1AW     :hi again{2")
        self.inject("OTHER>APRS:!6028.51N/02505.68E#", 0)
        self.inject("SENDER>APRS:!6028.51N/02505.68E#", 1)  # the courtesy position, once
        self.assertEqual(conn.next_non_keepalive(), b"SENDER>APRS:!6028.51N/02505.68E#")
        self.inject("SENDER>APRS:!6028.52N/02505.68E#", 0)
        self.ok(cmd="advance", seconds=3 * 3600 + 1)
        self.inject("SENDER>APRS::W1AW     :too late{3", 0)

    def test_unverified_transmission_is_dropped(self):
        watcher = self.logged_in(b"WATCH", b"-1", full=True)
        conn = self.logged_in(b"N0CALL", b"-1")
        conn.send(b"W1AW>APZ001,TCPIP*::OH7LZB   :ack1\r\n")
        self.ok(cmd="wait", what="transmitted", count=1, timeout=2)
        record = self.ok(cmd="transmitted")["transmitted"][0]
        self.assertTrue(record["dropped_unverified"])
        self.assertIsNone(record["forwarded"])
        self.assertTrue(watcher.expect_silence(0.3))
        # nor does it count for the 3 h rule: only the full-feed watcher gets a message to W1AW
        self.inject("OH7LZB>APRS::W1AW     :x{1", 1)
        self.assertTrue(conn.expect_silence(0.2))

    def test_duplicate_within_30s_dropped_then_accepted_after_advance(self):
        watcher = self.logged_in(b"WATCH", b"-1", full=True)
        conn = self.logged_in()
        ack = b"OH7LZB>APZ001,TCPIP*::OH7AA-1  :ack42"
        conn.send(ack + b"\r\n")
        conn.send(ack.replace(b"APZ001", b"APZ001-3") + b"\n")  # destination SSID does not matter
        self.ok(cmd="wait", what="transmitted", count=2, timeout=2)
        self.ok(cmd="advance", seconds=31)
        conn.send(ack + b"\r\n")
        self.ok(cmd="wait", what="transmitted", count=3, timeout=2)
        records = self.ok(cmd="transmitted")["transmitted"]
        self.assertEqual([r["duplicate"] for r in records], [False, True, False])
        self.assertEqual(records[0]["forwarded"], "OH7LZB>APZ001,TCPIP*,qAS,N0CALL::OH7AA-1  :ack42")
        self.assertGreaterEqual(records[2]["at"] - records[0]["at"], 31)
        self.assertEqual(watcher.next_non_keepalive(), b"OH7LZB>APZ001,TCPIP*,qAS,N0CALL::OH7AA-1  :ack42")
        self.assertEqual(watcher.next_non_keepalive(), b"OH7LZB>APZ001,TCPIP*,qAS,N0CALL::OH7AA-1  :ack42")
        self.assertTrue(watcher.expect_silence(0.2))
        self.ok(cmd="clear")
        self.assertEqual(self.ok(cmd="transmitted")["transmitted"], [])

    def test_q_construct_for_login_source(self):
        conn = self.logged_in(b"W1AW", W1AW_PASSCODE)
        conn.send(b"W1AW>APZ001,TCPIP*:>status\r\n")
        self.ok(cmd="wait", what="forwarded", count=1, timeout=2)
        self.assertEqual(self.ok(cmd="transmitted")["transmitted"][0]["forwarded"], "W1AW>APZ001,TCPIP*,qAC,T2FAKE:>status")

    def test_verified_client_passes_other_sources_with_qAS_like_aprsc(self):
        # A message a server sends for a registered station: source the station, not the login.
        watcher = self.logged_in(b"WATCH", b"-1", full=True)
        filtered = self.logged_in(b"OTHER", b"-1", extra=b" filter g/OH7LZB")
        addressee = self.logged_in(b"OH7LZB", b"-1")  # messages to the login call reach it whatever the filter
        conn = self.logged_in(b"W1AW", W1AW_PASSCODE)
        line = b"N0CALL-7>APRS,TCPIP*::OH7LZB   :hello there{12"
        conn.send(line + b"\r\n")
        self.ok(cmd="wait", what="forwarded", count=1, timeout=2)
        forwarded = b"N0CALL-7>APRS,TCPIP*,qAS,W1AW::OH7LZB   :hello there{12"
        record = self.ok(cmd="transmitted")["transmitted"][0]
        self.assertEqual((record["dropped"], record["forwarded"]), (None, forwarded.decode()))
        for other in (watcher, filtered, addressee):
            self.assertEqual(other.next_non_keepalive(), forwarded)
        self.assertTrue(conn.expect_silence(0.2), "never echoed to the client that sent it")
        # The answer comes back to the sending connection by the 3 h rule (it transmitted for N0CALL-7).
        self.inject("OH7LZB>APRS,TCPIP*,qAC,T2FAKE::N0CALL-7 :ack12", 2)  # the full feed and the sender
        self.assertEqual(conn.next_non_keepalive(), b"OH7LZB>APRS,TCPIP*,qAC,T2FAKE::N0CALL-7 :ack12")
        # An unverified client's packet for another source is dropped.
        addressee.send(b"N0CALL-8>APRS,TCPIP*::W1AW     :x{1\r\n")
        self.ok(cmd="wait", what="transmitted", count=2, timeout=2)
        self.assertEqual(self.ok(cmd="transmitted")["transmitted"][1]["dropped"], "unverified")

    def test_disallowed_source_calls_are_dropped_like_aprsc(self):
        watcher = self.logged_in(b"WATCH", b"-1", full=True)
        conn = self.logged_in(b"W1AW", W1AW_PASSCODE)
        for source in (b"N0CALL", b"NOCALL", b"SERVER", b"N0CALL-7"):
            conn.send(source + b">APRS,TCPIP*::OH7LZB   :hi{1\r\n")
        self.ok(cmd="wait", what="transmitted", count=4, timeout=2)
        records = self.ok(cmd="transmitted")["transmitted"]
        self.assertEqual(
            [r["dropped"] for r in records], ["disallowed source", "disallowed source", "disallowed source", None]
        )
        self.assertEqual(watcher.next_non_keepalive(), b"N0CALL-7>APRS,TCPIP*,qAS,W1AW::OH7LZB   :hi{1")
        self.assertTrue(watcher.expect_silence(0.2))
        self.assertEqual(self.ok(cmd="stats")["stats"]["dropped_disallowed_source"], 3)
        # Its own login's packets too: a station logged in as N0CALL can receive but never send.
        own = self.logged_in(b"N0CALL", b"13023")
        own.send(b"N0CALL>APRS,TCPIP*:>status\r\n")
        self.ok(cmd="wait", what="transmitted", count=5, timeout=2)
        self.assertEqual(self.ok(cmd="transmitted")["transmitted"][4]["dropped"], "disallowed source")

    def test_inject_duplicate(self):
        self.logged_in(b"SVC", b"-1", extra=b" filter g/N0CALL")
        line = "SRC>APRS,WIDE1-1::N0CALL   :hello{7"
        self.assertFalse(self.inject(line, 1)["duplicate"])
        self.assertTrue(self.inject(line.replace("WIDE1-1", "qAR,IGATE"), 0)["duplicate"])  # path ignored
        self.ok(cmd="advance", seconds=30)
        self.assertFalse(self.inject(line, 1)["duplicate"])

    def test_long_and_invalid_packets_dropped(self):
        conn = self.logged_in(b"OH7LZB", b"20900")
        conn.send(b"OH7LZB>APZ001:>" + b"x" * (513 - 2 - 15) + b"\r\n")  # 513 with CR LF
        conn.send(b"not a packet\r\n")
        conn.send(b"OH7LZB>APZ001:>" + b"y" * (512 - 2 - 15) + b"\r\n")  # 512: fine
        self.ok(cmd="wait", what="transmitted", count=3, timeout=2)
        self.assertEqual([r["dropped"] for r in self.ok(cmd="transmitted")["transmitted"]], ["too long", "invalid", None])

    def test_bytes_are_forwarded_untouched(self):
        watcher = self.logged_in(b"WATCH", b"-1", full=True)
        conn = self.logged_in(b"W1AW", W1AW_PASSCODE)
        raw = b"W1AW>APZ001::OH7LZB   :\xe4\xf6 \xff\x80{1"
        conn.send(raw + b"\r\n")
        self.assertEqual(watcher.next_non_keepalive(), raw.replace(b"APZ001", b"APZ001,qAC,T2FAKE"))
        self.ok(cmd="inject", hex=raw.replace(b"{1", b"{2").hex())
        self.assertEqual(watcher.next_non_keepalive(), raw.replace(b"{1", b"{2"))


class BadBehaviourTests(FakeTestCase):
    def test_slow_reader_is_disconnected(self):
        slow = self.connect(rcvbuf=4096)
        self.assertTrue(slow.login().startswith(b"# logresp"))
        reply = self.ok(cmd="flood", bytes=512 * 1024)
        self.assertEqual(reply["disconnected"], [1])
        self.wait_history("slow reader")
        slow.read_until_eof(timeout=5)  # what was already in flight, then EOF
        self.assertTrue(slow.eof)

    def test_paced_flood_spares_a_reader_and_drops_a_stuck_one(self):
        reader = self.logged_in()
        stuck = self.connect(rcvbuf=4096)
        self.assertTrue(stuck.login(b"TESTING", b"31421").startswith(b"# logresp"))
        self.ok(cmd="set", max_output=16384)
        got = []

        def read_all():
            while True:
                try:
                    line = reader.readline(1.0)
                except socket.timeout:
                    return
                if line is None:
                    return
                got.append(line)

        thread = threading.Thread(target=read_all)
        thread.start()
        reply = self.ok(cmd="flood", bytes=300_000, pace=True, pace_timeout=0.5)
        thread.join(timeout=10)
        self.assertEqual(reply["disconnected"], [2])
        self.assertEqual(reply["sent"]["1"], 300_000)
        self.assertEqual(len([l for l in got if l.startswith(b"# flood")]), 3_000)
        self.assertEqual([h["ended"] for h in self.history().values()], ["slow reader"])

    def test_paced_inject_costs_one_timeout_for_a_stuck_reader(self):
        stuck = self.connect(rcvbuf=4096)
        self.assertTrue(stuck.login().startswith(b"# logresp"))  # N0CALL, no filter
        lines = [f"SRC>APRS::N0CALL   :message number {i:05d} " + "x" * 60 + f"{{{i}" for i in range(3000)]
        started = time.monotonic()
        reply = self.ok(cmd="inject", lines=lines, pace_timeout=0.3)
        self.assertLess(time.monotonic() - started, 3.0)
        self.assertLess(reply["delivered"], 3000)
        self.wait_history("slow reader")

    def test_undrained_output_times_out(self):
        self.ok(cmd="set", drain_timeout=0.3, max_output=10_000_000)
        slow = self.connect(rcvbuf=4096)
        self.assertTrue(slow.login().startswith(b"# logresp"))
        self.assertEqual(self.ok(cmd="flood", bytes=256 * 1024)["disconnected"], [])
        self.wait_history("slow reader")

    def test_silence_stops_keepalives(self):
        self.ok(cmd="set", keepalive=0.15)
        conn = self.logged_in()
        self.assertTrue(conn.readline(1.0).startswith(BANNER + b" "))
        self.assertEqual(self.ok(cmd="silence", on=True)["silenced"], 1)
        try:  # a keepalive may have been in flight
            while True:
                conn.readline(0.2)
        except socket.timeout:
            pass
        self.assertTrue(conn.expect_silence(0.6))
        self.assertEqual(self.inject("SRC>APRS::N0CALL   :lost{1", 0)["delivered"], 0)
        conn.send(b"#filter g/X\r\n")  # processed, not answered
        self.ok(cmd="wait", what="filter", count=1, timeout=2)
        self.assertTrue(conn.expect_silence(0.3))
        self.ok(cmd="silence", on=False)
        self.assertTrue(conn.readline(1.0).startswith(BANNER + b" "))

    def test_close_all(self):
        first = self.logged_in()
        second = self.connect()
        self.assertEqual(second.readline(), BANNER)
        self.assertEqual(self.ok(cmd="close_all")["closed"], 2)
        self.assertEqual(first.read_until_eof(), [])
        self.assertEqual(second.read_until_eof(), [])
        self.assertEqual(sorted(h["ended"] for h in self.history().values()), ["closed by control"] * 2)
        self.assertEqual(self.ok(cmd="clients")["clients"], [])

    def test_garbage_preset(self):
        conn = self.logged_in()
        self.assertEqual(self.ok(cmd="garbage", preset="standard", hex=["00ff41"], lines=["junk"])["clients"], 1)
        lines = [conn.next_non_keepalive() for _ in range(7)]
        self.assertEqual(lines[:2], [b"junk", b"\x00\xffA"])  # "lines" and "hex" first, then the preset
        self.assertEqual(len(lines[3]) + 2, 600)
        self.assertIn(b"\x00\xff", lines[4])
        self.assertEqual(lines[6], b">")
        self.ok(cmd="garbage", hex="ff00", crlf=False)  # exact bytes, no line end
        self.ok(cmd="garbage", lines=["tail"])
        self.assertEqual(conn.readline(), b"\xff\x00tail")

    def test_wait_timeout_and_bad_requests(self):
        reply = self.ctl(cmd="wait", what="login", count=1, timeout=0.2)
        self.assertEqual((reply["ok"], reply["error"]), (False, "timeout"))
        self.assertFalse(self.ctl(cmd="nope")["ok"])
        self.assertFalse(self.ctl(cmd="inject", line="no packet here")["ok"])
        self.ctl_file.write(b"{not json\n")
        self.ctl_file.flush()
        self.assertFalse(json.loads(self.ctl_file.readline())["ok"])
        self.assertTrue(self.ok(cmd="stats")["stats"] is not None)

    def test_sigterm_exits_zero(self):
        self.logged_in()
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(timeout=3), 0)
        self.assertLess(time.monotonic() - started, 2)

    def test_ready_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ready.json")
            proc = subprocess.Popen(
                [sys.executable, FAKE, "--port", "0", "--control-port", "0", "--ready-file", path],
                stdout=subprocess.DEVNULL,
            )
            try:
                deadline = time.monotonic() + 5
                while not os.path.exists(path) and time.monotonic() < deadline:
                    time.sleep(0.02)
                with open(path) as f:
                    ready = json.loads(f.read())
                self.assertGreater(ready["port"], 0)
                self.assertIsNone(ready["full_feed_port"])
            finally:
                proc.terminate()
                self.assertEqual(proc.wait(timeout=3), 0)


if __name__ == "__main__":
    unittest.main()
