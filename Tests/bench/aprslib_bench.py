#!/usr/bin/env python3
"""Parses a corpus with Python aprslib, for comparison with `aprs-cloud-bench parse`.

usage: aprslib_bench.py CORPUS_FILE [ITERATIONS]

Every line (CR LF removed) goes through aprslib.parse; its exceptions (bad packets) are caught and counted.
Prints `python-aprslib parse: <lines> lines in <s> s = <rate> lines/s` on stdout, the outcome counts on stderr.
"""

import sys
import time

import aprslib


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    iterations = int(sys.argv[2]) if len(sys.argv) == 3 else 1
    with open(sys.argv[1], "rb") as corpus:
        lines = [line.rstrip(b"\r\n") for line in corpus.read().split(b"\n")]
    if lines and lines[-1] == b"":
        lines.pop()

    parse = aprslib.parse
    parsed = failed = 0
    start = time.perf_counter()
    for _ in range(iterations):
        for line in lines:
            try:
                parse(line)
                parsed += 1
            except Exception:  # ParseError, UnknownFormat and whatever else a hostile line provokes
                failed += 1
    elapsed = time.perf_counter() - start

    total = len(lines) * iterations
    print("python-aprslib parse: %d lines in %.3f s = %d lines/s" % (total, elapsed, round(total / elapsed)))
    print("parsed %d, exceptions %d" % (parsed, failed), file=sys.stderr)


if __name__ == "__main__":
    main()
