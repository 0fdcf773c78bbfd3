"""Replication lag: from a commit to the database until it is in the replica, p50/p99.

usage: replication_lag.py --cli BIN/aprs-cloud --litestream PATH --work DIR [--samples N] [--s3]

The database is made by `aprs-cloud migrate` and replicated by `aprs-cloud replicate` (Litestream with the
configuration aprs-cloud generates, syncInterval 1s). Each sample waits a random part of the sync interval (so
commits land at every phase of Litestream's ticker, as real traffic does), commits one row, and polls the
replica (every 2 ms) until a new level-0 LTX file appears: Litestream ships each sync's changes as one such
file, written to a temporary name and renamed, so its appearance is the moment the commit is in the replica.
With --s3 the replica is a bucket on moto's S3 server (found beside Litestream), listed every 2 ms.
At the end the replica is restored and every sample row is checked to be in it.
"""

import argparse
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request

SYNC_INTERVAL_S = 1.0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    sys.exit(f"timeout: {what}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--litestream", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--s3", action="store_true")
    args = parser.parse_args()
    args.cli = os.path.abspath(args.cli)
    args.litestream = os.path.abspath(args.litestream)

    os.makedirs(args.work, exist_ok=True)
    database = os.path.join(args.work, "aprs-cloud.sqlite")
    subprocess.run([args.cli, "migrate", "--db", database], check=True, stdout=subprocess.DEVNULL)
    environment = dict(os.environ)
    environment.pop("AWS_CA_BUNDLE", None)  # Litestream's S3 client refuses it
    environment.pop("APRS_CLOUD_CONFIG", None)
    helpers = []

    if args.s3:
        moto = os.path.join(os.path.dirname(args.litestream), "moto_server")
        port = free_port()
        helpers.append(subprocess.Popen(
            [moto, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        endpoint = f"http://127.0.0.1:{port}"

        def answers():
            try:
                urllib.request.urlopen(endpoint + "/", timeout=1).read()
                return True
            except Exception:
                return False

        wait_for(answers, 30, "moto's S3 server")
        urllib.request.urlopen(urllib.request.Request(endpoint + "/bench-replica", method="PUT")).read()
        section = (f"url = s3://bench-replica/aprs\nendpoint = {endpoint}\nregion = us-east-1\n"
                   "accessKeyId = bench\nsecretAccessKey = bench\n")
        listing_url = endpoint + "/bench-replica?list-type=2&prefix=aprs/0000/"

        def level0():
            body = urllib.request.urlopen(listing_url, timeout=5).read().decode()
            return set(re.findall(r"<Key>([^<]+)</Key>", body))
    else:
        replica = os.path.join(args.work, "replica")
        section = f"url = file://{replica}\n"
        level0_dir = os.path.join(replica, "ltx", "0")

        def level0():
            try:
                return set(os.listdir(level0_dir))
            except FileNotFoundError:
                return set()

    config = os.path.join(args.work, "aprs-cloud.ini")
    with open(config, "w") as f:
        f.write(f"[server]\nlogLevel = warn\n\n[replication]\n{section}litestream = {args.litestream}\n"
                f"syncInterval = {int(SYNC_INTERVAL_S * 1000)}ms\n")
    log = open(os.path.join(args.work, "litestream.log"), "w")
    replicate = subprocess.Popen(
        [args.cli, "replicate", "--config", config, "--db", database], env=environment, stdout=log, stderr=log)
    helpers.insert(0, replicate)
    try:
        def snapshot_taken():
            if replicate.poll() is not None:
                sys.exit("aprs-cloud replicate exited; see " + log.name)
            return len(level0()) > 0

        wait_for(snapshot_taken, 30, "Litestream's first snapshot")
        connection = sqlite3.connect(database, isolation_level=None, timeout=10)
        lags = []
        for index in range(args.samples):
            time.sleep(random.uniform(0, SYNC_INTERVAL_S))
            known = level0()
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (f"bench.lag.{index}", str(index)))
            connection.execute("COMMIT")
            committed = time.monotonic()
            while not (level0() - known):
                if time.monotonic() - committed > 30:
                    sys.exit("timeout: a commit never reached the replica")
                time.sleep(0.002)
            lags.append((time.monotonic() - committed) * 1000)
        connection.close()
        lags.sort()
        p50 = lags[len(lags) // 2]
        p99 = lags[min(len(lags) - 1, int(len(lags) * 0.99))]
        kind = "S3 (moto)" if args.s3 else "file"
        print(f"replication lag, {kind} replica, syncInterval {SYNC_INTERVAL_S:g}s, commit -> in the replica: "
              f"p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {lags[-1]:.0f} ms ({len(lags)} samples)")

        restored = os.path.join(args.work, "restored")
        result = subprocess.run([args.cli, "restore", "--config", config, "--data", restored], env=environment,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            sys.exit("restore failed: " + result.stderr)
        copy = sqlite3.connect(os.path.join(restored, "aprs-cloud.sqlite"))
        found = copy.execute("SELECT count(*) FROM meta WHERE key LIKE 'bench.lag.%'").fetchone()[0]
        copy.close()
        print(f"restored from the replica: {found} of {args.samples} committed rows")
    finally:
        for process in helpers:
            process.send_signal(signal.SIGTERM)
        for process in helpers:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


if __name__ == "__main__":
    main()
