"""schemathesis hooks for stack_test_schemathesis.py (loaded through SCHEMATHESIS_HOOKS by the CLI it runs).

`before_call` changes a case just before it is sent (every phase's requests pass it), so that the run reaches
past the server's first checks instead of stopping at them every time. A case generated to break the schema
(negative) is changed only where a valid value stays valid, so that whatever made it invalid is still sent and
`negative_data_rejection` still judges the server:

- A body whose `callsign` is a valid call gets the passcode of its base as `auth` (docs/protocol.md,
  "Passcode") where `auth` is absent or a valid passcode string: random passcodes would all be the 401 of a
  wrong `auth`, and a missing one the 400 that asks for it.
- A sync's valid `wait` (0–300) becomes at most `MAX_WAIT` seconds: a long poll is held for its whole wait when
  nothing comes, and 300 s ones would spend the run's time waiting.
- Valid cases only, chosen by a checksum of the body (so a run repeats): a third go without the generated
  `Authorization: Bearer` header (a random station key is always the 401 of a key that is not the claim's), and
  a third are sent as the owner of the station the test claimed ($APRS_CLOUD_OWNER, `CALL,SSID,KEY`): its call,
  SSID and key, so that the owner-only answers (settings, send, export, audit, read) are checked too. Claims and
  unregisters never go as the owner: a rotation, release or unregister would end the claim.
"""

import json
import os
import re
import zlib

import schemathesis

MAX_WAIT = 1
OWNER = os.environ.get("APRS_CLOUD_OWNER", "")
NOT_AS_OWNER = ("/v1/claim", "/v1/unregister")
# docs/openapi.yaml: Callsign and Passcode (its string form).
CALLSIGN = re.compile(r"^[A-Za-z0-9]{1,9}(-(0|[1-9]|1[0-5]))?$")
PASSCODE = re.compile(r"^[ \t]*[0-9]{1,8}[ \t]*$")


def passcode(call: str) -> str:
    """The APRS-IS passcode of a call's base, as a decimal string (docs/protocol.md, "Passcode")."""
    base = call.strip().upper().split("-")[0].encode("utf-8", "replace")
    value = 0x73E2
    for index in range(0, len(base), 2):
        value ^= base[index] << 8
        if index + 1 < len(base):
            value ^= base[index + 1]
    return str(value & 0x7FFF)


def is_negative(case) -> bool:
    """Whether schemathesis generated the case to break the schema somewhere."""
    meta = case.meta
    if meta is None:
        return False
    modes = [meta.generation.mode] + [component.mode for component in meta.components.values()]
    return any(getattr(mode, "value", mode) == "negative" for mode in modes)


@schemathesis.hook
def before_call(context, case, kwargs):
    body = case.body
    if not isinstance(body, dict):
        return
    negative = is_negative(case)
    body = dict(body)
    lot = zlib.crc32(json.dumps(body, sort_keys=True, default=str).encode()) % 3
    if not negative and lot == 1 and OWNER and case.path not in NOT_AS_OWNER and "callsign" in body:
        call, ssid, key = OWNER.split(",")
        body.update(callsign=call, ssid=int(ssid))
        body.pop("stationKey", None)
        case.headers["Authorization"] = f"Bearer {key}"
    elif not negative and lot == 0 and "Authorization" in case.headers:
        del case.headers["Authorization"]
    call, auth = body.get("callsign"), body.get("auth")
    valid_auth = auth is None or (isinstance(auth, str) and PASSCODE.match(auth))
    if isinstance(call, str) and CALLSIGN.match(call) and valid_auth:
        body["auth"] = passcode(call)
    wait = body.get("wait")
    if case.path == "/v1/sync" and type(wait) is int and MAX_WAIT < wait <= 300:
        body["wait"] = MAX_WAIT
    case.body = body
