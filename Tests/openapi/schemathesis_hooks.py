"""schemathesis hooks for stack_test_schemathesis.py (loaded through SCHEMATHESIS_HOOKS by the CLI it runs).

`before_call` changes a case just before it is sent (every phase's requests pass it), so that the run reaches
past the server's first checks instead of stopping at them every time:

- A body whose `callsign` is a string gets the passcode of its callsign's base as `auth` (docs/protocol.md,
  "Passcode") when its `auth` is a string or absent: random passcodes would all be the 401 of a wrong `auth`,
  and a missing one the 400 that asks for it. Bodies of any other shape (schemathesis's negative cases: a
  number for `auth`, no `callsign`) go as generated.
- A sync's `wait` is at most `MAX_WAIT` seconds: a long poll is held for its whole wait when nothing comes, and
  300 s ones would spend the run's time waiting.
- By a checksum of the body (so a run repeats), a third of the cases go without the generated
  `Authorization: Bearer` header (a random station key is always the 401 of a key that is not the claim's),
  and a third are sent as the owner of the station the test claimed ($APRS_CLOUD_OWNER, `CALL,SSID,KEY`): its
  call, SSID and key, so that the owner-only answers (settings, send, export, audit, read) are checked too.
  Claims and unregisters never go as the owner: a rotation, release or unregister would end the claim.
"""

import json
import os
import zlib

import schemathesis

MAX_WAIT = 1
OWNER = os.environ.get("APRS_CLOUD_OWNER", "")
NOT_AS_OWNER = ("/v1/claim", "/v1/unregister")


def passcode(call: str) -> str:
    """The APRS-IS passcode of a call's base, as a decimal string (docs/protocol.md, "Passcode")."""
    base = call.strip().upper().split("-")[0].encode("utf-8", "replace")
    value = 0x73E2
    for index in range(0, len(base), 2):
        value ^= base[index] << 8
        if index + 1 < len(base):
            value ^= base[index + 1]
    return str(value & 0x7FFF)


@schemathesis.hook
def before_call(context, case, kwargs):
    body = case.body
    if not isinstance(body, dict):
        return
    body = dict(body)
    lot = zlib.crc32(json.dumps(body, sort_keys=True, default=str).encode()) % 3
    if lot == 1 and OWNER and case.path not in NOT_AS_OWNER and isinstance(body.get("callsign"), str):
        call, ssid, key = OWNER.split(",")
        body.update(callsign=call, ssid=int(ssid))
        body.pop("stationKey", None)
        case.headers["Authorization"] = f"Bearer {key}"
    elif lot == 0 and "Authorization" in case.headers:
        del case.headers["Authorization"]
    if isinstance(body.get("callsign"), str) and isinstance(body.get("auth", ""), str):
        body["auth"] = passcode(body["callsign"])
    if case.path == "/v1/sync" and isinstance(body.get("wait"), (int, float)) and body["wait"] > MAX_WAIT:
        body["wait"] = MAX_WAIT
    case.body = body
