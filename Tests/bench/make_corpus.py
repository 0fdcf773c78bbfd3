#!/usr/bin/env python3
"""Writes a deterministic mixed APRS-IS corpus for `make bench`.

usage: make_corpus.py OUTPUT_PATH [LINES]

Lines end in CR LF, as APRS-IS sends them. The mix roughly follows a real feed (mostly positions and
weather) with more messages than usual, because messages are what the parser is for: personal messages
(padded, unpadded, lower-case, numbered, reply-ack), acks and rejs, third-party wrapped packets (nested too),
bulletins, announcements, NWS, telemetry (data and metadata), status, objects, server comments, malformed
lines (no '>', no ':', bad source, too long, empty) and lines with raw binary bytes (NUL, 0xFF, invalid
UTF-8). The same arguments always give the same bytes.
"""

import random
import sys

SEED = 20251129
DEFAULT_LINES = 120_000

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
DIGITS = "0123456789"
ALNUM = LETTERS + DIGITS
WORDS = (
    "hello test qsl 73 thanks are you on the net tonight see you at the hamfest battery low "
    "wx is fine repeater down going qrt good morning cq de portable mobile home antenna"
).split()
PATHS = ["WIDE1-1,WIDE2-1", "WIDE2-2", "TCPIP*", "WIDE1-1", "RELAY,WIDE", ""]
QCONSTRUCTS = ["qAR", "qAS", "qAC", "qAo", "qAO", "qAU"]
TOCALLS = ["APRS", "APDR16", "APK102", "APX219", "APMI06", "APOT30", "APZACL", "APN391", "APU25N"]


def call(rng, ssid=True):
    prefix = rng.choice(["K", "W", "N", "OH", "DL", "G", "VK", "JA", "KJ", "F", "PA"])
    base = prefix + rng.choice(DIGITS) + "".join(rng.choice(LETTERS) for _ in range(rng.randint(1, 3)))
    if ssid and rng.random() < 0.6:
        base += "-" + str(rng.randint(1, 15))
    return base


def header(rng, source=None, tocall=None):
    source = source or call(rng)
    path = rng.choice(PATHS)
    parts = [tocall or rng.choice(TOCALLS)]
    if path:
        parts.append(path)
    parts += [rng.choice(QCONSTRUCTS), call(rng, ssid=False)]
    return source + ">" + ",".join(parts)


def text(rng, low=1, high=8):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def msgno(rng):
    if rng.random() < 0.7:
        return str(rng.randint(1, 99999))
    return "".join(rng.choice(ALNUM) for _ in range(rng.randint(1, 5)))


def message_info(rng):
    addressee = call(rng)
    style = rng.random()
    if style < 0.75:
        field = addressee.ljust(9)
    elif style < 0.85:
        field = addressee  # unpadded
    else:
        field = addressee.lower().ljust(9)
    body = text(rng)
    number = rng.random()
    if number < 0.55:
        body += "{" + msgno(rng)
    elif number < 0.75:
        body += "{" + msgno(rng)[:2] + "}" + (msgno(rng)[:2] if rng.random() < 0.6 else "")
    elif number < 0.8:
        body = "a{b " + body + "{123456"  # invalid msgno: all text
    return ":" + field + ":" + body


def ack_info(rng):
    word = "ack" if rng.random() < 0.85 else "rej"
    number = msgno(rng)
    if rng.random() < 0.2:
        number = number[:2] + "}" + "".join(rng.choice(ALNUM) for _ in range(2))
    return ":" + call(rng).ljust(9) + ":" + word + number


def position_info(rng):
    lat = "%02d%02d.%02d%s" % (rng.randint(0, 89), rng.randint(0, 59), rng.randint(0, 99), rng.choice("NS"))
    lon = "%03d%02d.%02d%s" % (rng.randint(0, 179), rng.randint(0, 59), rng.randint(0, 99), rng.choice("EW"))
    kind = rng.random()
    symbol = rng.choice(">-kv[<_")
    if kind < 0.4:
        return "!" + lat + "/" + lon + symbol + text(rng, 0, 5)
    if kind < 0.7:
        return "=" + lat + "/" + lon + symbol + "%03d/%03d" % (rng.randint(0, 359), rng.randint(0, 200))
    if kind < 0.85:
        return "@%02d%02d%02dz" % (rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)) + lat + "/" + lon + symbol
    # compressed
    return "!/" + "".join(chr(rng.randint(33, 123)) for _ in range(8)) + symbol + "   "


