"""schemathesis against the whole running stack: every answer of the real server fits docs/openapi.yaml.

The stack is Tests/webclient/stack.py's (real nginx with the project's config, the FastCGI responder and the
listener through `aprs-cloud up`, logged in to the fake APRS-IS). schemathesis (the CLI of the pinned version)
reads docs/openapi.yaml and generates requests for every operation: the file's examples, then `MAX_EXAMPLES`
generated ones per operation, valid and invalid, in deterministic mode (a run repeats the last one). Its
coverage phase is left out: its 1,700 cases take 4 minutes at nginx's rate. Each answer is checked with every
check of schemathesis but one:

- `not_a_server_error`: no 5xx (a 5xx is a server bug, whatever the input);
- `status_code_conformance`: the status is one the operation documents;
- `content_type_conformance`: the answer is of a media type the operation documents for that status;
- `response_schema_conformance`: the body fits the schema the operation documents for that status;
- `response_headers_conformance`: the documented headers are there and fit (`Retry-After` on every 429 and
  503, `Content-Disposition` on an export);
- `negative_data_rejection`: a request that breaks the request schema is refused (4xx), never taken;
- `unsupported_method`, `allow_header_conformance`: a method a path does not take is a 405 with `Allow`;
- the rest (`missing_required_header`, `ignored_auth`, `use_after_free`, …) where they apply.

Left out: `positive_data_acceptance` (every request the schema allows is accepted). JSON Schema cannot say all
the server rightly refuses (docs/openapi.yaml, "Transport"): `7.0` is an `integer` to it, but not to the server,
which takes integers written as integers only; `maxLength` counts characters where the server counts UTF-8
bytes; and rules across fields (a call and SSID of over 9 characters together, `auth` unless a key is
presented, a claim code only with the claim's key) are in the descriptions.

Generated bodies get the right passcode for their callsign (schemathesis_hooks.py), so requests go past the
passcode check, and a third of them go as the owner of a station the test claimed first (`OWNER`, with messages
from APRS-IS stored for it), so that owner-only answers and answers that carry messages are checked too. The
stack's per-station and per-address budgets are raised so that the run is not answered 429 throughout;
nginx's per-address rate (10 requests a second, burst 20) stays as shipped, so requests are paced below it
(`RATE`). A 429 where one comes is still checked against its documented shape.

Run by `make test` after the Swift build (`python -m unittest discover -s Tests/openapi -p 'stack_test_*.py'`);
the binaries come from $APRS_CLOUD_BIN (default .build/debug). Set APRS_CLOUD_KEEP_TEST_DIRS=1 to keep the
stack's folder (its logs) and schemathesis's report.
"""

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SPEC = ROOT / "docs" / "openapi.yaml"
HOOKS = HERE / "schemathesis_hooks.py"

MAX_EXAMPLES = 25
OWNER = ("KJ7TST", 7)
PEER = "KJ7ABC-7"
# Below nginx's 10 requests a second per client address (nginx/aprs-cloud-http.conf).
RATE = "8/s"
# The whole run's bound: the stack's start, then schemathesis.
TIMEOUT = 240
EXCLUDED_CHECKS = "positive_data_acceptance"

# Budgets a fuzzer from one address spends within seconds (docs/configuration.md, [ratelimit] and [send]).
SETTINGS = {
    "ratelimit": {
        "registrationsPerHour": "1000000", "heartbeatsPerHour": "1000000", "avatarUploadsPerHour": "1000000",
        "avatarUploadsPerAddressPerHour": "1000000", "newStationsPerAddressPerHour": "1000000",
        "newStationsPerNetworkPerHour": "1000000", "newStationsPerWideNetworkPerHour": "1000000",
        "claimsPerAddressPerHour": "1000000", "claimsPerNetworkPerHour": "1000000",
    },
    "send": {"perMinute": "10000", "sendsPerAddressPerMinute": "100000", "sendsPerMinuteGlobal": "1000000"},
}


