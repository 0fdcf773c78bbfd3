#!/usr/bin/env python3
"""A fake APRS-IS server that behaves like aprsc 2.1 where the listener depends on it.

Python 3.11 standard library only (asyncio). Binds 127.0.0.1 only.

Usage:
    python3 Tests/fakes/aprsis_fake.py --port 0 --control-port 0 [--full-feed-port 0]
        [--keepalive 20] [--server-name T2FAKE] [--ready-file PATH] [--login-timeout 30]
        [--dup-window 30] [--max-output 8192] [--drain-timeout 25] [--sndbuf 4096] [--verbose]

After binding it writes one JSON line to stdout (flushed) and, atomically, to --ready-file:
    {"port": N, "control_port": M, "full_feed_port": K}        (full_feed_port is null without the option)
then serves until SIGTERM or SIGINT, which make it exit 0 at once.

Client ports (user-filter port `port`, full feed `full_feed_port`)
------------------------------------------------------------------
- The server speaks first: `# aprsc 2.1.21-gfake`. Every line it sends ends in CR LF. Client lines may end in
  CR, LF or CR LF; empty lines are skipped; lines are bytes and are never decoded and re-encoded when forwarded.
- Login: `user LOGIN pass PASSCODE vers SOFTNAME SOFTVERSION [filter SPEC...]` (keywords case-insensitive;
  any word containing `filter` starts the filter, as in aprsc). Answer `# logresp LOGIN verified, server T2FAKE`
  when PASSCODE is the APRS-IS passcode of LOGIN's base call, else `... unverified, ...` (pass -1, wrong, none).
  `#` lines before login are ignored. Bad login lines each get a `#` answer containing `invalid` or
  `not allowed` and count; the 3rd bad line closes the connection ("bad login"):
    too few words                 -> `# Invalid login string, too few arguments`
    first word not `user`         -> `# Invalid login command`
    LOGIN longer than 9           -> `# Invalid username format`
    LOGIN not [A-Za-z0-9]+(-[A-Za-z0-9]+)? -> `# Invalid username format, not allowed`
    LOGIN `pass` or the server name -> `# Login by user not allowed`
    `vers` without name and version -> `# Invalid login string, no software version after vers`
      (a version word containing `filter` counts as missing: aprsc would take `filter` as the version and the
      filter would be lost; the fake refuses so that the mistake shows up in tests).
  A login without `vers` at all is accepted (aprsc accepts it); `clients` shows `vers` null.
  A filter on the full-feed port gets `# No user-specified filters on this port` (aprsc), login continues.
  Unknown filter types in the login line get `# Parse errors on filter spec: 'PART'` before the logresp.
  No login within --login-timeout seconds -> disconnect ("login timeout").
  A second *verified* login with the same LOGIN (case-insensitive, either port) kicks every older verified
  connection with that LOGIN ("kicked").
- Keepalive: `# aprsc 2.1.21-gfake 29 Nov 2026 14:00:00 GMT T2FAKE 127.0.0.1:PORT` every --keepalive
  seconds (date from the fake clock; 0 disables), to every connection that got the banner, logged in or not.
- `#filter SPEC` (after login): as in aprsc, any `#` line that contains `filter` (any case, anywhere: aprsc
  looks for the word with memcasestr) is a filter command, taken from that word on. A line longer than 510
  bytes plus CR LF (more than 510 bytes of content, whatever line end the client used; aprsc's
  `PACKETLEN_MAX` 512 in src/worker.h, checked in src/incoming.c for every line) is dropped silently first: no
  answer, filter unchanged. Then, after the word:
    ` SPEC`    replaces the whole filter and answers `# filter QUOTE active` even when parts did not parse (an
               empty SPEC clears the filter). SPEC is everything after that one space, blanks included. QUOTE
               is what aprsc quotes (src/filter.c filter_commands): the first 255 bytes of SPEC only (it keeps
               a 256-byte copy, `FILTER_S_SIZE` in src/worker.h), every control or non-ASCII byte replaced by
               `_` (sanitize_ascii_string); the filter itself is the whole SPEC;
    ` default` (any case) clears it: `# User filters reset to default`;
    `?`        answers `# filters: ` and the parts that parsed, negative ones first, each followed by a space;
    anything else (`#filter` alone, `#filterX`) answers
               `# Filter: Bad input, no space character after filter command` and leaves the filter unchanged.
  Other `#` lines are ignored. On the full-feed port `#filter` gets `# No user-specified filters on this port`.
- Filter semantics (user port): parts separated by blanks are OR-ed; `-` before a part makes it a negative
  part (a packet matching any negative part is not passed by the filter). Implemented: `g/A/B/...` (message
  addressee) and `b/A/B/...` (packet source, the outer one for third-party packets, cut to 9 characters).
  Entries follow aprsc's callsign sets (hessu/aprsc src/filter.c: filter_parse_one_callsignset,
  filter_match_on_callsignset with MatchWild): at most 9 characters of an entry are kept (the rest is
  ignored); a `*` among them marks a wildcard and is dropped (`N0C*` is the prefix `N0C`; a `*` after 9
  characters is lost, so `ABCDEFGHI*` is exact); matching ignores case (strncasecmp); an empty entry, so a
  bare `*`, never matches; a wildcard entry matches every key that starts with it, any other entry only the
  whole key, SSID included. Other aprsc filter types (a d e f m o p q r s t u) parse but never match;
  unknown types are ignored.
  A "message" is an info field `:ADDRESSEE:text` with the second `:` at most 10 bytes in (padded or not),
  after unwrapping third-party `}` packets to the innermost one; acks, rejs and bulletins are messages;
  telemetry metadata (`PARM.` `UNIT.` `EQNS.` `BITS.`) is not.
- Delivered on the user port whatever the filter: messages addressed to the login call (exact SSID,
  case-insensitive); messages addressed to any call this connection transmitted a packet as source (verified,
  well-formed, duplicates included) within the last 3 h of fake time; and, after such a 3 h delivery, the next
  position packet (`!` `=` `/` `@` `'` backtick) of the message's sender (the aprsc "courtesy position").
- Full-feed port: same login; every packet (injected or sent by another client) goes to every logged-in client.
- Client packets (non-`#` lines after login):
    longer than 512 bytes counting CR LF -> dropped (recorded, `dropped`: "too long"); aprsc drops them too,
      it never truncates;
    from an unverified login            -> dropped silently (`dropped_unverified`: true);
    not `SRC>DST[,PATH]:INFO`            -> dropped (`dropped`: "invalid");
    source `N0CALL`, `NOCALL` or `SERVER` -> dropped (`dropped`: "disallowed source"): aprsc's built-in
      `disallow_srccall` list, matched against the whole source call (`N0CALL-7` passes), for every client,
      the login's own packets included;
    otherwise the source is remembered for the 3 h rule, the q construct is appended
      (`,qAC,SERVER` when source == login, `,qAS,LOGIN` otherwise, as aprsc's q algorithm does for a verified
      client's packet with another source call, hessu/aprsc src/parse_qc.c; a path that already holds `qA?` is
      left as it is) and the duplicate filter applies: same source, destination without SSID and info field within
      --dup-window seconds of fake time of its first sighting -> dropped (`duplicate`: true). Accepted packets
      are delivered to the *other* clients like injected ones. The dup cache is shared with `inject`.
- Slow readers: after every write the transport's write buffer is checked; above --max-output bytes the
  client is disconnected ("slow reader"), as is a client whose pending output has not shrunk for
  --drain-timeout seconds. Accepted sockets get SO_SNDBUF = --sndbuf so the limit is reachable. The fake never
  blocks on a client.
- Client input lines longer than 8192 bytes (the login line may be about 8 KB) are discarded whole.

Control API (127.0.0.1:control_port): one JSON object per line in, one JSON line out per request,
`{"ok": true, ...}` or `{"ok": false, "error": "..."}`. Byte lines are shown as "line" (UTF-8, invalid bytes
replaced) plus "line_hex" (exact). Times ("at", "connected_at", "logged_in_at", "now") are fake-clock Unix
seconds (the wall clock until "advance" moves it).
  {"cmd":"inject","line":"SRC>DST,PATH::ADDRESSEE:text{1"}   also "lines":[...], "hex":"..."|[...], "lines_hex":[...]
      (text is sent as its UTF-8 bytes; hex gives exact bytes)
      A packet arriving from the network: dup-filtered, then delivered to each matching client.
      -> {"ok":true,"delivered":N,"duplicate":false,"results":[{"delivered":N,"duplicate":false},...]}
      ("delivered": connections the line was written to, summed over lines, silenced ones not counted;
      "duplicate": true if any line was a duplicate; "duplicates": how many.)
      Lines must parse as packets and be at most 510 bytes (512 with CR LF; aprsc never sends more); a bad
      line fails the whole request before anything is sent. Use "garbage" for junk.
      Delivery is paced: before each line, waits (at most "pace_timeout", default 2 s) for every logged-in
      client's pending output to fall below half of --max-output; a client still above it then is ignored by
      pacing until its output drains (so a stuck reader costs one timeout, then overflows and is dropped as
      aprsc would). "pace": false writes a real burst.
  {"cmd":"clients"} -> {"ok":true,"clients":[{"id","port":"user"|"full","remote_port","login","verified",
      "logged_in","vers","filter","login_filter","filters_received":[...],"filters_dropped","connected_at",
      "logged_in_at","lines_sent","packets_sent","silenced"}],"history":[{"id","port","login","verified",
      "ended","connected_at","logged_in_at","ended_at","lines_sent"}]}
      logged_in_at: when the logresp was sent (null before), i.e. when the login and its filter took effect.
      ended: "client closed", "kicked", "slow reader", "login timeout", "bad login", "closed by control",
      "refused", "connection error".
  {"cmd":"transmitted"} -> {"ok":true,"transmitted":[{"client","login","line","line_hex","forwarded",
      "duplicate","dropped_unverified","dropped","at"}]}   (dropped: null, "unverified", "duplicate",
      "too long", "invalid", "disallowed source"; forwarded: the line with its q construct, null when not
      forwarded)
  {"cmd":"clear"} -> empties the transmitted record.
  {"cmd":"wait","what":W,"count":N,"timeout":5} -> {"ok":true,"what":W,"count":C} once C >= N, else
      {"ok":false,"error":"timeout","count":C}. W: "login" (logresps sent), "filter" (#filter answers sent),
      "transmitted" (entries in the record, reset by clear), "forwarded" (accepted client packets),
      "connect", "disconnect". Counters other than "transmitted" count since start. timeout <= 120.
  {"cmd":"close_all"} (optional "rst":true for a TCP reset) -> {"ok":true,"closed":N}
  {"cmd":"close","client":ID} -> closes one connection ("closed by control").
  {"cmd":"silence","on":true|false} (optional "new":true: connections made while silent are silent too)
      Silenced connections get nothing at all (no keepalives, deliveries, answers) but stay open and keep
      being read; their input is still processed. on:false un-silences every connection.
      -> {"ok":true,"silenced":N}
  {"cmd":"garbage","lines":["text",...],"hex":["00ff",...],"preset":"standard","client":ID,"crlf":true}
      Sends raw lines ("lines", then "hex", then the preset; CR LF appended unless crlf:false) to every
      connection that got its banner (or to one), logged in or not. Preset "standard":
      a non-APRS text line, a 600-byte line, a line with NUL/0xFF/0x80 bytes, a line without ':', a bare '>'.
      -> {"ok":true,"clients":N,"lines":K}
  {"cmd":"flood","bytes":65536,"client":ID,"pace":false} -> writes comment lines (`# flood ...`, 100 bytes
      each with CR LF) to every logged-in connection (or one) until the byte count or a disconnect.
      Without pacing it is one burst that overflows --max-output for any client once the kernel buffers are
      full (the client's receive buffer: give `bytes` well above it, e.g. 16 MB for a default socket).
      With "pace": true it waits (up to "pace_timeout", default 2 s, once per stuck client) for the pending
      output to fall below half of --max-output: a client that reads survives, one that stopped reading is
      disconnected as a slow reader. Clients are flooded concurrently. -> {"ok":true,"sent":{"ID":bytes},"disconnected":[ids]}
  {"cmd":"advance","seconds":31} -> moves the fake clock forward. -> {"ok":true,"now":T}
  {"cmd":"set", any of "keepalive", "login_timeout", "refuse_logins", "keepalive_before_logresp",
      "banner_delay", "max_output", "drain_timeout", "dup_window"} -> {"ok":true,"settings":{...}}
      refuse_logins: a well-formed login gets `# Login by LOGIN not allowed: server full` and is closed
      ("refused"). keepalive_before_logresp: a keepalive line is sent just before each logresp.
      banner_delay: seconds before the banner; client input waits (unprocessed) until it is sent.
  {"cmd":"stats"} -> {"ok":true,"stats":{counters...},"now":T,"settings":{...}}
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import sys
import time

BANNER_SOFTWARE = b"aprsc 2.1.21-gfake"
MAX_PACKET = 512  # bytes including CR LF: longer client packets are dropped
MAX_FILTER_LINE = 512  # bytes including CR LF: longer #filter lines are dropped silently (aprsc PACKETLEN_MAX)
FILTER_QUOTE_MAX = 255  # bytes of a spec quoted in the `# filter ... active` answer (aprsc FILTER_S_SIZE - 1)
MAX_INPUT_LINE = 8192  # bytes including CR LF: longer input lines are discarded (login line ~8 KB)
MAX_PENDING_LINES = 1000  # client lines kept while the banner is delayed
HEARD_WINDOW = 3 * 3600  # the 3 h "transmitted for" rule
MAX_THIRD_PARTY_DEPTH = 5
TELEMETRY_PREFIXES = (b"PARM.", b"UNIT.", b"EQNS.", b"BITS.")
POSITION_TYPES = frozenset(bytes([c]) for c in b"!=/@'`")
KNOWN_FILTER_TYPES = frozenset(bytes([c]) for c in b"abdefgmopqrstu")
LINE_END = re.compile(rb"[\r\n]")
LOGIN_RE = re.compile(rb"^[A-Za-z0-9]+(-[A-Za-z0-9]+)?$")
Q_RE = re.compile(rb"^qA[A-Za-z]$")
# aprsc's built-in list of source calls it never passes (hessu/aprsc src/incoming.c, `disallow_srccall`;
# whole-call matches, so `N0CALL-7` is not on it). Such a call can receive but never send.
DISALLOWED_SOURCES = frozenset((b"N0CALL", b"NOCALL", b"SERVER"))


def passcode(call: bytes | str) -> int:
    """APRS-IS passcode: upper-case, trim, cut at the first '-', hash two bytes at a time from 0x73E2."""
    if isinstance(call, str):
        call = call.encode("latin-1")
    base = call.strip().upper().split(b"-", 1)[0]
    value = 0x73E2
    for i in range(0, len(base), 2):
        value ^= base[i] << 8
        if i + 1 < len(base):
            value ^= base[i + 1]
    return value & 0x7FFF


def show(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="replace")


def filter_quote(spec: bytes) -> bytes:
    """The spec as aprsc quotes it in `# filter ... active`: first 255 bytes, control/non-ASCII bytes -> `_`."""
    return bytes(b if 0x20 <= b < 0x7F else 0x5F for b in spec[:FILTER_QUOTE_MAX])


def atoi(word: bytes) -> int:
    m = re.match(rb"^\s*([+-]?\d+)", word)
    return int(m.group(1)) if m else 0


class Packet:
    """A parsed TNC2 line: outer source, destination, info; innermost message, if any."""

    __slots__ = ("line", "src", "dst", "path", "info", "addressee", "sender", "is_position")

    def __init__(self, line, src, dst, path, info):
        self.line = line
        self.src = src
        self.dst = dst
        self.path = path
        self.info = info
        self.addressee = None  # upper-case addressee when this is a message
        self.sender = src.upper()  # innermost source
        self.is_position = info[:1] in POSITION_TYPES

    @staticmethod
    def split(line: bytes):
        colon = line.find(b":")
        if colon < 0:
            return None
        header, info = line[:colon], line[colon + 1 :]
        gt = header.find(b">")
        if gt <= 0 or gt > 9 or not info:
            return None
        src = header[:gt]
        parts = header[gt + 1 :].split(b",")
        dst = parts[0]
        if not dst or len(dst) > 9 or b" " in src:
            return None
        return src, dst, parts[1:], info

    @classmethod
    def parse(cls, line: bytes):
        pieces = cls.split(line)
        if pieces is None:
            return None
        pkt = cls(line, *pieces)
        info, sender = pkt.info, pkt.src
        for _ in range(MAX_THIRD_PARTY_DEPTH):
            if info[:1] != b"}":
                break
            inner = cls.split(info[1:])
            if inner is None:
                return pkt
            sender, info = inner[0], inner[3]
        else:
            if info[:1] == b"}":
                return pkt
        if info[:1] == b":":
            idx = info.find(b":", 1, 11)
            if idx > 1:
                addressee = info[1:idx].strip(b" ").upper()
                text = info[idx + 1 :]
                if addressee and not text.startswith(TELEMETRY_PREFIXES):
                    pkt.addressee = addressee
                    pkt.sender = sender.upper()
        return pkt

    def dup_key(self):
        return (self.src, self.dst.split(b"-", 1)[0], self.info)


class CallSet:
    """The entries of a `g/` or `b/` part, parsed and matched like aprsc's callsign sets (see the module doc)."""

    def __init__(self, entries):
        self.exact = set()
        self.prefixes = []
        for entry in entries:
            text = bytearray()
            wildcard = False
            for byte in entry:
                if len(text) == 9:
                    break
                if byte == ord("*"):
                    wildcard = True
                else:
                    text.append(byte)
            if not text:
                continue  # a zero-length entry never matches
            text = bytes(text).upper()
            if wildcard:
                self.prefixes.append(text)
            else:
                self.exact.add(text)

    def match(self, call: bytes) -> bool:
        call = call[:9].upper()
        return call in self.exact or any(call.startswith(p) for p in self.prefixes)


