"""The whole local stack for the web client's browser tests: the fake APRS-IS (Tests/fakes/aprsis_fake.py)
and `aprs-cloud up` (nginx serving nginx/www/ and the API, the responder, the listener logged in to the
fake), all on loopback ports of their own, plus Debian's headless Chromium driven through Selenium.

Standard library apart from Selenium. The binaries come from $APRS_CLOUD_BIN (default .build/debug).
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FAKE = os.path.join(ROOT, "Tests", "fakes", "aprsis_fake.py")
CHROMIUM = os.environ.get("APRS_CLOUD_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("APRS_CLOUD_CHROMEDRIVER", "/usr/bin/chromedriver")
LISTENER_LOGIN = "WEBTST-10"


def passcode(call: str) -> int:
    """The APRS-IS passcode of a call's base (docs/protocol.md, "Passcode")."""
    base = call.strip().upper().split("-")[0].encode()
    value = 0x73E2
    for index in range(0, len(base), 2):
        value ^= base[index] << 8
        if index + 1 < len(base):
            value ^= base[index + 1]
    return value & 0x7FFF


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(condition, timeout: float, interval: float = 0.05):
    """Calls `condition` until it returns a true value (returned) or `timeout` seconds pass (None)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)


class HTTPAnswer:
    def __init__(self, status: int, headers, body: bytes):
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name: str) -> str | None:
        return self.headers.get(name)

    def json(self):
        return json.loads(self.body.decode())


class Stack:
    """The fake APRS-IS and `aprs-cloud up`, started together; `stop()` ends both."""

    def __init__(self, settings: dict[str, dict[str, str]] | None = None):
        """`settings`: INI keys by section, beside (or instead of) the stack's own."""
        self.settings = settings or {}
        self.directory = tempfile.mkdtemp(prefix="aprs-webclient-")
        self.processes: list[subprocess.Popen] = []
        try:
            self._start_fake()
            self._start_up()
        except BaseException:
            self.stop()
            raise

    # -- processes -----------------------------------------------------------------------------------

    def _start_fake(self):
        ready = os.path.join(self.directory, "fake.ready")
        log = open(os.path.join(self.directory, "fake.log"), "wb")
        self.fake = subprocess.Popen(
            [sys.executable, FAKE, "--port", "0", "--control-port", "0", "--keepalive", "5", "--ready-file", ready],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        self.processes.append(self.fake)
        if not wait_until(lambda: os.path.exists(ready), 15):
            raise RuntimeError("the fake APRS-IS did not start")
        with open(ready) as file:
            ports = json.loads(file.read())
        self.aprsis_port = ports["port"]
        self.control_port = ports["control_port"]

    def _start_up(self):
        binaries = os.environ.get("APRS_CLOUD_BIN", os.path.join(ROOT, ".build", "debug"))
        executable = os.path.join(binaries, "aprs-cloud")
        if not os.access(executable, os.X_OK):
            raise RuntimeError(f"{executable} is missing: run `swift build` first")
        config = os.path.join(self.directory, "aprs-cloud.ini")
        sections = {
            "aprsis": {
                "servers": f"127.0.0.1:{self.aprsis_port}", "login": LISTENER_LOGIN,
                "passcode": str(passcode(LISTENER_LOGIN)), "trackOutgoing": "true", "reconnectDelay": "100ms",
                "maxReconnectDelay": "1s", "filterReconnectSpacing": "300ms",
            },
            "listener": {"publishInterval": "100ms", "registrationPoll": "100ms", "leaseTtl": "2s"},
            # Web Push is on by default; the browser tests stub the push service (test_browser.py).
            "messaging.webpush": {"subject": "mailto:ops@example.org"},
            # Every browser of the suite comes from 127.0.0.1: the per-address limits on new stations and
            # claims (a few dozen an hour) would otherwise refuse the later tests' stations.
            "ratelimit": {
                "newStationsPerAddressPerHour": "1000", "newStationsPerNetworkPerHour": "1000",
                "newStationsPerWideNetworkPerHour": "1000", "claimsPerAddressPerHour": "1000",
                "claimsPerNetworkPerHour": "1000",
            },
        }
        # A caller's own keys, by section, replace or join these (the API tests raise the per-station limits).
        for section, keys in self.settings.items():
            sections.setdefault(section, {}).update(keys)
        with open(config, "w") as file:
            file.write("\n".join(
                f"[{section}]\n" + "".join(f"{key} = {value}\n" for key, value in keys.items())
                for section, keys in sections.items()
            ))
        self.port = free_port()
        metrics = free_port()
        while metrics == self.port:
            metrics = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # The private loopback listener: /metrics and the operator's /status page.
        self.metrics_url = f"http://127.0.0.1:{metrics}"
        self.up_log = os.path.join(self.directory, "up.log")
        self.up = subprocess.Popen(
            [
                executable, "up", "--http", f"127.0.0.1:{self.port}", "--metrics", f"127.0.0.1:{metrics}",
                "--data", os.path.join(self.directory, "var"), "--config", config,
                "--nginx-dir", os.path.join(ROOT, "nginx"),
            ],
            stdout=open(self.up_log, "wb"), stderr=subprocess.STDOUT, start_new_session=True,
        )
        self.processes.append(self.up)

        def healthy():
            try:
                return self.get("/health").status == 200
            except OSError:
                return False

        if not wait_until(healthy, 60, 0.1):
            raise RuntimeError(f"aprs-cloud up did not become healthy:\n{self.log()}")
        answer = self.control({"cmd": "wait", "what": "login", "count": 1, "timeout": 30})
        if not answer.get("ok"):
            raise RuntimeError(f"the listener did not log in to the fake APRS-IS: {answer}\n{self.log()}")
        # /v1/info offers `send` once the listener has published its verified login (a page opened before
        # that would rightly hide the send form).
        if not wait_until(lambda: "send" in self.features(), 15, 0.1):
            raise RuntimeError(f"/v1/info never offered send: {self.features()}\n{self.log()}")

    def log(self) -> str:
        try:
            with open(self.up_log, errors="replace") as file:
                return file.read()[-6000:]
        except OSError:
            return ""

    def stop(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for process in reversed(self.processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if not os.environ.get("APRS_CLOUD_KEEP_TEST_DIRS"):
            shutil.rmtree(self.directory, ignore_errors=True)

    # -- HTTP ---------------------------------------------------------------------------------------

    def request(self, method: str, path: str, body: bytes | None = None, headers=None) -> HTTPAnswer:
        request = urllib.request.Request(self.url + path, data=body, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                return HTTPAnswer(response.status, response.headers, response.read())
        except urllib.error.HTTPError as error:
            return HTTPAnswer(error.code, error.headers, error.read())

    def get(self, path: str) -> HTTPAnswer:
        return self.request("GET", path)

    def api(self, name: str, body: dict) -> HTTPAnswer:
        return self.request(
            "POST", f"/v1/{name}", json.dumps(body).encode(), {"content-type": "application/json"}
        )

    def features(self) -> list[str]:
        """`/v1/info`'s features, or [] when this server has no /v1/info."""
        answer = self.api("info", {})
        if answer.status != 200:
            return []
        return answer.json().get("features", [])

    def has_send(self) -> bool:
        """Whether /v1/send exists (the server says so, or an empty call is not a 404)."""
        if "send" in self.features():
            return True
        return self.api("send", {}).status != 404

    # -- the fake APRS-IS ---------------------------------------------------------------------------

    def control(self, request: dict) -> dict:
        with socket.create_connection(("127.0.0.1", self.control_port), timeout=150) as connection:
            connection.sendall(json.dumps(request).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = connection.recv(65536)
                if not chunk:
                    break
                data += chunk
        return json.loads(data.decode())

    def inject(self, line: str) -> dict:
        return self.control({"cmd": "inject", "line": line})

    def wait_for_filter(self, address: str, timeout: float = 15) -> bool:
        """Waits until the listener's live filter names `address` (the station registered)."""

        def named():
            answer = self.control({"cmd": "clients"})
            for client in answer.get("clients", []):
                words = (client.get("filter") or "").upper().replace("/", " ").split()
                # With many stations the listener widens entries to fit the filter's 510 bytes (KJ7TX*).
                if any(fnmatch.fnmatchcase(address.upper(), word) for word in words):
                    return True
            return False

        return bool(wait_until(named, timeout, 0.1))

    def transmitted(self) -> list[dict]:
        return self.control({"cmd": "transmitted"}).get("transmitted", [])


def message_line(sender: str, addressee: str, text: str, msgno: str | None = None) -> str:
    """An APRS message as it arrives from APRS-IS."""
    suffix = "{" + msgno if msgno else ""
    return f"{sender}>APRS,TCPIP*,qAC,T2FAKE::{addressee:<9}:{text}{suffix}"


def start_browser(width: int = 1280, height: int = 900, logs: bool = True, lang: str = "en-US"):
    """Debian's chromium, headless, through Debian's chromedriver (never a downloaded browser); `lang` is the
    browser's language (navigator.languages)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in [
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={width},{height}",
        "--no-first-run", "--no-default-browser-check", "--disable-background-networking", "--disable-sync",
        "--disable-component-update", "--disable-default-apps", "--disable-domain-reliability",
        "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
        f"--lang={lang}", "--hide-scrollbars",
    ]:
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"intl.accept_languages": f"{lang},{lang.split('-')[0]}"})
    if logs:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    service = Service(executable_path=CHROMEDRIVER, log_output=subprocess.DEVNULL)
    return webdriver.Chrome(options=options, service=service)