def weather_info(rng):
    return "_%02d%02d%02d%02dc%03ds%03dg%03dt%03dr%03dp%03dh%02db%05d" % (
        rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 359),
        rng.randint(0, 50), rng.randint(0, 80), rng.randint(-20, 110), rng.randint(0, 100),
        rng.randint(0, 100), rng.randint(0, 99), rng.randint(9000, 10500))


def telemetry_info(rng, source):
    if rng.random() < 0.6:
        return "T#%03d," % rng.randint(0, 999) + ",".join(str(rng.randint(0, 255)) for _ in range(5)) + ",01101001"
    kind = rng.choice(["PARM.Vbat,Temp,Light", "UNIT.Volts,deg.C,lux", "EQNS.0,0.1,0,0,1,0,0,1,0", "BITS.11111111,Probe"])
    return ":" + source.ljust(9) + ":" + kind


def bulletin_info(rng):
    addressee = rng.choice(["BLN1", "BLN2", "BLN3WX", "BLNA", "BLNB", "NWS-WARN", "NWS_ADVIS", "SKYCWA", "CWA123"])
    return ":" + addressee.ljust(9) + ":" + text(rng, 3, 10)


def wrapped(rng, depth=1):
    inner = call(rng) + ">" + rng.choice(TOCALLS) + ",TCPIP," + call(rng) + "*:" + (
        message_info(rng) if rng.random() < 0.7 else ack_info(rng))
    for _ in range(depth - 1):
        inner = call(rng) + ">APRS,TCPIP*:}" + inner
    return "}" + inner


def binary(rng):
    # Any byte but CR and LF, which would end the line.
    return bytes(b for b in (rng.randint(0, 255) for _ in range(rng.randint(1, 60))) if b not in (10, 13))


def malformed(rng):
    kind = rng.randint(0, 6)
    if kind == 0:
        return b""
    if kind == 1:
        return (call(rng) + " no separator at all").encode()
    if kind == 2:
        return (call(rng) + ":no source arrow").encode()
    if kind == 3:
        return ("THISCALLISWAYTOOLONG>APRS:" + text(rng)).encode()
    if kind == 4:
        return (header(rng) + ":" + "x" * rng.randint(490, 600)).encode()
    if kind == 5:
        return b"}"
    return (header(rng) + ",,WIDE:" + text(rng)).encode()


def line(rng):
    pick = rng.random()
    source = call(rng)
    if pick < 0.30:
        return (header(rng, source) + ":" + position_info(rng)).encode()
    if pick < 0.42:
        return (header(rng, source) + ":" + weather_info(rng)).encode()
    if pick < 0.60:
        return (header(rng, source) + ":" + message_info(rng)).encode()
    if pick < 0.68:
        return (header(rng, source) + ":" + ack_info(rng)).encode()
    if pick < 0.74:
        return (header(rng, source) + ":" + wrapped(rng, 1 if rng.random() < 0.9 else rng.randint(2, 4))).encode()
    if pick < 0.78:
        return (header(rng, source) + ":" + bulletin_info(rng)).encode()
    if pick < 0.83:
        return (header(rng, source) + ":" + telemetry_info(rng, source)).encode()
    if pick < 0.87:
        return (header(rng, source) + ":>" + text(rng)).encode()
    if pick < 0.89:
        return (header(rng, source) + ":;" + call(rng, ssid=False).ljust(9) + "*092345z4903.50N/07201.75W>").encode()
    if pick < 0.91:
        return b"# aprsc 2.1.21-g0f2a2d3 29 Nov 2025 14:07:00 GMT T2TEST 192.0.2.1:14580"
    if pick < 0.95:
        return malformed(rng)
    return header(rng, source).encode() + b":" + binary(rng)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    count = int(sys.argv[2]) if len(sys.argv) == 3 else DEFAULT_LINES
    rng = random.Random(SEED)
    with open(sys.argv[1], "wb") as out:
        for _ in range(count):
            out.write(line(rng) + b"\r\n")


if __name__ == "__main__":
    main()