class Filter:
    def __init__(self, spec: bytes = b""):
        self.spec = spec
        self.positive = []  # (kind, CallSet)
        self.negative = []
        self.positive_texts = []  # parts that parsed, as sent (negative ones without the `-`)
        self.negative_texts = []
        self.errors = []  # parts that did not parse
        for part in spec.split():
            neg = part.startswith(b"-")
            body = part[1:] if neg else part
            if len(body) < 2 or body[1:2] != b"/":
                self.errors.append(part)
                continue
            kind = body[:1].lower()
            if kind not in KNOWN_FILTER_TYPES:
                self.errors.append(part)
                continue
            if kind in (b"g", b"b"):
                if not body[2:]:  # no entry at all: aprsc's parser refuses the part
                    self.errors.append(part)
                    continue
                (self.negative if neg else self.positive).append((kind, CallSet(body[2:].split(b"/"))))
            # other known types: accepted, never match in the fake
            (self.negative_texts if neg else self.positive_texts).append(body)

    @staticmethod
    def _part_matches(kind, calls, pkt: Packet) -> bool:
        if kind == b"g":
            return pkt.addressee is not None and calls.match(pkt.addressee)
        return calls.match(pkt.src)

    def matches(self, pkt: Packet) -> bool:
        if not any(self._part_matches(k, c, pkt) for k, c in self.positive):
            return False
        return not any(self._part_matches(k, c, pkt) for k, c in self.negative)