def load_stack_module():
    spec = importlib.util.spec_from_file_location("stack", ROOT / "Tests" / "webclient" / "stack.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def claim_owner(stack, stack_module) -> str:
    """Registers and claims `OWNER` and stores two messages for it from APRS-IS; answers its station key."""
    call, ssid = OWNER
    identity = {"callsign": call, "ssid": ssid, "auth": str(stack_module.passcode(call))}
    answer = stack.api("register", dict(identity))
    assert answer.status == 200, answer.body
    answer = stack.api("claim", dict(identity))
    assert answer.status == 200, answer.body
    key = answer.json()["stationKey"]
    address = f"{call}-{ssid}"
    if not stack.wait_for_filter(address):
        raise AssertionError(f"the listener's filter never named {address}")
    stack.inject(stack_module.message_line(PEER, address, "Hello from the fuzz run", "17"))
    stack.inject(stack_module.message_line(PEER, address, "No number"))

    def stored():
        answer = stack.api("sync", dict(identity, since=0))
        return answer.status == 200 and len(answer.json()["messages"]) == 2

    if not stack_module.wait_until(stored, 15, 0.1):
        raise AssertionError(f"the messages for {address} were never stored:\n{stack.log()}")
    return key


def schemathesis_command() -> list[str]:
    """The CLI of the venv that runs this test (`make deps-test` installs it beside the interpreter)."""
    beside = pathlib.Path(sys.executable).parent / "schemathesis"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("schemathesis")
    if found:
        return [found]
    raise AssertionError("schemathesis is not installed: run `make deps-test`")


class SchemathesisTests(unittest.TestCase):
    def test_every_answer_fits_the_contract(self):
        command = schemathesis_command()
        stack_module = load_stack_module()
        started = time.monotonic()
        stack = stack_module.Stack(settings=SETTINGS)
        report = tempfile.mkdtemp(prefix="aprs-schemathesis-")
        try:
            key = claim_owner(stack, stack_module)
            arguments = command + [
                "run", str(SPEC), "--url", stack.url,
                "--checks", "all", "--exclude-checks", EXCLUDED_CHECKS,
                "--max-examples", str(MAX_EXAMPLES), "--generation-deterministic",
                "--workers", "1", "--rate-limit", RATE,
                "--request-timeout", "15", "--phases", "examples,fuzzing",
                "--continue-on-failure", "--no-color", "--output-truncate", "false",
                "--report", "junit", "--report-dir", report,
            ]
            environment = dict(
                os.environ, SCHEMATHESIS_HOOKS=str(HOOKS), PYTHONDONTWRITEBYTECODE="1",
                APRS_CLOUD_OWNER=f"{OWNER[0]},{OWNER[1]},{key}",
            )
            remaining = max(30, TIMEOUT - (time.monotonic() - started))
            log = pathlib.Path(report) / "schemathesis.log"
            with log.open("w") as output_file:
                try:
                    result = subprocess.run(
                        arguments, cwd=report, env=environment, stdout=output_file, stderr=subprocess.STDOUT,
                        timeout=remaining,
                    )
                    returncode = result.returncode
                except subprocess.TimeoutExpired:
                    returncode = None
            output = log.read_text(errors="replace")
            if returncode is None:
                self.fail(f"schemathesis did not finish within {TIMEOUT} s:\n{output[-6000:]}")
            if returncode != 0:
                self.fail(f"schemathesis found answers that break docs/openapi.yaml:\n{output[-20000:]}"
                          f"\n--- the stack's log ---\n{stack.log()}")
            # A run that tested nothing would pass too: every operation of the file must have been tested.
            operations = re.search(r"Operations:\s+(\d+) selected / (\d+) total", output)
            tested = re.search(r"Tested:\s+(\d+)", output)
            self.assertTrue(operations and tested, output[-4000:])
            self.assertEqual(tested.group(1), operations.group(2), output[-4000:])
            sys.stderr.write(f"\nschemathesis: {tested.group(1)} operations, "
                             f"{time.monotonic() - started:.0f} s with the stack\n")
        finally:
            stack.stop()
            if not os.environ.get("APRS_CLOUD_KEEP_TEST_DIRS"):
                shutil.rmtree(report, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
