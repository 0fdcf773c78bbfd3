#!/usr/bin/env python3
"""Writes the listener benchmark's inputs: registered stations and a burst of APRS-IS lines.

usage: make_listener_corpus.py STATIONS_SQL CORPUS STATIONS LINES MESSAGE_SHARE

STATIONS_SQL gets the SQL that registers STATIONS stations (`BN0000-1`, `BN0001-2`, ...; ackMessages off, heard
from now). CORPUS gets LINES lines (CR LF): a share MESSAGE_SHARE of them numbered messages to those stations, each
with its own text (so each one is stored), the rest positions, status lines and messages to other stations. The same
arguments always give the same bytes (apart from the registration time).
"""

import random
import sys
import time


def station(index):
    return "BN%04d-%d" % (index, index % 15 + 1)


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    sql_path, corpus_path = sys.argv[1], sys.argv[2]
    stations, lines, share = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    now = int(time.time() * 1000)
    with open(sql_path, "w") as sql:
        sql.write(".timeout 10000\nBEGIN IMMEDIATE;\n")
        for index in range(stations):
            address = station(index)
            base, ssid = address.split("-")
            sql.write(
                "INSERT INTO stations (address, base, ssid, platform, ack_messages, registered_at, heartbeat_at) "
                f"VALUES ('{address}', '{base}', {ssid}, NULL, 0, {now}, {now});\n")
        sql.write("COMMIT;\n")
    rng = random.Random(4)
    with open(corpus_path, "wb") as corpus:
        for number in range(lines):
            sender = "W%dXY%s-%d" % (rng.randint(0, 9), chr(65 + rng.randint(0, 25)), rng.randint(1, 15))
            if rng.random() < share:
                to = station(rng.randrange(stations)).ljust(9)
                line = f"{sender}>APDR16,TCPIP*,qAC,T2BENCH::{to}:benchmark message {number}{{{number % 99999}"
            elif rng.random() < 0.7:
                line = f"{sender}>APRS,WIDE1-1,qAR,IGATE:!4903.50N/07201.75W-position {number}"
            elif rng.random() < 0.5:
                line = f"{sender}>APRS,TCPIP*,qAC,T2BENCH:>status {number}"
            else:
                line = f"{sender}>APRS,TCPIP*,qAC,T2BENCH::ZZ{number % 9999:04d}  :not for us{{1"
            corpus.write(line.encode() + b"\r\n")


if __name__ == "__main__":
    main()