class Client(asyncio.Protocol):
    def __init__(self, server: "FakeServer", kind: str):
        self.server = server
        self.kind = kind  # "user" or "full"
        self.id = 0
        self.transport = None
        self.inbuf = b""
        self.discarding = False
        self.closed = False
        self.end_reason = None
        self.banner_sent = False
        self.pending_lines = []
        self.logged_in = False
        self.logged_in_at = None
        self.login = None
        self.verified = False
        self.vers = None
        self.filter = Filter()
        self.login_filter = None
        self.filters_received = []
        self.filters_dropped = 0
        self.bad_logins = 0
        self.heard = {}  # upper-case source call -> fake time last transmitted
        self.courtesy = {}  # upper-case sender -> fake time a 3 h message was delivered
        self.silenced = False
        self.lines_sent = 0
        self.packets_sent = 0
        self.connected_at = server.now()
        self.connected_real = time.monotonic()
        self.next_keepalive = None
        self.last_buffer = 0
        self.last_drain = time.monotonic()
        self.not_keeping_up = False  # a pacing wait for this client timed out
        self.local = b"127.0.0.1:0"
        self.remote_port = None

    # connection lifecycle -----------------------------------------------------------------------------
    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.server.sndbuf)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        local = transport.get_extra_info("sockname") or ("127.0.0.1", 0)
        self.local = f"{local[0]}:{local[1]}".encode()
        peer = transport.get_extra_info("peername")
        self.remote_port = peer[1] if peer else None
        self.server.client_connected(self)
        if self.server.silence_new:
            self.silenced = True
        delay = self.server.settings["banner_delay"]
        if delay > 0:
            asyncio.get_running_loop().call_later(delay, self.send_banner)
        else:
            self.send_banner()

    def connection_lost(self, exc):
        self.server.client_gone(self, "connection error" if exc else "client closed")

    def close(self, reason: str, rst: bool = False):
        if self.closed:
            return
        if rst:
            try:
                sock = self.transport.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            except OSError:
                pass
        self.server.client_gone(self, reason)
        self.transport.abort()

    # output -------------------------------------------------------------------------------------------
    def send(self, line: bytes, crlf: bool = True, packet: bool = False) -> bool:
        if self.closed:
            return False
        if self.silenced:
            self.server.count("silenced_dropped_lines")
            return False
        self.transport.write(line + b"\r\n" if crlf else line)
        self.lines_sent += 1
        if packet:
            self.packets_sent += 1
        self.server.count("lines_sent")
        self.check_output()
        return not self.closed

    def check_output(self):
        if self.closed:
            return
        size = self.transport.get_write_buffer_size()
        now = time.monotonic()
        if size == 0 or size < self.last_buffer:
            self.last_drain = now
        if size == 0:
            self.not_keeping_up = False
        self.last_buffer = size
        if size > self.server.settings["max_output"]:
            self.server.count("slow_reader_disconnects")
            self.close("slow reader")
        elif size > 0 and now - self.last_drain > self.server.settings["drain_timeout"]:
            self.server.count("slow_reader_disconnects")
            self.close("slow reader")

    def send_banner(self):
        if self.closed or self.banner_sent:
            return
        self.send(b"# " + BANNER_SOFTWARE)
        self.banner_sent = True
        self.schedule_keepalive()
        pending, self.pending_lines = self.pending_lines, []
        for line in pending:
            if self.closed:
                return
            self.handle_line(line)

    def schedule_keepalive(self):
        interval = self.server.settings["keepalive"]
        self.next_keepalive = time.monotonic() + interval if interval > 0 else None

    def send_keepalive(self):
        stamp = time.strftime("%d %b %Y %H:%M:%S GMT", time.gmtime(self.server.now())).encode()
        if self.send(b"# " + BANNER_SOFTWARE + b" " + stamp + b" " + self.server.name + b" " + self.local):
            self.server.count("keepalives_sent")

    # input --------------------------------------------------------------------------------------------
    def data_received(self, data):
        if self.closed:
            return
        self.server.count("bytes_received", len(data))
        self.inbuf += data
        while not self.closed:
            m = LINE_END.search(self.inbuf)
            if m is None:
                if len(self.inbuf) + 2 > MAX_INPUT_LINE:
                    self.server.count("input_lines_too_long")
                    self.inbuf = b""
                    self.discarding = True
                return
            line, self.inbuf = self.inbuf[: m.start()], self.inbuf[m.end() :]
            if self.discarding:
                self.discarding = False
                continue
            if not line:
                continue
            if len(line) + 2 > MAX_INPUT_LINE:
                self.server.count("input_lines_too_long")
                continue
            self.server.count("lines_received")
            if not self.banner_sent:
                if len(self.pending_lines) < MAX_PENDING_LINES:
                    self.pending_lines.append(line)
            else:
                self.handle_line(line)

    def handle_line(self, line: bytes):
        if not self.logged_in:
            self.handle_login(line)
        elif line[:1] == b"#":
            word = line.lower().find(b"filter")
            if word >= 0:
                self.handle_filter(line, line[word + 6 :])
        else:
            self.handle_packet(line)

    def bad_login(self, answer: bytes):
        self.server.count("bad_login_lines")
        self.send(answer)
        self.bad_logins += 1
        if self.bad_logins >= 3 and not self.closed:
            self.close("bad login")

    def handle_login(self, line: bytes):
        args = line.split()
        if not args or args[0][:1] == b"#":
            return
        if len(args) < 2:
            return self.bad_login(b"# Invalid login string, too few arguments")
        if args[0].lower() != b"user":
            return self.bad_login(b"# Invalid login command")
        username = args[1]
        if len(username) > 9:
            return self.bad_login(b"# Invalid username format")
        if username.lower() == b"pass" or username.upper() == self.server.name.upper():
            return self.bad_login(b"# Login by user not allowed")
        if not LOGIN_RE.match(username):
            return self.bad_login(b"# Invalid username format, not allowed")
        given = None
        vers = None
        filter_words = None
        filter_refused = False
        i = 2
        while i < len(args):
            word = args[i].lower()
            if word == b"pass":
                if i + 1 < len(args):
                    given = atoi(args[i + 1])
                i += 2
            elif word == b"vers":
                name = args[i + 1] if i + 1 < len(args) else None
                version = args[i + 2] if i + 2 < len(args) else None
                if name is None or version is None or b"filter" in name.lower() or b"filter" in version.lower():
                    return self.bad_login(b"# Invalid login string, no software version after vers")
                vers = name + b" " + version
                i += 3
            elif b"filter" in word:
                if self.kind != "user":
                    filter_refused = True
                else:
                    filter_words = args[i + 1 :]
                break
            else:
                i += 1
        if self.server.settings["refuse_logins"]:
            self.server.count("refused_logins")
            self.send(b"# Login by " + username + b" not allowed: server full")
            self.close("refused")
            return
        if filter_refused:
            self.send(b"# No user-specified filters on this port")
        if filter_words is not None:
            spec = b" ".join(filter_words)
            self.login_filter = spec
            self.filter = Filter(spec)
            for part in self.filter.errors:
                self.send(b"# Parse errors on filter spec: '" + part + b"'")
        self.login = username
        self.vers = vers
        self.verified = given is not None and given >= 0 and given == passcode(username)
        if self.server.settings["keepalive_before_logresp"]:
            self.send_keepalive()
        logresp_at = self.server.now()
        self.send(
            b"# logresp "
            + username
            + (b" verified" if self.verified else b" unverified")
            + b", server "
            + self.server.name
        )
        if self.closed:
            return
        self.logged_in = True
        self.logged_in_at = logresp_at
        self.server.count("logins")
        self.server.count("logins_verified" if self.verified else "logins_unverified")
        if self.verified:
            self.server.kick_duplicates(self)

    def handle_filter(self, line: bytes, rest: bytes):
        """A filter command; `rest` is what follows the word `filter`."""
        if len(line) + 2 > MAX_FILTER_LINE:
            self.filters_dropped += 1
            self.server.count("filter_lines_dropped_too_long")
            return
        if self.kind != "user":
            self.send(b"# No user-specified filters on this port")
            return
        if rest == b"?":
            parts = [b"-" + p for p in self.filter.negative_texts] + self.filter.positive_texts
            self.send(b"# filters: " + b"".join(p + b" " for p in parts))
            self.server.count("filter_queries")
            return
        if rest[:1] != b" ":
            self.send(b"# Filter: Bad input, no space character after filter command")
            self.server.count("filter_bad_input")
            return
        spec = rest[1:]
        if spec.lower() == b"default":
            self.filter = Filter()
            self.filters_received.append(spec)
            self.send(b"# User filters reset to default")
            self.server.count("filters")
            return
        self.filter = Filter(spec)
        self.filters_received.append(spec)
        self.send(b"# filter " + filter_quote(spec) + b" active")
        self.server.count("filters")

    def handle_packet(self, line: bytes):
        server = self.server
        rec = {
            "client": self.id,
            "login": show(self.login),
            "line": show(line),
            "line_hex": line.hex(),
            "forwarded": None,
            "duplicate": False,
            "dropped_unverified": False,
            "dropped": None,
            "at": server.now(),
        }
        pkt = None
        if len(line) + 2 > MAX_PACKET:
            rec["dropped"] = "too long"
            server.count("dropped_too_long")
        elif not self.verified:
            rec["dropped_unverified"] = True
            rec["dropped"] = "unverified"
            server.count("dropped_unverified")
        else:
            pkt = Packet.parse(line)
            if pkt is None:
                rec["dropped"] = "invalid"
                server.count("dropped_invalid")
            elif pkt.src in DISALLOWED_SOURCES:
                rec["dropped"] = "disallowed source"
                server.count("dropped_disallowed_source")
                pkt = None
        if pkt is not None:
            self.heard[pkt.src.upper()] = server.now()
            header, info = line.split(b":", 1)
            if any(Q_RE.match(p) for p in pkt.path):
                forwarded = line
            elif pkt.src.upper() == self.login.upper():
                forwarded = header + b",qAC," + server.name + b":" + info
            else:
                forwarded = header + b",qAS," + self.login + b":" + info
            rec["forwarded"] = show(forwarded)
            if server.is_duplicate(pkt):
                rec["duplicate"] = True
                rec["dropped"] = "duplicate"
                rec["forwarded"] = None
                server.count("transmitted_duplicates")
            else:
                server.count("forwarded")
                fwd = Packet.parse(forwarded)
                server.route(fwd if fwd is not None else pkt, origin=self)
        server.transmitted.append(rec)
        server.count("transmitted")

    # delivery -----------------------------------------------------------------------------------------
    def delivery_reason(self, pkt: Packet):
        if self.kind == "full":
            return "full"
        if self.filter.matches(pkt):
            return "filter"
        if pkt.addressee is not None:
            if pkt.addressee == self.login.upper():
                return "login"
            at = self.heard.get(pkt.addressee)
            if at is not None and self.server.now() - at <= HEARD_WINDOW:
                return "heard"
        if pkt.is_position and pkt.src.upper() in self.courtesy:
            return "courtesy"
        return None

    def snapshot(self):
        return {
            "id": self.id,
            "port": self.kind,
            "remote_port": self.remote_port,
            "login": show(self.login),
            "verified": self.verified,
            "logged_in": self.logged_in,
            "vers": show(self.vers),
            "filter": show(self.filter.spec),
            "login_filter": show(self.login_filter),
            "filters_received": [show(f) for f in self.filters_received],
            "filters_dropped": self.filters_dropped,
            "connected_at": self.connected_at,
            "logged_in_at": self.logged_in_at,
            "lines_sent": self.lines_sent,
            "packets_sent": self.packets_sent,
            "silenced": self.silenced,
        }


class FakeServer:
    def __init__(self, args):
        self.name = args.server_name.encode()
        self.sndbuf = args.sndbuf
        self.verbose = args.verbose
        self.settings = {
            "keepalive": float(args.keepalive),
            "login_timeout": float(args.login_timeout),
            "refuse_logins": False,
            "keepalive_before_logresp": False,
            "banner_delay": 0.0,
            "max_output": int(args.max_output),
            "drain_timeout": float(args.drain_timeout),
            "dup_window": float(args.dup_window),
        }
        self.clock_offset = 0.0
        self.next_id = 1
        self.clients = {}  # id -> Client
        self.history = []
        self.transmitted = []
        self.dups = {}  # dup key -> fake time first seen
        self.counters = {}
        self.silence_new = False
        self.stopping = asyncio.Event()

    # helpers --------------------------------------------------------------------------------------------
    def now(self) -> float:
        return time.time() + self.clock_offset

    def count(self, name: str, n: int = 1):
        self.counters[name] = self.counters.get(name, 0) + n

    def log(self, *parts):
        if self.verbose:
            print("aprsis_fake:", *parts, file=sys.stderr, flush=True)

    def client_connected(self, client: Client):
        client.id = self.next_id
        self.next_id += 1
        self.clients[client.id] = client
        self.count("connects")
        self.log("connect", client.id, client.kind)

    def client_gone(self, client: Client, reason: str):
        if client.closed:
            return
        client.closed = True
        client.end_reason = reason
        self.clients.pop(client.id, None)
        self.history.append(
            {
                "id": client.id,
                "port": client.kind,
                "login": show(client.login),
                "verified": client.verified,
                "ended": reason,
                "connected_at": client.connected_at,
                "logged_in_at": client.logged_in_at,
                "ended_at": self.now(),
                "lines_sent": client.lines_sent,
            }
        )
        self.count("disconnects")
        self.log("disconnect", client.id, reason)

    def kick_duplicates(self, newer: Client):
        for other in list(self.clients.values()):
            if (
                other is not newer
                and other.logged_in
                and other.verified
                and other.login.upper() == newer.login.upper()
            ):
                self.count("kicked")
                other.close("kicked")

    def is_duplicate(self, pkt: Packet) -> bool:
        key = pkt.dup_key()
        now = self.now()
        first = self.dups.get(key)
        if first is not None and now - first < self.settings["dup_window"]:
            return True
        self.dups[key] = now
        return False

    def route(self, pkt: Packet, origin: Client | None = None) -> list:
        """Delivers pkt to every matching logged-in client except origin; returns the recipients."""
        recipients = []
        now = self.now()
        for client in list(self.clients.values()):
            if client is origin or not client.logged_in or client.closed:
                continue
            reason = client.delivery_reason(pkt)
            if reason is None:
                continue
            if reason == "heard":
                client.courtesy[pkt.sender] = now
            if pkt.is_position:
                client.courtesy.pop(pkt.src.upper(), None)
            if client.send(pkt.line, packet=True):
                recipients.append(client)
                self.count("packets_delivered")
        return recipients

    # ticker -----------------------------------------------------------------------------------------
    async def ticker(self):
        last_prune = time.monotonic()
        while not self.stopping.is_set():
            await asyncio.sleep(0.05)
            mono = time.monotonic()
            for client in list(self.clients.values()):
                if client.closed:
                    continue
                if not client.logged_in and mono - client.connected_real > self.settings["login_timeout"]:
                    self.count("login_timeouts")
                    client.close("login timeout")
                    continue
                if client.banner_sent and client.next_keepalive is not None and mono >= client.next_keepalive:
                    client.next_keepalive = mono + self.settings["keepalive"]
                    client.send_keepalive()
                if not client.closed:
                    client.check_output()
            if mono - last_prune > 1.0:
                last_prune = mono
                now = self.now()
                window = self.settings["dup_window"]
                self.dups = {k: t for k, t in self.dups.items() if now - t < window}
                for client in self.clients.values():
                    client.heard = {c: t for c, t in client.heard.items() if now - t <= HEARD_WINDOW}

    # control API ------------------------------------------------------------------------------------
    async def control_connection(self, reader, writer):
        try:
            while not self.stopping.is_set():
                try:
                    raw = await reader.readline()
                except (asyncio.LimitOverrunError, ValueError):
                    writer.write(b'{"ok":false,"error":"request line too long"}\n')
                    break
                if not raw:
                    break
                if not raw.strip():
                    continue
                try:
                    request = json.loads(raw)
                    if not isinstance(request, dict):
                        raise ValueError("a request is a JSON object")
                    reply = await self.dispatch(request)
                except Exception as exc:  # every failure becomes an error reply
                    reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
                writer.write(json.dumps(reply).encode() + b"\n")
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def dispatch(self, req: dict) -> dict:
        cmd = req.get("cmd")
        handler = getattr(self, "cmd_" + str(cmd), None)
        if handler is None:
            return {"ok": False, "error": f"unknown cmd {cmd!r}"}
        return await handler(req)

    @staticmethod
    def _byte_lines(req: dict, text_key: str, hex_key: str) -> list:
        out = []
        text = req.get(text_key)
        if isinstance(text, str):
            out.append(text.encode("utf-8"))
        elif isinstance(text, list):
            out.extend(str(t).encode("utf-8") for t in text)
        hexes = req.get(hex_key)
        if isinstance(hexes, str):
            out.append(bytes.fromhex(hexes))
        elif isinstance(hexes, list):
            out.extend(bytes.fromhex(str(h)) for h in hexes)
        return out

    async def cmd_inject(self, req):
        lines = self._byte_lines(req, "line", "hex") + self._byte_lines(req, "lines", "lines_hex")
        if not lines:
            return {"ok": False, "error": "inject needs line, lines or hex"}
        packets = []
        for line in lines:
            if b"\r" in line or b"\n" in line:
                return {"ok": False, "error": f"line contains CR or LF: {show(line)!r}"}
            if len(line) + 2 > MAX_PACKET:
                return {"ok": False, "error": "line longer than 510 bytes: aprsc never sends it; use garbage"}
            pkt = Packet.parse(line)
            if pkt is None:
                return {"ok": False, "error": f"not a packet (SRC>DST:INFO): {show(line)!r}; use garbage"}
            packets.append(pkt)
        pace = bool(req.get("pace", True))
        pace_timeout = min(float(req.get("pace_timeout", 2.0)), 30.0)
        results = []
        for pkt in packets:
            if pace:
                await self._pace(pace_timeout)
            self.count("injected")
            if self.is_duplicate(pkt):
                self.count("injected_duplicates")
                results.append({"delivered": 0, "duplicate": True})
                continue
            results.append({"delivered": len(self.route(pkt)), "duplicate": False})
        return {
            "ok": True,
            "delivered": sum(r["delivered"] for r in results),
            "duplicate": any(r["duplicate"] for r in results),
            "duplicates": sum(1 for r in results if r["duplicate"]),
            "results": results,
        }

    async def _pace(self, timeout: float, clients=None):
        """Waits until every (given) logged-in client's pending output is below half of --max-output.

        A client still above it after `timeout` is marked as not keeping up: pacing ignores it until its
        output drains completely, so a stuck reader costs one timeout and then overflows as in aprsc.
        """
        limit = self.settings["max_output"] // 2
        deadline = time.monotonic() + timeout
        while True:
            pool = self.clients.values() if clients is None else clients
            busy = [
                c
                for c in pool
                if c.logged_in
                and not c.closed
                and not c.not_keeping_up
                and c.transport.get_write_buffer_size() > limit
            ]
            if not busy:
                return
            if time.monotonic() >= deadline:
                for c in busy:
                    c.not_keeping_up = True
                return
            await asyncio.sleep(0.002)

    async def cmd_clients(self, req):
        return {
            "ok": True,
            "clients": [c.snapshot() for c in sorted(self.clients.values(), key=lambda c: c.id)],
            "history": list(self.history),
        }

    async def cmd_transmitted(self, req):
        return {"ok": True, "transmitted": list(self.transmitted)}

    async def cmd_clear(self, req):
        n = len(self.transmitted)
        self.transmitted.clear()
        return {"ok": True, "cleared": n}

    def _wait_count(self, what: str) -> int:
        if what == "transmitted":
            return len(self.transmitted)
        names = {
            "login": "logins",
            "filter": "filters",
            "forwarded": "forwarded",
            "connect": "connects",
            "disconnect": "disconnects",
        }
        return self.counters.get(names[what], 0)

    async def cmd_wait(self, req):
        what = req.get("what")
        if what not in ("login", "filter", "transmitted", "forwarded", "connect", "disconnect"):
            return {"ok": False, "error": f"unknown what {what!r}"}
        want = int(req.get("count", 1))
        timeout = max(0.0, min(float(req.get("timeout", 5)), 120.0))
        deadline = time.monotonic() + timeout
        while True:
            have = self._wait_count(what)
            if have >= want:
                return {"ok": True, "what": what, "count": have}
            if time.monotonic() >= deadline or self.stopping.is_set():
                return {"ok": False, "error": "timeout", "what": what, "count": have}
            await asyncio.sleep(0.01)

    async def cmd_close_all(self, req):
        victims = list(self.clients.values())
        for client in victims:
            client.close("closed by control", rst=bool(req.get("rst", False)))
        return {"ok": True, "closed": len(victims)}

    async def cmd_close(self, req):
        client = self.clients.get(int(req.get("client", -1)))
        if client is None:
            return {"ok": False, "error": "no such client"}
        client.close("closed by control", rst=bool(req.get("rst", False)))
        return {"ok": True, "closed": 1}

    async def cmd_silence(self, req):
        on = bool(req.get("on", True))
        if on:
            for client in self.clients.values():
                client.silenced = True
            self.silence_new = bool(req.get("new", False))
        else:
            self.silence_new = False
            for client in self.clients.values():
                client.silenced = False
                client.schedule_keepalive()
        return {"ok": True, "silenced": sum(1 for c in self.clients.values() if c.silenced)}

    def _targets(self, req, logged_in_only: bool):
        if "client" in req:
            client = self.clients.get(int(req["client"]))
            return [client] if client is not None else []
        return [c for c in self.clients.values() if (c.logged_in or not logged_in_only) and c.banner_sent]

    async def cmd_garbage(self, req):
        lines = self._byte_lines(req, "lines", "hex")
        if req.get("preset") == "standard":
            lines += [
                b"this is not an APRS packet at all",
                b"LONG>APRS,TCPIP*:>" + b"x" * (600 - 18 - 2),
                b"BIN\x00>AP\xffRS::N0CALL   :\x00\xff\x80\xfe binary{1",
                b"NOCOLON>APRS,TCPIP*",
                b">",
            ]
        if not lines:
            return {"ok": False, "error": "garbage needs lines, hex or preset"}
        crlf = bool(req.get("crlf", True))
        targets = self._targets(req, logged_in_only=False)
        for client in targets:
            for line in lines:
                if not client.send(line, crlf=crlf):
                    break
        self.count("garbage_lines", len(lines) * len(targets))
        return {"ok": True, "clients": len(targets), "lines": len(lines)}

    async def cmd_flood(self, req):
        total = min(int(req.get("bytes", 65536)), 1 << 30)
        pace = bool(req.get("pace", False))
        pace_timeout = min(float(req.get("pace_timeout", 2.0)), 30.0)
        targets = self._targets(req, logged_in_only=True)

        async def flood_one(client):
            n = 0
            seq = 0
            while n < total and not client.closed:
                if pace:
                    await self._pace(pace_timeout, [client])
                seq += 1
                line = b"# flood %08d " % seq + b"." * 81  # 100 bytes with CR LF
                if not client.send(line):
                    break
                n += len(line) + 2
            return n

        counts = await asyncio.gather(*(flood_one(c) for c in targets))
        return {
            "ok": True,
            "sent": {str(c.id): n for c, n in zip(targets, counts)},
            "disconnected": [c.id for c in targets if c.closed],
        }

    async def cmd_advance(self, req):
        seconds = float(req.get("seconds", 0))
        if seconds < 0:
            return {"ok": False, "error": "the fake clock only moves forward"}
        self.clock_offset += seconds
        return {"ok": True, "now": self.now()}

    async def cmd_set(self, req):
        kinds = {
            "keepalive": float,
            "login_timeout": float,
            "refuse_logins": bool,
            "keepalive_before_logresp": bool,
            "banner_delay": float,
            "max_output": int,
            "drain_timeout": float,
            "dup_window": float,
        }
        unknown = [k for k in req if k != "cmd" and k not in kinds]
        if unknown:
            return {"ok": False, "error": f"unknown settings {unknown}"}
        for key, kind in kinds.items():
            if key in req:
                self.settings[key] = kind(req[key])
        if "keepalive" in req:
            for client in self.clients.values():
                if client.banner_sent:
                    client.schedule_keepalive()
        return {"ok": True, "settings": dict(self.settings)}

    async def cmd_stats(self, req):
        return {
            "ok": True,
            "stats": dict(self.counters),
            "clients": len(self.clients),
            "now": self.now(),
            "settings": dict(self.settings),
        }


def listening_socket(port: int, sndbuf: int | None) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if sndbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


async def serve(args) -> None:
    loop = asyncio.get_running_loop()
    server = FakeServer(args)
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, server.stopping.set)

    user_sock = listening_socket(args.port, args.sndbuf)
    user = await loop.create_server(lambda: Client(server, "user"), sock=user_sock)
    full = None
    if args.full_feed_port is not None:
        full_sock = listening_socket(args.full_feed_port, args.sndbuf)
        full = await loop.create_server(lambda: Client(server, "full"), sock=full_sock)
    control = await asyncio.start_server(
        server.control_connection, "127.0.0.1", args.control_port, limit=64 * 1024 * 1024
    )
    ready = {
        "port": user.sockets[0].getsockname()[1],
        "control_port": control.sockets[0].getsockname()[1],
        "full_feed_port": full.sockets[0].getsockname()[1] if full else None,
    }
    text = json.dumps(ready) + "\n"
    if args.ready_file:
        tmp = args.ready_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, args.ready_file)
    sys.stdout.write(text)
    sys.stdout.flush()

    ticker = asyncio.create_task(server.ticker())
    await server.stopping.wait()
    ticker.cancel()
    for srv in (user, full, control):
        if srv is not None:
            srv.close()
    for client in list(server.clients.values()):
        client.close("server stopped")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Fake APRS-IS server (aprsc 2.1 semantics) for tests.")
    p.add_argument("--port", type=int, required=True, help="user-filter port (0: any free port)")
    p.add_argument("--control-port", type=int, required=True, help="JSON control port (0: any)")
    p.add_argument("--full-feed-port", type=int, default=None, help="full-feed port (0: any)")
    p.add_argument("--keepalive", type=float, default=20.0, help="seconds between keepalives (0: none)")
    p.add_argument("--server-name", default="T2FAKE")
    p.add_argument("--ready-file", default=None)
    p.add_argument("--login-timeout", type=float, default=30.0)
    p.add_argument("--dup-window", type=float, default=30.0)
    p.add_argument("--max-output", type=int, default=8192, help="pending output bytes before disconnect")
    p.add_argument("--drain-timeout", type=float, default=25.0, help="seconds of undrained output allowed")
    p.add_argument("--sndbuf", type=int, default=4096, help="SO_SNDBUF of accepted sockets")
    p.add_argument("--verbose", action="store_true", help="log connections to stderr")
    args = p.parse_args(argv)
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
