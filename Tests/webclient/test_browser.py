"""The web client (nginx/www/) in a real browser: Debian's headless Chromium through Selenium, against
`aprs-cloud up` with the fake APRS-IS, all started here on loopback.

Run (after `swift build`; `make test` does both):

    .build/pyenv-test/bin/python Tests/webclient/test_browser.py [test_name ...]

Screenshots go to .build/screenshots/ (or $APRS_CLOUD_SCREENSHOTS): every screen at 360 and 1280 px in light
and dark. axe-core (axe-selenium-python) checks every view and state; hostile.js serves hostile answers; the
first signed-in load is weighed and printed. A test whose server feature does not exist yet (/v1/send,
/v1/export, `forward` in the settings) is skipped with the reason, never passed; the last line counts them.
"""

from __future__ import annotations

import base64
import glob
import hashlib
import hmac
import json
import os
import re
import sqlite3
import struct
import sys
import time
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stack import ROOT, Stack, message_line, passcode, start_browser, wait_until  # noqa: E402

from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

try:
    from axe_selenium_python import Axe  # noqa: E402
except ImportError:  # the venv predates axe-selenium-python: `make deps-test`
    Axe = None

SCREENSHOTS = os.environ.get("APRS_CLOUD_SCREENSHOTS", os.path.join(ROOT, ".build", "screenshots"))

# A well-formed VAPID public key (0x04 and 64 bytes) for the stubbed push service.
VAPID_KEY = base64.urlsafe_b64encode(bytes([4]) + bytes(range(1, 65))).decode().rstrip("=")
STUB_ENDPOINT = "https://push.example.invalid/wpush/v2/stub-subscription-0001"
STUB_P256DH = base64.urlsafe_b64encode(bytes([4]) + bytes(range(100, 164))).decode().rstrip("=")
STUB_AUTH = base64.urlsafe_b64encode(bytes(range(16))).decode().rstrip("=")

# Runs before the page's own scripts (CDP), so the page sees these stand-ins. `__calls` records every
# API call the page makes; `__info` (when set) replaces /v1/info's answer.
RECORDER = """
(() => {
  const realFetch = window.fetch.bind(window);
  window.__calls = [];
  window.fetch = async (input, init) => {
    const url = typeof input === "string" ? input : input.url;
    let body = null;
    try { body = init && init.body ? JSON.parse(init.body) : null; } catch (error) {}
    window.__calls.push({ url, body });
    if (window.__info && url.endsWith("/v1/info")) {
      return new Response(JSON.stringify(window.__info), { status: 200, headers: { "content-type": "application/json" } });
    }
    return realFetch(input, init);
  };
})();
"""

PUSH_STUB = """
(() => {
  let subscription = null;
  const stub = {
    endpoint: %(endpoint)s,
    expirationTime: null,
    options: { userVisibleOnly: true, applicationServerKey: null },
    toJSON() { return { endpoint: this.endpoint, expirationTime: null, keys: { p256dh: %(p256dh)s, auth: %(auth)s } }; },
    unsubscribe: async () => { subscription = null; return true; },
  };
  PushManager.prototype.subscribe = async function (options) {
    window.__subscribed = {
      userVisibleOnly: options.userVisibleOnly,
      key: Array.from(new Uint8Array(options.applicationServerKey)),
    };
    stub.options = { userVisibleOnly: true, applicationServerKey: new Uint8Array(options.applicationServerKey).buffer };
    subscription = stub;
    return stub;
  };
  PushManager.prototype.getSubscription = async function () { return subscription; };
})();
""" % {"endpoint": json.dumps(STUB_ENDPOINT), "p256dh": json.dumps(STUB_P256DH), "auth": json.dumps(STUB_AUTH)}


def png(width: int, height: int) -> bytes:
    """A small PNG (a diagonal two-colour pattern) for an avatar image."""
    rows = b""
    for y in range(height):
        rows += b"\x00" + b"".join(
            bytes((230, 120, 40)) if (x + y) % 16 < 8 else bytes((40, 90, 160)) for x in range(width)
        )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


class WebClientTests(unittest.TestCase):
    stack: Stack

    @classmethod
    def setUpClass(cls):
        cls.stack = Stack()

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()

    # -- helpers ------------------------------------------------------------------------------------

    def browser(self, *scripts: str, lang: str = "en-US"):
        driver = start_browser(lang=lang)
        self.addCleanup(driver.quit)
        for script in scripts:
            driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": script})
        return driver

    def wait(self, condition, timeout: float = 10, message: str = "condition not met"):
        def safe():
            try:
                return condition()
            except StaleElementReferenceException:
                return None

        value = wait_until(safe, timeout, 0.02)
        if not value:
            self.fail(f"{message} (within {timeout} s)")
        return value

    @staticmethod
    def field(driver, label: str):
        """The form control whose visible <label> reads exactly `label` (labels of hidden views, such as another
        tab's form with a field of the same name, do not count)."""
        shown = [element for element in driver.find_elements(By.XPATH, f"//label[normalize-space()='{label}']")
                 if element.is_displayed()]
        assert shown, f"no label {label!r} is visible"
        return driver.find_element(By.ID, shown[0].get_attribute("for"))

    @staticmethod
    def button(driver, text: str):
        return driver.find_element(By.XPATH, f"//button[normalize-space()='{text}']")

    def open_page(self, driver):
        driver.get(self.stack.url + "/")
        self.wait(lambda: driver.find_element(By.ID, "sign-in-view").is_displayed(), 10, "no sign-in form")

    def sign_in(self, driver, call: str, ssid: int, code: int | None = None, remember: bool = False):
        self.open_page(driver)
        self.field(driver, "Callsign").send_keys(call)
        Select(self.field(driver, "SSID")).select_by_value(str(ssid))
        self.field(driver, "Passcode").send_keys(str(passcode(call) if code is None else code))
        if remember:
            driver.find_element(By.ID, "remember").click()
        self.button(driver, "Sign in").click()

    def sign_in_ok(self, driver, call: str, ssid: int, **options):
        self.sign_in(driver, call, ssid, **options)
        address = call if ssid == 0 else f"{call}-{ssid}"
        self.wait(
            lambda: driver.find_element(By.ID, "station").text == f"Signed in as {address}",
            15,
            f"not signed in: {driver.find_element(By.ID, 'sign-in-error').text!r}",
        )
        self.assertTrue(self.stack.wait_for_filter(address), f"{address} never reached the listener's filter")
        return address

    def conversation_link(self, driver, peer: str):
        links = driver.find_elements(By.CSS_SELECTOR, f'.conversation-link[data-peer="{peer}"]')
        return links[0] if links else None

    def api_calls(self, driver, name: str):
        return [call["body"] for call in driver.execute_script("return window.__calls") if call["url"].endswith(f"/v1/{name}")]

    def assert_clean_console(self, driver, logs=None):
        """No script error or CSP violation; failed API answers (404 probes, 401s) are expected."""
        problems = [
            entry
            for entry in (driver.get_log("browser") if logs is None else logs)
            if entry["level"] == "SEVERE" and not (entry.get("source") == "network" and "/v1/" in entry["message"])
        ]
        self.assertEqual(problems, [], "the browser logged errors")

    def assert_first_party_only(self, driver):
        urls = []
        for entry in driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message.get("method") == "Network.requestWillBeSent":
                urls.append(message["params"]["request"]["url"])
        foreign = [url for url in urls if not url.startswith((self.stack.url + "/", "data:", "blob:", "about:"))]
        self.assertTrue(urls, "no request was seen")
        self.assertEqual(foreign, [], "the page made third-party requests")

    # -- tests --------------------------------------------------------------------------------------

    def test_sign_in_then_a_message_appears_within_2_s_without_a_reload(self):
        driver = self.browser()
        self.sign_in_ok(driver, "KJ7LIV", 7)
        driver.execute_script("window.__sameDocument = true")
        started = time.monotonic()
        answer = self.stack.inject(message_line("KJ7ABC-1", "KJ7LIV-7", "Live test: are you there?", "12"))
        self.assertEqual(answer.get("delivered"), 1, answer)
        link = self.wait(lambda: self.conversation_link(driver, "KJ7ABC-1"), 5, "the message never appeared")
        elapsed = time.monotonic() - started
        print(f"\n    message shown {elapsed * 1000:.0f} ms after it reached APRS-IS", end=" ", flush=True)
        self.assertLessEqual(elapsed, 2.0, "shown later than 2 s after its arrival")
        self.assertTrue(driver.execute_script("return window.__sameDocument === true"), "the page was reloaded")
        self.assertIn("Live test: are you there?", link.text)
        self.assertEqual(link.find_element(By.CSS_SELECTOR, ".unread").text.split()[0], "1")
        link.click()
        self.wait(lambda: driver.find_element(By.ID, "conversation-title").text == "KJ7ABC-1", 5, "no conversation")
        texts = [element.text for element in driver.find_elements(By.CSS_SELECTOR, "#messages .message.received .text")]
        self.assertEqual(texts, ["Live test: are you there?"])
        self.wait(lambda: not self.conversation_link(driver, "KJ7ABC-1").find_elements(By.CSS_SELECTOR, ".unread"), 5,
                  "an opened conversation still counts as unread")
        self.assertTrue(driver.find_element(By.ID, "connection").text.startswith(("Live", "Up to date")))
        self.assert_clean_console(driver)
        self.assert_first_party_only(driver)

    def test_hostile_answers_in_every_field_leave_the_page_working(self):
        """Every field of every answer holds hostile values in turn (prototype names, 10 KB strings, control and
        bidi characters, wrong types; hostile.js), peers' avatar icons are `constructor` and `__proto__` on the
        real server too, and one entry fails to render: the page stays signed in, shows that entry as a plain
        line and logs it, pollutes no prototype, and its sync loop goes on with the real server afterwards."""
        for call, icon in [("CONSTR", "constructor"), ("PROTO", "__proto__")]:
            answer = self.stack.api("register", {
                "callsign": call, "ssid": 1, "auth": str(passcode(call)), "wantHistory": False, "since": 0,
                "avatarUpdate": True, "avatarHash": "x", "avatarIcon": icon,
            })
            self.assertEqual(answer.status, 200, answer.body)
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostile.js")) as file:
            hostile = file.read()
        fail_one = """
          const iso = Date.prototype.toISOString;
          Date.prototype.toISOString = function () {
            if (this.getTime() === 1337) throw new Error("test: this entry fails to render");
            return iso.call(this);
          };
          window.__hostile = true;
        """
        driver = self.browser(fail_one, "window.__hostileRounds = 60;", hostile)
        # The owner (remember): its settings, subscriptions and forwarding screens read hostile answers too.
        self.sign_in_ok(driver, "KJ7HST", 2, remember=True)
        self.assertEqual(driver.find_element(By.ID, "claim-status").text, "This browser holds the station key")
        for view in ["subs", "settings", "c/KJ7HOS-1", "c/__PROTO__", "settings", ""]:
            driver.execute_script(f"location.hash = '#/{view}'")
            time.sleep(0.3)
            if view == "settings" and self.button(driver, "Save settings").is_displayed():
                self.button(driver, "Save settings").click()
                self.button(driver, "Show").click()
        self.wait(lambda: driver.execute_script("return window.__hostileDone === true"), 60,
                  f"the hostile syncs did not all run: {driver.execute_script('return window.__hostileSyncs')}")
        print(f"\n    {driver.execute_script('return window.__hostileSyncs')} hostile syncs of "
              f"{driver.execute_script('return window.__hostileValues')} values each", end=" ", flush=True)
        # Real messages from peers whose avatar icons are prototype names, through the real server.
        for sender in ["CONSTR-1", "PROTO-1"]:
            self.assertEqual(self.stack.inject(message_line(sender, "KJ7HST-2", f"real from {sender}", "3")).get("delivered"), 1)
        for sender in ["CONSTR-1", "PROTO-1"]:
            link = self.wait(lambda: self.conversation_link(driver, sender), 10,
                             f"the sync loop did not go on after the hostile answers ({sender})")
            self.assertIn(f"real from {sender}", link.text)
        # Hostile text through APRS-IS itself: markup, a bidi override, prototype names, stays text.
        evil = "\u202e<img src=x id=evil> __proto__ constructor\u202c"
        self.assertEqual(self.stack.inject(message_line("KJ7EVL-1", "KJ7HST-2", evil, "7")).get("delivered"), 1)
        link = self.wait(lambda: self.conversation_link(driver, "KJ7EVL-1"), 10, "the hostile text never arrived")
        self.assertIn("<img src=x id=evil>", link.find_element(By.CSS_SELECTOR, ".preview").get_attribute("textContent"))
        self.assertEqual(driver.find_elements(By.ID, "evil"), [], "text from APRS-IS became markup")
        self.assertEqual(driver.find_element(By.ID, "station").text, "Signed in as KJ7HST-2")
        self.assertTrue(driver.execute_script("return ({}).polluted === undefined && Object.prototype.polluted === undefined"))
        for peer in ["__PROTO__", "CONSTRUCTOR", "TOSTRING"]:
            self.assertTrue(self.conversation_link(driver, peer), f"no conversation with {peer}")
        self.assert_no_horizontal_scroll(driver)
        self.assertGreater(len(driver.find_elements(By.CSS_SELECTOR, "#catches > li")), 10, "no hostile subscription entry shown")
        # The entry that failed: a plain line, and logged.
        plain = [element.text for element in driver.find_elements(By.CSS_SELECTOR, "#conversations .plain-entry")]
        self.assertIn("KJ7FAIL: render me plainly", plain)
        driver.execute_script("location.hash = '#/c/KJ7FAIL'")
        self.wait(lambda: "KJ7FAIL: render me plainly" in [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#messages .plain-entry")],
                  10, "the failed entry is not a plain line in its conversation")
        logs = driver.get_log("browser")
        self.assertTrue([entry for entry in logs if "could not be shown" in entry["message"]], "the failure was not logged")
        self.assert_clean_console(driver, logs)

    def test_a_wrong_passcode_shows_the_servers_error(self):
        wrong = (passcode("KJ7BAD") + 1) % 32768
        expected = self.stack.api(
            "register", {"callsign": "KJ7BAD", "ssid": 2, "auth": str(wrong), "wantHistory": True, "since": 0}
        )
        self.assertEqual(expected.status, 401)
        text = expected.json()["error"]
        driver = self.browser()
        self.sign_in(driver, "KJ7BAD", 2, code=wrong)
        error = self.wait(lambda: driver.find_element(By.ID, "sign-in-error").text, 10, "no error shown")
        self.assertEqual(error, f"Sign-in failed: {text}")
        self.assertFalse(driver.find_element(By.ID, "app").is_displayed())
        self.assert_clean_console(driver)

    def test_it_resumes_from_its_cursor_after_a_network_drop(self):
        driver = self.browser()
        self.sign_in_ok(driver, "KJ7NET", 3)
        self.stack.inject(message_line("KJ7ABC-2", "KJ7NET-3", "before the drop", "1"))
        self.wait(lambda: self.conversation_link(driver, "KJ7ABC-2"), 5, "the first message never appeared")
        driver.execute_cdp_cmd("Network.enable", {})
        offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", offline)
        self.wait(lambda: driver.find_element(By.ID, "connection").text.startswith("Offline"), 10,
                  "the page did not notice the drop")
        self.stack.inject(message_line("KJ7ABC-2", "KJ7NET-3", "sent while you were offline", "2"))
        time.sleep(1.0)
        self.assertNotIn("offline", self.conversation_link(driver, "KJ7ABC-2").text)
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {**offline, "offline": False})
        self.wait(lambda: "sent while you were offline" in self.conversation_link(driver, "KJ7ABC-2").text, 10,
                  "the message sent during the drop never appeared")
        self.assertEqual(self.conversation_link(driver, "KJ7ABC-2").find_element(By.CSS_SELECTOR, ".unread").text.split()[0], "2")

    def test_the_service_worker_registers_and_the_manifest_installs(self):
        driver = self.browser()
        self.open_page(driver)
        registration = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "navigator.serviceWorker.ready.then(r => done({scope: r.scope, script: r.active && r.active.scriptURL}));"
        )
        self.assertEqual(registration, {"scope": self.stack.url + "/", "script": self.stack.url + "/sw.js"})
        driver.refresh()
        self.wait(lambda: driver.execute_script("return navigator.serviceWorker.controller !== null"), 10,
                  "the service worker does not control the page")
        manifest_link = driver.find_element(By.CSS_SELECTOR, 'link[rel="manifest"]').get_attribute("href")
        manifest = self.stack.get("/" + manifest_link.split("/", 3)[3])
        self.assertEqual(manifest.header("content-type").split(";")[0], "application/manifest+json")
        document = manifest.json()
        self.assertEqual(document["display"], "standalone")
        big = [icon for icon in document["icons"] if icon["type"] == "image/png" and int(icon["sizes"].split("x")[0]) >= 192]
        self.assertTrue(big, "no PNG icon of 192 px or more")
        for icon in big:
            answer = self.stack.get("/" + icon["src"])
            self.assertEqual(answer.status, 200, icon)
            width, height = struct.unpack(">II", answer.body[16:24])
            self.assertEqual(f"{width}x{height}", icon["sizes"])
        self.assertIn("width=device-width", driver.find_element(By.CSS_SELECTOR, 'meta[name="viewport"]').get_attribute("content"))
        self.assert_clean_console(driver)

    def test_enable_notifications_subscribes_with_the_vapid_key_and_registers_webpush(self):
        driver = self.browser(RECORDER, PUSH_STUB)
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": "window.__info = %s;" % json.dumps(
            {"server": "aprs-cloud", "version": "test", "features": ["webpush"], "maxWait": 300, "vapidPublicKey": VAPID_KEY}
        )})
        driver.execute_cdp_cmd(
            "Browser.grantPermissions", {"origin": self.stack.url, "permissions": ["notifications"]}
        )
        self.sign_in_ok(driver, "KJ7PSH", 5)
        button = self.button(driver, "Enable notifications")
        self.wait(button.is_enabled, 10, "the button stays disabled")
        button.click()
        registers = self.wait(
            lambda: [body for body in self.api_calls(driver, "register") if body.get("platform") == "webpush"], 10,
            "no register call with platform webpush",
        )
        body = registers[0]
        self.assertEqual(body["callsign"], "KJ7PSH")
        self.assertEqual(body["ssid"], 5)
        self.assertEqual(body["auth"], str(passcode("KJ7PSH")))
        self.assertEqual(body["pushToken"], STUB_ENDPOINT)
        self.assertEqual(body["pushKeys"], {"p256dh": STUB_P256DH, "auth": STUB_AUTH})
        subscribed = driver.execute_script("return window.__subscribed")
        self.assertTrue(subscribed["userVisibleOnly"])
        self.assertEqual(bytes(subscribed["key"]), base64.urlsafe_b64decode(VAPID_KEY + "=" * (-len(VAPID_KEY) % 4)))
        # What the page says next is the server's verdict: on, or its own error text.
        verdict = self.stack.api("register", body)
        status = self.wait(
            lambda: (lambda text: text if text.startswith(("Notifications are on", "Notifications are not on")) else None)(
                driver.find_element(By.ID, "notify-status").text), 10, "no outcome shown")
        if verdict.status == 200:
            self.assertEqual(status, "Notifications are on for KJ7PSH-5 in this browser.")
        else:
            self.assertEqual(status, f"Notifications are not on: {verdict.json()['error']}")

    def test_without_server_info_notifications_are_explained_not_offered(self):
        if self.stack.features():
            self.skipTest("not applicable: this server has /v1/info (the notifications flow is tested with it)")
        driver = self.browser()
        self.sign_in_ok(driver, "KJ7NOI", 1)
        button = self.button(driver, "Enable notifications")
        self.wait(lambda: "does not offer notifications" in driver.find_element(By.ID, "notify-status").text, 10,
                  "no explanation")
        self.assertFalse(button.is_enabled())

    def test_the_text_limit_and_forbidden_characters_are_shown_before_sending(self):
        driver = self.browser(RECORDER, "window.__info = %s;" % json.dumps(
            {"server": "aprs-cloud", "version": "test", "features": ["send"], "maxWait": 300}))
        self.sign_in_ok(driver, "KJ7TXT", 4, remember=True)
        driver.find_element(By.LINK_TEXT, "New message").click()
        to = self.field(driver, "To")
        self.wait(lambda: driver.switch_to.active_element == to, 5, "To is not focused")
        to.send_keys("KJ7ABC-1")
        message = self.field(driver, "Message")
        message.send_keys("x" * 70)
        self.assertEqual(message.get_attribute("value"), "x" * 70, "the text was cut")
        self.assertEqual(driver.find_element(By.ID, "message-count").text, "70 of 67 characters")
        self.assertEqual(
            driver.find_element(By.ID, "message-error").text, "3 characters too many: an APRS message holds at most 67."
        )
        self.assertEqual(message.get_attribute("aria-invalid"), "true")
        os.makedirs(SCREENSHOTS, exist_ok=True)
        driver.save_screenshot(os.path.join(SCREENSHOTS, "webclient-1280-send-form.png"))
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 360, "height": 740, "deviceScaleFactor": 2, "mobile": True})
        time.sleep(0.3)
        self.assert_no_horizontal_scroll(driver)
        driver.save_screenshot(os.path.join(SCREENSHOTS, "webclient-360-send-form.png"))
        self.button(driver, "Send").click()
        time.sleep(0.3)
        self.assertEqual(self.api_calls(driver, "send"), [], "an invalid text was sent")
        self.assertEqual(driver.switch_to.active_element, message)
        message.clear()
        message.send_keys("temp {42} | ok")
        self.assertEqual(
            driver.find_element(By.ID, "message-error").text,
            "APRS does not allow { | in a message; please remove them.",
        )
        message.clear()
        message.send_keys("73 and thanks")
        self.assertEqual(driver.find_element(By.ID, "message-error").text, "")
        self.button(driver, "Send").click()
        sends = self.wait(lambda: self.api_calls(driver, "send"), 5, "no send call")
        self.assertEqual({key: sends[0][key] for key in ("to", "text", "callsign", "ssid")},
                         {"to": "KJ7ABC-1", "text": "73 and thanks", "callsign": "KJ7TXT", "ssid": 4})
        if not self.stack.has_send():
            # The server's own error text, as it is.
            answer = self.stack.api("send", sends[0])
            self.wait(lambda: driver.find_element(By.ID, "send-status").text == f"Not sent: {answer.json()['error']}", 5,
                      "the server's error is not shown")

    def test_send_shows_pending_then_delivered_when_the_peer_acks(self):
        if not self.stack.has_send():
            self.skipTest(
                "not applicable: this server has no /v1/send (POST /v1/send answers 404 and /v1/info does not "
                "list 'send'); it runs once the send endpoint is merged"
            )
        driver = self.browser()
        self.sign_in_ok(driver, "KJ7SND", 1, remember=True)
        driver.find_element(By.LINK_TEXT, "New message").click()
        self.field(driver, "To").send_keys("KJ7PER-2")
        self.field(driver, "Message").send_keys("Hello from the web client")
        self.button(driver, "Send").click()
        state = lambda: [element.text for element in driver.find_elements(By.CSS_SELECTOR, "#messages .message.sent .state")]  # noqa: E731
        self.wait(lambda: state() == ["pending"], 10, f"not pending: {driver.find_element(By.ID, 'send-status').text}")

        def transmitted_number():
            for entry in self.stack.transmitted():
                line = entry.get("line") or ""
                if line.startswith("KJ7SND-1>") and "::KJ7PER-2 :Hello from the web client{" in line:
                    return line.rsplit("{", 1)[1]
            return None

        number = self.wait(transmitted_number, 15, "the message never reached APRS-IS")
        self.stack.inject(message_line("KJ7PER-2", "KJ7SND-1", f"ack{number}"))
        self.wait(lambda: state() == ["delivered"], 10, "the ACK did not turn the state to delivered")
        self.assert_clean_console(driver)

    def test_remember_keeps_the_station_across_a_reload_and_sign_out_forgets_it(self):
        driver = self.browser()
        self.sign_in_ok(driver, "KJ7FGT", 6)
        self.assertEqual(driver.execute_script("return Object.keys(localStorage)"), [], "stored without remember")
        driver.find_element(By.ID, "sign-out").click()
        self.sign_in_ok(driver, "KJ7REM", 8, remember=True)
        self.stack.inject(message_line("KJ7ABC-3", "KJ7REM-8", "kept for later", "5"))
        self.wait(lambda: self.conversation_link(driver, "KJ7ABC-3"), 5, "the message never appeared")
        driver.refresh()
        self.wait(lambda: driver.find_element(By.ID, "station").text == "Signed in as KJ7REM-8", 10,
                  "not signed in again after a reload")
        self.wait(lambda: self.conversation_link(driver, "KJ7ABC-3"), 5, "the message is gone after a reload")
        self.assertEqual(driver.find_element(By.ID, "passcode").get_attribute("value"), "")
        # A conversation's own address, opened with the station remembered: its "To" is that peer.
        driver.get(self.stack.url + "/#/c/KJ7ABC-3")
        driver.refresh()
        self.wait(lambda: driver.find_element(By.ID, "station").text == "Signed in as KJ7REM-8", 10,
                  "not signed in again at a conversation's address")
        self.wait(lambda: driver.find_element(By.ID, "to").get_attribute("value") == "KJ7ABC-3", 5,
                  "a conversation opened at its address has no To")
        # The station was claimed at sign-in: "remember" keeps its key, never the passcode.
        saved = json.loads(driver.execute_script("return localStorage.getItem('aprs-cloud.session')"))
        self.assertEqual(sorted(saved), ["callsign", "ssid", "stationKey"], saved)
        self.assertEqual(len(saved["stationKey"]), 43)
        driver.find_element(By.ID, "sign-out").click()
        self.wait(lambda: driver.find_element(By.ID, "sign-in-view").is_displayed(), 5, "no sign-in form")
        self.assertEqual(driver.execute_script("return Object.keys(localStorage)"), [])

    def test_sign_in_claims_the_station_and_another_browser_is_told_it_is_claimed(self):
        owner = self.browser()
        self.sign_in_ok(owner, "KJ7OWN", 4, remember=True)
        self.wait(lambda: owner.find_element(By.ID, "claim-status").text == "This browser holds the station key", 10,
                  "the owner's page does not say it holds the key")
        key = json.loads(owner.execute_script("return localStorage.getItem('aprs-cloud.session')"))["stationKey"]
        # A second browser with only the passcode reads, and is told plainly why it cannot send.
        other = self.browser()
        self.sign_in_ok(other, "KJ7OWN", 4)
        self.wait(lambda: "Claimed by another device" in other.find_element(By.ID, "claim-status").text, 10,
                  "the second browser is not told the station is claimed")
        other.get(self.stack.url + "/#/c/KJ7ABC-7")
        unavailable = other.find_element(By.ID, "send-unavailable")
        self.wait(unavailable.is_displayed, 10, "the send form does not explain the claim")
        self.assertIn("claimed by another device", unavailable.text)
        # Carried over with the key (and no passcode), the second browser is the owner too.
        other.find_element(By.ID, "sign-out").click()
        self.open_page(other)
        self.field(other, "Callsign").send_keys("KJ7OWN")
        Select(self.field(other, "SSID")).select_by_value("4")
        other.find_element(By.ID, "station-key-toggle").click()
        self.field(other, "Station key (from the device that claimed this station)").send_keys(key)
        self.button(other, "Sign in").click()
        self.wait(lambda: other.find_element(By.ID, "claim-status").text == "This browser holds the station key", 10,
                  f"not signed in with the key: {other.find_element(By.ID, 'sign-in-error').text!r}")
        self.assert_clean_console(owner)
        # "Sign out" forgets the key, so it gives the claim up: the station can be claimed again.
        owner.find_element(By.ID, "sign-out").click()
        self.wait(lambda: owner.find_element(By.ID, "sign-in-view").is_displayed(), 5, "no sign-in form")
        identity = {"callsign": "KJ7OWN", "ssid": 4, "auth": str(passcode("KJ7OWN"))}
        self.assertEqual(self.stack.api("claim", identity).status, 200, "the claim was not released at sign-out")

    def test_a_claim_of_a_station_in_use_is_provisional_until_the_code_is_entered(self):
        # The app used KJ7USE-5 for an hour: its phone (a Web Push subscription here) registered keyless.
        identity = {"callsign": "KJ7USE", "ssid": 5, "auth": str(passcode("KJ7USE"))}
        phone = "https://push.example.net/send/claim-phone"
        registered = self.stack.api("register", {**identity, "platform": "unifiedpush", "pushToken": phone,
                                                 "wantHistory": False, "since": 0})
        self.assertEqual(registered.status, 200, registered.body)
        database = glob.glob(os.path.join(self.stack.directory, "var", "*.sqlite"))[0]

        def write(sql: str, *values):
            connection = sqlite3.connect(database, timeout=10)
            try:
                connection.execute(sql, values)
                connection.commit()
            finally:
                connection.close()

        write("UPDATE stations SET created_at = created_at - 3600000, registered_at = registered_at - 3600000 "
              "WHERE address = 'KJ7USE-5'")
        write("UPDATE devices SET registered_at = registered_at - 3600000 WHERE station = 'KJ7USE-5'")
        driver = self.browser()
        self.sign_in_ok(driver, "KJ7USE", 5, remember=True)
        self.wait(lambda: "Claimed provisionally" in driver.find_element(By.ID, "claim-status").text, 10,
                  "the page does not say the claim is provisional")
        self.assertTrue(driver.find_element(By.ID, "claim-proof").is_displayed())
        driver.get(self.stack.url + "/#/c/KJ7ABC-7")
        unavailable = driver.find_element(By.ID, "send-unavailable")
        self.wait(unavailable.is_displayed, 10, "the send form does not say the claim is provisional")
        self.assertIn("Claimed provisionally", unavailable.text)
        # The push sender's round for the phone, stood in for by its salted HMAC (Python's hmac: code 123456).
        key_hash = json.loads(driver.execute_script("return localStorage.getItem('aprs-cloud.session')"))["stationKey"]
        key_hash = hashlib.sha256(key_hash.encode()).hexdigest()
        salt = "00112233445566778899aabbccddeeff"
        code_hash = hmac.new(salt.encode(), b"123456", hashlib.sha256).hexdigest()
        self.assertTrue(wait_until(lambda: self._round_done(database, key_hash), 10, 0.1),
                        "the listener never took the claim's round")
        write("DELETE FROM claim_codes WHERE station = 'KJ7USE-5'")
        write("INSERT INTO claim_codes (station, key_hash, token, registered_at, salt, code_hash) "
              "SELECT 'KJ7USE-5', ?, token, registered_at, ?, ? FROM devices WHERE station = 'KJ7USE-5'",
              key_hash, salt, code_hash)
        write("UPDATE claim_requests SET codes_expire_at = ?, wrong = 0 WHERE station = 'KJ7USE-5'",
              int(time.time() * 1000) + 600_000)
        code = self.field(driver, "Claim code")
        code.send_keys("000000")
        self.button(driver, "Prove").click()
        self.wait(lambda: "wrong code" in driver.find_element(By.ID, "claim-proof-error").text, 10,
                  "a wrong code is not shown")
        code.clear()
        code.send_keys("123456")
        self.button(driver, "Prove").click()
        self.wait(lambda: driver.find_element(By.ID, "claim-status").text == "This browser holds the station key", 10,
                  f"not proven: {driver.find_element(By.ID, 'claim-proof-error').text!r}")
        self.assertFalse(driver.find_element(By.ID, "claim-proof").is_displayed())
        self.wait(lambda: not driver.find_element(By.ID, "send-unavailable").is_displayed(), 10,
                  "the send form stays locked after the proof")
        # The proof reads the owner's settings, as a sign-in does: the form is there without signing in again.
        driver.get(self.stack.url + "/#/settings")
        self.wait(lambda: driver.find_element(By.ID, "settings-form").is_displayed(), 10,
                  "the settings stay unread after the proof")
        self.assert_clean_console(driver)

    @staticmethod
    def _round_done(database: str, key_hash: str) -> bool:
        connection = sqlite3.connect(database, timeout=10)
        try:
            row = connection.execute(
                "SELECT codes_due FROM claim_requests WHERE station = 'KJ7USE-5' AND key_hash = ?", (key_hash,)
            ).fetchone()
            return row is not None and row[0] == 0
        finally:
            connection.close()

    def test_without_remember_the_station_is_not_claimed_and_the_page_says_how(self):
        driver = self.browser()
        self.sign_in_ok(driver, "KJ7TMP", 2)
        self.wait(lambda: "Not claimed" in driver.find_element(By.ID, "claim-status").text, 10,
                  "the page does not say the station is unclaimed")
        driver.get(self.stack.url + "/#/c/KJ7ABC-7")
        unavailable = driver.find_element(By.ID, "send-unavailable")
        self.wait(unavailable.is_displayed, 10, "the send form does not say why it is off")
        self.assertIn("Remember me", unavailable.text)
        # Nothing was claimed: a key lost at the next reload would have locked the owner out.
        answer = self.stack.api("settings", {"callsign": "KJ7TMP", "ssid": 2, "auth": str(passcode("KJ7TMP"))})
        self.assertEqual(answer.status, 403)
        self.assertIn("POST /v1/claim", answer.json()["error"])

    def test_a_cross_site_form_and_a_no_cors_fetch_from_another_port_change_nothing(self):
        import http.server
        import threading

        # An unclaimed station, registered the app's way: a same-site unregister would drop it.
        identity = {"callsign": "KJ7VIC", "ssid": 3, "auth": str(passcode("KJ7VIC"))}
        self.assertEqual(self.stack.api("register", {**identity, "wantHistory": False}).status, 200)
        target = self.stack.url + "/v1/unregister"
        page = f"""<!doctype html><html><body>
<form id="attack" method="POST" action="{target}" enctype="text/plain">
  <input name='{{"callsign":"KJ7VIC","ssid":3,"auth":"{identity["auth"]}","x":"' value='"}}'>
</form>
<script>
  window.fetched = false;
  fetch({json.dumps(target)}, {{method: "POST", mode: "no-cors", body: JSON.stringify({json.dumps(identity)})}})
    .then(() => {{ window.fetched = true; }}, () => {{ window.fetched = "failed"; }});
</script></body></html>""".encode()

        class Attacker(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.send_header("content-length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.shutdown)
        driver = self.browser()
        driver.get(f"http://127.0.0.1:{server.server_address[1]}/")
        self.wait(lambda: driver.execute_script("return window.fetched") is True, 10, "the no-cors fetch never went out")
        driver.find_element(By.ID, "attack").submit()
        self.wait(lambda: "cross-site request refused" in driver.page_source, 10,
                  f"the form's POST was not refused: {driver.page_source[:300]}")
        # Still registered: settings answer "claim it first" (403), not "not registered" (404).
        answer = self.stack.api("settings", identity)
        self.assertEqual(answer.status, 403, answer.json())
        self.assertIn("POST /v1/claim", answer.json()["error"])

    def test_keyboard_only_sign_in_and_focus_order(self):
        driver = self.browser()
        self.open_page(driver)
        order = []
        for _ in range(7):
            ActionChains(driver).send_keys(Keys.TAB).perform()
            active = driver.switch_to.active_element
            order.append(active.get_attribute("id") or active.get_attribute("class"))
        self.assertEqual(
            order, ["skip-link", "callsign", "ssid", "passcode", "station-key-toggle", "remember", "sign-in-button"]
        )
        for _ in range(5):
            ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
        self.assertEqual(driver.switch_to.active_element.get_attribute("id"), "callsign")
        ActionChains(driver).send_keys("kj7key").send_keys(Keys.TAB).send_keys(Keys.TAB).send_keys(
            str(passcode("KJ7KEY"))).send_keys(Keys.ENTER).perform()
        self.wait(lambda: driver.find_element(By.ID, "station").text == "Signed in as KJ7KEY", 10, "Enter did not sign in")

    def test_the_operators_status_page_shows_the_listener_and_what_it_stored(self):
        """GET /status on the private listener: the APRS-IS connection, the filter, a message stored in the
        last hour's chart, no script and no console error under its own CSP; a screenshot is kept."""
        answer = self.stack.api("register", {
            "callsign": "KJ7STA", "ssid": 3, "auth": str(passcode("KJ7STA")), "wantHistory": False, "since": 0,
        })
        self.assertEqual(answer.status, 200, answer.body)
        self.assertTrue(self.stack.wait_for_filter("KJ7STA-3"))
        driver = self.browser()
        url = self.stack.metrics_url + "/status"

        def stored_since_start() -> int:
            """The listener's `N stored` on the page (other tests share the stack: compare, never assume 0)."""
            driver.get(url)
            found = re.search(r"(\d+) stored,", driver.find_element(By.ID, "messages").text)
            return int(found.group(1)) if found else -1
        before = stored_since_start()
        self.assertGreaterEqual(before, 0, "the page shows no listener counts")
        self.assertEqual(self.stack.inject(message_line("KJ7ABC-1", "KJ7STA-3", "For the status page", "5")).get("delivered"), 1)
        self.wait(lambda: stored_since_start() > before, 15, "the page never showed the stored message")
        self.assertIn("aprs-cloud", driver.title)
        self.assertIn(driver.find_element(By.ID, "health").text, ("ok", "degraded"))
        self.assertIn("connected to 127.0.0.1:", driver.find_element(By.ID, "aprsis").text)
        self.assertIn("of 510 bytes", driver.find_element(By.ID, "filter").text)
        self.assertEqual(len(driver.find_elements(By.CSS_SELECTOR, "#chart polyline")), 3)
        self.assertEqual(driver.find_elements(By.TAG_NAME, "script"), [])
        problems = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        self.assertEqual(problems, [], "the status page logged errors")
        driver.save_screenshot(os.path.join(SCREENSHOTS, "status-page-1280.png"))
        # Only on the private listener: the public server does not have it.
        self.assertEqual(self.stack.get("/status").status, 404)

    def test_screenshots_at_360_and_1280_pixels(self):
        os.makedirs(SCREENSHOTS, exist_ok=True)
        image = base64.b64encode(png(64, 64)).decode()
        for station, avatar in [("KJ7ABC-7", {"avatarIcon": "radio"}), ("W5AGO", {"avatarImage": image})]:
            call, _, ssid = station.partition("-")
            answer = self.stack.api("register", {
                "callsign": call, "ssid": int(ssid or 0), "auth": str(passcode(call)), "wantHistory": False,
                "since": 0, "avatarUpdate": True, "avatarHash": "x", **avatar,
            })
            self.assertEqual(answer.status, 200, answer.body)
        driver = self.browser()
        phone = {"width": 360, "height": 740, "deviceScaleFactor": 2, "mobile": True}
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", phone)
        self.open_page(driver)
        driver.save_screenshot(os.path.join(SCREENSHOTS, "webclient-360-sign-in.png"))
        self.sign_in_ok(driver, "KJ7SCR", 9)
        lines = [
            message_line("DL1XYZ-10", "KJ7SCR-9", "Guten Tag! QSL via bureau, 73", "1"),
            message_line("W5AGO", "KJ7SCR-9", "Net tonight at 8 on the 146.52 simplex", "7"),
            message_line("KJ7ABC-7", "KJ7SCR-9", "Are you on the summit yet?", "20"),
            message_line("KJ7SCR-9", "KJ7ABC-7", "Almost, 10 minutes out. Signal is great up here"),
            message_line("KJ7ABC-7", "KJ7SCR-9", "Supercalifragilisticexpialidocious-frequency-list-146520-147000", "21"),
            message_line("KJ7ABC-7", "KJ7SCR-9", "See you at the trailhead, 73!", "22"),
        ]
        for line in lines:
            self.stack.inject(line)
            time.sleep(0.05)
        self.wait(lambda: "73!" in (self.conversation_link(driver, "KJ7ABC-7") or driver.find_element(By.TAG_NAME, "body")).text,
                  10, "the messages never appeared")
        self.wait(lambda: driver.find_elements(By.CSS_SELECTOR, '.conversation-link[data-peer="W5AGO"] .avatar img'), 10,
                  "the image avatar never appeared")
        self.assertTrue(driver.find_elements(By.CSS_SELECTOR, '.conversation-link[data-peer="KJ7ABC-7"] .avatar[data-icon="radio"]'))
        self.assertEqual(driver.find_element(By.CSS_SELECTOR, '.conversation-link[data-peer="DL1XYZ-10"] .avatar').text, "DL")
        self.assert_no_horizontal_scroll(driver)
        driver.save_screenshot(os.path.join(SCREENSHOTS, "webclient-360-inbox.png"))
        self.conversation_link(driver, "KJ7ABC-7").click()
        self.wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#messages .message")) == 4, 10, "conversation incomplete")
        self.assert_no_horizontal_scroll(driver)
        driver.save_screenshot(os.path.join(SCREENSHOTS, "webclient-360-conversation.png"))
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
        time.sleep(0.3)
        self.assert_no_horizontal_scroll(driver)
        driver.save_screenshot(os.path.join(SCREENSHOTS, "webclient-1280.png"))
        for name in ["webclient-360-sign-in.png", "webclient-360-inbox.png", "webclient-360-conversation.png", "webclient-1280.png"]:
            self.assertGreater(os.path.getsize(os.path.join(SCREENSHOTS, name)), 5000, name)
        print(f"\n    screenshots in {SCREENSHOTS}", end=" ", flush=True)
        self.assert_clean_console(driver)

    # -- the station's own screens ---------------------------------------------------------------------

    def owner(self, driver, call: str, ssid: int) -> str:
        """Signs in with "remember": the browser claims the station; returns its station key."""
        self.sign_in_ok(driver, call, ssid, remember=True)
        self.wait(lambda: driver.find_element(By.ID, "claim-status").text == "This browser holds the station key", 10,
                  "the station was not claimed")
        return json.loads(driver.execute_script("return localStorage.getItem('aprs-cloud.session')"))["stationKey"]

    def info(self) -> dict:
        """The server's /v1/info answer."""
        answer = self.stack.request("GET", "/v1/info", None, {})
        self.assertEqual(answer.status, 200, answer.body)
        return answer.json()

    def server_settings(self, call: str, ssid: int, key: str, **fields) -> dict:
        answer = self.stack.request(
            "POST", "/v1/settings", json.dumps({"callsign": call, "ssid": ssid, **fields}).encode(),
            {"content-type": "application/json", "authorization": f"Bearer {key}"},
        )
        self.assertEqual(answer.status, 200, answer.body)
        return answer.json()

    def open_view(self, driver, view: str, heading: str):
        driver.execute_script(f"location.hash = '#/{view}'")
        self.wait(lambda: driver.find_element(By.ID, f"{view}-title").is_displayed(), 5, f"no {view} view")
        self.assertEqual(driver.find_element(By.ID, f"{view}-title").text, heading)

    def test_remember_keeps_only_the_key_and_nothing_stores_a_message(self):
        driver = self.browser()
        self.open_page(driver)
        # An inbox an older version of the page stored: it goes at the next load.
        driver.execute_script("localStorage.setItem('aprs-cloud.inbox.OLD', '{\"entries\":[]}')")
        self.owner(driver, "KJ7STO", 3)
        self.stack.inject(message_line("KJ7ABC-3", "KJ7STO-3", "secret plans for the field day", "5"))
        self.wait(lambda: self.conversation_link(driver, "KJ7ABC-3"), 5, "the message never appeared")
        driver.refresh()
        self.wait(lambda: self.conversation_link(driver, "KJ7ABC-3"), 10, "the history did not come back after a reload")
        self.wait(lambda: driver.execute_script("return navigator.serviceWorker.controller !== null"), 10, "no worker")
        stored = driver.execute_async_script("""
          const done = arguments[arguments.length - 1];
          (async () => {
            const cached = [];
            for (const name of await caches.keys()) {
              const cache = await caches.open(name);
              for (const request of await cache.keys()) {
                const body = await (await cache.match(request)).text();
                cached.push({url: request.url, body});
              }
            }
            done({local: Object.assign({}, localStorage), session: Object.assign({}, sessionStorage), cached});
          })();
        """)
        self.assertEqual(sorted(stored["local"]), ["aprs-cloud.session"], "an old inbox was left or more was stored")
        self.assertEqual(sorted(json.loads(stored["local"]["aprs-cloud.session"])), ["callsign", "ssid", "stationKey"])
        self.assertEqual(stored["session"], {})
        everything = json.dumps(stored)
        self.assertNotIn("secret plans", everything)
        self.assertNotIn(str(passcode("KJ7STO")), json.dumps(stored["local"]))
        self.assertTrue(stored["cached"], "the worker cached no app shell")
        for entry in stored["cached"]:
            path = entry["url"][len(self.stack.url):]
            self.assertNotIn("/v1/", path)
            self.assertRegex(path, r"^/(|index\.html|app\.css|manifest\.webmanifest|js/[a-z0-9/]+\.mjs|icons/[a-z0-9-]+\.(svg|png))$")

    def test_a_key_link_carries_the_station_key_to_another_browser(self):
        owner = self.browser()
        self.owner(owner, "KJ7LNK", 5)
        self.open_view(owner, "settings", "Settings")
        self.button(owner, "Show the link").click()
        link = self.wait(lambda: owner.find_element(By.ID, "key-link").get_attribute("value"), 5, "no link")
        self.assertIn("#key=KJ7LNK-5:", link)
        other = self.browser()
        # A damaged link: said so, and gone from the address too.
        other.get(self.stack.url + "/#key=KJ7LNK-5:not-a-key")
        self.wait(lambda: "does not carry a station key" in other.find_element(By.ID, "sign-in-error").text, 10,
                  "a damaged link is not explained")
        self.assertEqual(other.execute_script("return location.hash"), "")
        other.get(link)
        notice = self.wait(lambda: other.find_element(By.ID, "key-link-notice").text, 10, "no notice on the other device")
        self.assertIn("KJ7LNK-5", notice)
        self.assertEqual(other.execute_script("return location.hash"), "", "the key stayed in the address")
        self.assertNotIn("key=", other.current_url)
        self.assertEqual(other.switch_to.active_element.get_attribute("id"), "sign-in-button")
        other.switch_to.active_element.send_keys(Keys.ENTER)
        self.wait(lambda: other.find_element(By.ID, "claim-status").text == "This browser holds the station key", 10,
                  f"not signed in with the link: {other.find_element(By.ID, 'sign-in-error').text!r}")
        saved = json.loads(other.execute_script("return localStorage.getItem('aprs-cloud.session')"))
        old_key = link.rsplit(":", 1)[1]
        self.assertEqual(saved, {"callsign": "KJ7LNK", "ssid": 5, "stationKey": old_key})
        self.assert_clean_console(other)
        # The link leaked: a new key, and the old one (and so the other browser) stops working.
        self.button(owner, "Make a new key").click()
        self.wait(lambda: owner.find_element(By.ID, "key-rotated").text.startswith("This browser holds a new key"), 10,
                  f"no new key: {owner.find_element(By.ID, 'key-rotated').text!r}")
        new_key = json.loads(owner.execute_script("return localStorage.getItem('aprs-cloud.session')"))["stationKey"]
        self.assertNotEqual(new_key, old_key)
        self.server_settings("KJ7LNK", 5, new_key)
        refused = self.stack.request("POST", "/v1/settings", json.dumps({"callsign": "KJ7LNK", "ssid": 5}).encode(),
                                     {"content-type": "application/json", "authorization": f"Bearer {old_key}"})
        self.assertEqual(refused.status, 401)
        self.button(owner, "Show the link").click()
        self.wait(lambda: new_key in owner.find_element(By.ID, "key-link").get_attribute("value"), 5, "the link kept the old key")

    def test_settings_are_saved_to_the_server_and_a_bad_value_names_its_field(self):
        driver = self.browser()
        driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "Europe/Berlin"})
        key = self.owner(driver, "KJ7SET", 2)
        self.open_view(driver, "settings", "Settings")
        self.wait(lambda: self.field(driver, "Drop every message from these calls").is_enabled(), 5, "form not ready")
        blocked = self.field(driver, "Drop every message from these calls")
        blocked.send_keys("KJ7SPAM\nnot/a/call")
        self.button(driver, "Save settings").click()
        error = self.wait(lambda: driver.find_element(By.ID, "blocked-error").text, 5, "no error for the bad call")
        self.assertIn("“NOT/A/CALL” is not a call", error)
        self.assertEqual(blocked.get_attribute("aria-invalid"), "true")
        self.assertEqual(driver.switch_to.active_element, blocked)
        self.assertEqual(self.server_settings("KJ7SET", 2, key)["blocked"], [], "a bad form changed the server")
        blocked.clear()
        blocked.send_keys("KJ7SPAM, W5XYZ-3")
        driver.find_element(By.ID, "quiet-on").click()
        self.field(driver, "Always notify for these calls (also in quiet hours)").send_keys("KJ7VIP")
        driver.find_element(By.ID, "ack-device").click()
        driver.find_element(By.ID, "ssids-list").click()
        self.field(driver, "SSIDs to collect (numbers 0 to 15, separated by commas)").send_keys("0, 9")
        self.field(driver, "SSIDs the server acknowledges for (of those collected)").send_keys("9")
        driver.find_element(By.ID, "retention-pulled").click()
        retention = self.field(driver, "At most this many messages")
        retention.clear()
        retention.send_keys("200")
        self.button(driver, "Save settings").click()
        self.wait(lambda: driver.find_element(By.ID, "settings-status").text == "Settings saved.", 10,
                  f"not saved: {driver.find_element(By.ID, 'settings-error').text!r}")
        stored = self.server_settings("KJ7SET", 2, key)
        self.assertEqual(stored["blocked"], ["KJ7SPAM", "W5XYZ-3"])
        self.assertEqual(stored["quietHours"], {"start": 1320, "end": 420, "utcOffsetMinutes": 60})
        self.assertEqual(stored["quietBypass"], ["KJ7VIP"])
        self.assertEqual(stored["ackPolicy"], "device")
        self.assertEqual(stored["ssids"], [0, 2, 9], "the station's own SSID is always in the list")
        self.assertEqual(stored["ackSsids"], [9])
        self.assertEqual(stored["retention"], {"mode": "untilPulled", "max": 200})
        # Blocking from a conversation adds the peer to the list.
        self.stack.inject(message_line("KJ7NOY-1", "KJ7SET-2", "buy my antenna", "1"))
        self.wait(lambda: self.conversation_link(driver, "KJ7NOY-1"), 10, "no message")
        driver.execute_script("location.hash = '#/c/KJ7NOY-1'")
        self.wait(lambda: driver.find_element(By.ID, "block-peer").is_displayed(), 5, "no block button")
        self.assertEqual(driver.find_element(By.ID, "block-peer").get_attribute("aria-label"),
                         "Block KJ7NOY-1: drop every message from this station")
        driver.find_element(By.ID, "block-peer").click()
        self.wait(lambda: "KJ7NOY-1 is blocked" in driver.find_element(By.ID, "block-status").text, 5, "not blocked")
        self.assertEqual(self.server_settings("KJ7SET", 2, key)["blocked"], ["KJ7SPAM", "W5XYZ-3", "KJ7NOY-1"])
        self.assertFalse(driver.find_element(By.ID, "block-peer").is_displayed())
        self.open_view(driver, "settings", "Settings")
        self.assertIn("KJ7NOY-1", self.field(driver, "Drop every message from these calls").get_attribute("value"))
        # The explaining sentence of each ACK policy is tied to its choice.
        for policy in ["server", "device", "never"]:
            hint = driver.find_element(By.ID, f"ack-{policy}").get_attribute("aria-describedby")
            self.assertTrue(driver.find_element(By.ID, hint).text)
        # A mute preset.
        before = time.time() * 1000
        self.button(driver, "1 hour").click()
        self.wait(lambda: "muted until" in driver.find_element(By.ID, "mute-state").text, 5, "the mute is not shown")
        muted = self.server_settings("KJ7SET", 2, key)["mutedUntil"]
        self.assertTrue(before + 3600_000 - 5000 <= muted <= time.time() * 1000 + 3600_000 + 5000, muted)
        self.button(driver, "Unmute").click()
        self.wait(lambda: self.server_settings("KJ7SET", 2, key)["mutedUntil"] == 0, 5, "not unmuted")
        # Quiet hours follow the browser's zone: stored for UTC+5, the page moves them to Berlin's +1.
        self.server_settings("KJ7SET", 2, key, quietHours={"start": 1320, "end": 420, "utcOffsetMinutes": 300})
        driver.refresh()
        self.wait(lambda: self.server_settings("KJ7SET", 2, key)["quietHours"]["utcOffsetMinutes"] == 60, 10,
                  "the page did not move quiet hours to the browser's zone")
        self.assert_clean_console(driver)

    def test_read_markers_are_shared_between_devices_and_unread_counts_follow(self):
        first, second = self.browser(), self.browser()
        self.sign_in_ok(first, "KJ7RED", 1)
        self.sign_in_ok(second, "KJ7RED", 1)
        for number, text in enumerate(["one", "two"], start=1):
            self.stack.inject(message_line("KJ7ABC-1", "KJ7RED-1", f"read test {text}", str(number)))
        self.stack.inject(message_line("W5AGO", "KJ7RED-1", "another conversation", "9"))
        unread = lambda driver, peer: (  # noqa: E731
            (lambda link: link.find_element(By.CSS_SELECTOR, ".unread").text.split()[0]
             if link and link.find_elements(By.CSS_SELECTOR, ".unread") else "0")(self.conversation_link(driver, peer)))
        for driver in (first, second):
            self.wait(lambda: unread(driver, "KJ7ABC-1") == "2" and unread(driver, "W5AGO") == "1", 10, "no unread counts")
        self.conversation_link(first, "KJ7ABC-1").click()
        self.wait(lambda: unread(second, "KJ7ABC-1") == "0", 5, "the other device did not learn it was read")
        self.assertEqual(unread(second, "W5AGO"), "1")
        self.button(second, "Mark all read").click()
        self.wait(lambda: unread(first, "W5AGO") == "0", 5, "'mark all read' did not reach the other device")
        self.assert_clean_console(first)

    def test_subscriptions_tab_adds_shows_what_arrived_and_removes(self):
        driver = self.browser()
        key = self.owner(driver, "KJ7SUB", 4)
        self.open_view(driver, "subs", "Subscriptions")
        self.wait(lambda: driver.find_element(By.ID, "subs-form").is_displayed(), 5, "no form for the owner")
        self.assertEqual(self.field(driver, "Bulletin addressees (? and * wildcards)").get_attribute("value"), "BLN*")
        self.button(driver, "Add").click()
        self.wait(lambda: "Bulletins to BLN*" in driver.find_element(By.ID, "subs-list").text, 10,
                  f"not added: {driver.find_element(By.ID, 'subs-error').text!r}")
        self.assertEqual([s["kind"] for s in self.server_settings("KJ7SUB", 4, key)["subscriptions"]], ["bulletin"])
        line = message_line("WX1ABC", "BLN1WX", "Storm warning tonight")
        self.wait(lambda: self.stack.inject(line).get("delivered", 0) >= 1, 10, "the filter never took the bulletin")
        arrived = self.wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#catches .catch.bulletin"), 10, "nothing arrived")
        self.assertIn("Storm warning tonight", arrived[0].text)
        self.assertIn("WX1ABC → BLN1WX", arrived[0].text)
        self.assertIsNone(self.conversation_link(driver, "WX1ABC"), "a bulletin became a conversation")
        # A watch, with a bad value first.
        Select(self.field(driver, "Kind")).select_by_value("watch")
        self.field(driver, "Station to watch").send_keys("K1ABC")
        driver.find_element(By.ID, "sub-emergency").click()
        self.button(driver, "Add").click()
        self.wait(lambda: "at least one" in driver.find_element(By.ID, "subs-error").text, 5, "no error")
        self.field(driver, "Tell me when silent for (hours)").send_keys("2")
        self.button(driver, "Add").click()
        self.wait(lambda: "Watching K1ABC: silent for 2 h" in driver.find_element(By.ID, "subs-list").text, 10, "no watch")
        driver.find_element(By.CSS_SELECTOR, "#subs-list button[aria-label='Remove Bulletins to BLN*']").click()
        self.wait(lambda: "BLN*" not in driver.find_element(By.ID, "subs-list").text, 10, "not removed")
        self.assertEqual([s["kind"] for s in self.server_settings("KJ7SUB", 4, key)["subscriptions"]], ["watch"])
        self.assert_clean_console(driver)

    def test_german_throughout_and_the_switch_in_the_settings(self):
        driver = self.browser(lang="de-DE")
        self.open_page(driver)
        self.assertEqual(driver.execute_script("return document.documentElement.lang"), "de")
        self.assertEqual(driver.find_element(By.ID, "sign-in-title").text, "Anmelden")
        self.field(driver, "Rufzeichen").send_keys("KJ7DEU")
        Select(self.field(driver, "SSID")).select_by_value("1")
        self.field(driver, "Passcode").send_keys(str(passcode("KJ7DEU")))
        driver.find_element(By.ID, "remember").click()
        self.button(driver, "Anmelden").click()
        self.wait(lambda: driver.find_element(By.ID, "station").text == "Angemeldet als KJ7DEU-1", 10, "not signed in")
        self.wait(lambda: driver.find_element(By.ID, "claim-status").text == "Dieser Browser hat den Stationsschlüssel", 10, "")
        self.assertEqual(driver.title, "APRS-Nachrichten")
        self.stack.inject(message_line("DL1XYZ-10", "KJ7DEU-1", "Hallo aus Bayern", "1"))
        link = self.wait(lambda: self.conversation_link(driver, "DL1XYZ-10"), 10, "no message")
        self.assertIn("ungelesene Nachricht", link.text)
        self.assertRegex(link.find_element(By.TAG_NAME, "time").text, r"^\d\d:\d\d$")
        self.assertTrue(driver.find_element(By.ID, "connection").text.startswith(("Live", "Aktuell")))
        driver.find_element(By.LINK_TEXT, "Neue Nachricht").click()
        self.field(driver, "Nachricht").send_keys("x" * 68)
        self.assertEqual(driver.find_element(By.ID, "message-count").text, "68 von 67 Zeichen")
        self.assertEqual(driver.find_element(By.ID, "message-error").text,
                         "1 Zeichen zu viel: Eine APRS-Nachricht fasst höchstens 67.")
        self.open_view(driver, "settings", "Einstellungen")
        self.wait(lambda: "nicht stummgeschaltet" in driver.find_element(By.ID, "mute-state").text, 10, "no settings")
        self.assertEqual(driver.find_element(By.ID, "ack-device").find_element(By.XPATH, "following-sibling::label").text,
                         "Sobald eines meiner Geräte sie abgeholt hat")
        os.makedirs(SCREENSHOTS, exist_ok=True)
        for view, heading in [("settings", "Einstellungen"), ("subs", "Abonnements"), ("", None)]:
            if heading:
                self.open_view(driver, view, heading)
            else:
                driver.execute_script("location.hash = '#/'")
            driver.save_screenshot(os.path.join(SCREENSHOTS, f"german-{view or 'inbox'}-1280-light.png"))
            # Nothing English is left on the page (the peer's own words apart).
            english = driver.execute_script("""
              const words = /\\b(the|and|your|messages?|settings|sign|notifications?|with|this|to|of)\\b/i;
              return [...document.querySelectorAll('body *')]
                .filter((e) => e.offsetParent !== null && [...e.childNodes].some((n) => n.nodeType === 3 && words.test(n.textContent)))
                .map((e) => e.textContent.trim()).filter((text) => !text.includes('Hallo aus Bayern'));
            """)
            self.assertEqual(english, [], f"English words on the German page ({view or 'inbox'})")
        self.open_view(driver, "settings", "Einstellungen")
        Select(driver.find_element(By.ID, "language")).select_by_value("en")
        self.wait(lambda: driver.find_element(By.ID, "settings-title").text == "Settings", 5, "the switch did not work")
        self.assertEqual(driver.find_element(By.ID, "station").text, "Signed in as KJ7DEU-1")
        self.assertEqual(driver.execute_script("return document.documentElement.lang"), "en")
        driver.refresh()
        self.wait(lambda: driver.find_element(By.ID, "station").text == "Signed in as KJ7DEU-1", 10, "not kept")
        self.open_view(driver, "settings", "Settings")
        Select(driver.find_element(By.ID, "language")).select_by_value("")
        self.wait(lambda: driver.find_element(By.ID, "station").text == "Angemeldet als KJ7DEU-1", 5, "not automatic again")
        self.assert_clean_console(driver)

    def test_keyboard_only_session(self):
        """A whole session with keys alone: sign in, open a conversation, answer, change a setting, sign out."""
        driver = self.browser()
        self.open_page(driver)
        keys = lambda *sequence: ActionChains(driver).send_keys(*sequence).perform()  # noqa: E731
        active = lambda: driver.switch_to.active_element.get_attribute("id")  # noqa: E731
        keys(Keys.TAB)  # skip link
        keys(Keys.TAB, "kj7kbd", Keys.TAB, "3", Keys.TAB, str(passcode("KJ7KBD")), Keys.TAB, Keys.TAB, Keys.SPACE, Keys.ENTER)
        self.wait(lambda: driver.find_element(By.ID, "station").text == "Signed in as KJ7KBD-3", 10, "keys did not sign in")
        self.wait(lambda: driver.find_element(By.ID, "claim-status").text == "This browser holds the station key", 10, "")
        self.assertTrue(self.stack.wait_for_filter("KJ7KBD-3"))
        self.stack.inject(message_line("KJ7ABC-5", "KJ7KBD-3", "Can you hear me?", "4"))
        self.wait(lambda: self.conversation_link(driver, "KJ7ABC-5"), 10, "no message")

        def tab_to(predicate, limit=40, message="never reached"):
            for _ in range(limit):
                keys(Keys.TAB)
                if predicate(driver.switch_to.active_element):
                    return driver.switch_to.active_element
            self.fail(message)

        tab_to(lambda element: element.get_attribute("data-peer") == "KJ7ABC-5", message="the conversation is not reachable")
        keys(Keys.ENTER)
        self.wait(lambda: active() == "conversation-title", 5, "the conversation did not take the focus")
        tab_to(lambda element: element.get_attribute("id") == "message", message="the message field is not reachable")
        if not driver.find_element(By.ID, "send-fields").is_displayed():
            self.skipTest("not applicable: no /v1/send on this server")
        keys("Loud and clear", Keys.ENTER)
        self.wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#messages .message.sent"), 10,
                  f"Enter did not send: {driver.find_element(By.ID, 'send-status').text!r}")
        tab_to(lambda element: element.get_attribute("id") == "tab-settings", message="the settings tab is not reachable")
        keys(Keys.ENTER)
        self.wait(lambda: active() == "settings-title", 5, "the settings did not take the focus")
        self.wait(lambda: driver.find_element(By.ID, "settings-form").is_displayed(), 5, "no settings form")
        tab_to(lambda element: element.get_attribute("id") == "quiet-on", message="quiet hours are not reachable")
        keys(Keys.SPACE)
        tab_to(lambda element: element.get_attribute("id") == "settings-save", message="save is not reachable")
        keys(Keys.ENTER)
        self.wait(lambda: driver.find_element(By.ID, "settings-status").text == "Settings saved.", 10, "not saved by keys")
        for _ in range(80):
            keys(Keys.SHIFT, Keys.TAB)
            if active() == "sign-out":
                break
        self.assertEqual(active(), "sign-out", "sign out is not reachable backwards")
        keys(Keys.ENTER)
        self.wait(lambda: driver.find_element(By.ID, "sign-in-view").is_displayed(), 10, "keys did not sign out")
        self.assertEqual(active(), "callsign")

    def test_first_load_of_the_signed_in_page_is_light_and_first_party(self):
        driver = self.browser()
        driver.execute_cdp_cmd("Network.enable", {})
        self.sign_in_ok(driver, "KJ7WGT", 1, remember=True)
        self.stack.inject(message_line("KJ7ABC-1", "KJ7WGT-1", "weigh me", "1"))
        self.wait(lambda: self.conversation_link(driver, "KJ7ABC-1"), 10, "no message")
        driver.get_log("performance")
        # The first load of the signed-in page, as a new visit: nothing in the HTTP cache, no service worker.
        driver.execute_cdp_cmd("Network.clearBrowserCache", {})
        driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "navigator.serviceWorker.getRegistrations().then(rs => Promise.all(rs.map(r => r.unregister()))).then(done);")
        driver.refresh()
        self.wait(lambda: self.conversation_link(driver, "KJ7ABC-1"), 10, "not signed in after the reload")
        time.sleep(1.0)
        sizes, encodings, urls = {}, {}, {}
        for entry in driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            params = message.get("params", {})
            if message.get("method") == "Network.responseReceived":
                urls[params["requestId"]] = params["response"]["url"]
                headers = {k.lower(): v for k, v in params["response"]["headers"].items()}
                encodings[params["requestId"]] = headers.get("content-encoding", "")
            elif message.get("method") == "Network.loadingFinished":
                sizes[params["requestId"]] = params["encodedDataLength"]
        total = sum(sizes.values())
        files = {urls[r]: sizes[r] for r in sizes if r in urls}
        print(f"\n    first load of the signed-in page: {total / 1024:.1f} KB over the wire in {len(files)} requests",
              end=" ", flush=True)
        self.assertLessEqual(total, 100 * 1024, json.dumps(files, indent=1))
        for request, url in urls.items():
            if re.search(r"\.(mjs|css|html)$|/$", url) and sizes.get(request, 0) > 1500:
                self.assertEqual(encodings[request], "gzip", f"{url} was not compressed")
        self.assertTrue(all(url.startswith(self.stack.url + "/") or url.startswith("data:") for url in urls.values()),
                        f"outside assets: {sorted(set(urls.values()))}")

    def test_export_downloads_one_json_document(self):
        downloads = os.path.join(self.stack.directory, "downloads")
        os.makedirs(downloads, exist_ok=True)
        driver = self.browser()
        driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
        self.owner(driver, "KJ7EXP", 6)
        self.stack.inject(message_line("KJ7ABC-6", "KJ7EXP-6", "export me", "1"))
        self.wait(lambda: self.conversation_link(driver, "KJ7ABC-6"), 10, "no message")
        self.open_view(driver, "settings", "Settings")
        self.button(driver, "Download").click()
        status = self.wait(lambda: (lambda text: text if text.startswith(("Saved as", "No export")) else None)(
            driver.find_element(By.ID, "export-status").text), 20, "no outcome")
        self.assertTrue(status.startswith("Saved as aprs-KJ7EXP-6-"), status)
        name = status[len("Saved as "):-1]
        path = os.path.join(downloads, name)
        self.wait(lambda: os.path.exists(path), 10, "no file was downloaded")
        with open(path) as file:
            document = json.load(file)
        self.assertIn("export me", json.dumps(document))

    def test_forwarding_targets_are_listed_with_their_status(self):
        probe = self.browser()
        key = self.owner(probe, "KJ7FWD", 7)
        self.open_view(probe, "settings", "Settings")
        self.wait(lambda: probe.find_element(By.ID, "forward-box").is_displayed(), 5, "no forwarding screen")
        # Only the types this server takes: /v1/info's `forward` (no email: the test server has no SMTP server).
        offered = [option.get_attribute("value") for option in Select(self.field(probe, "Kind")).options
                   if option.is_enabled()]
        self.assertEqual(offered, self.info()["forward"])
        self.assertNotIn("email", offered)
        Select(self.field(probe, "Kind")).select_by_value("webhook")
        self.field(probe, "URL (https://…)").send_keys("https://hooks.example.org/aprs")
        self.field(probe, "Secret (16 characters or more)").send_keys("s3cret-s3cret-s3cret")
        self.button(probe, "Add target").click()
        self.wait(lambda: "https://hooks.example.org/aprs" in probe.find_element(By.ID, "forward-list").text, 10,
                  f"not added: {probe.find_element(By.ID, 'forward-error').text!r}")
        targets = self.server_settings("KJ7FWD", 7, key)["forward"]
        self.assertEqual([target["type"] for target in targets], ["webhook"])
        self.assertNotIn("s3cret-s3cret-s3cret", probe.find_element(By.ID, "forward-list").text)
        self.assertIn(targets[0]["status"], ("active", "unconfirmed", "disabled"))

    def test_the_audit_trail_shows_who_changed_what_from_where(self):
        driver = self.browser()
        key = self.owner(driver, "KJ7AUD", 8)
        self.open_view(driver, "settings", "Settings")
        self.wait(lambda: driver.find_element(By.ID, "audit-box").is_displayed(), 5, "no audit trail section")
        driver.find_element(By.CSS_SELECTOR, "[data-mute]").click()
        self.wait(lambda: self.server_settings("KJ7AUD", 8, key)["mutedUntil"] > 0, 10, "the mute was not saved")
        self.button(driver, "Show").click()
        status = self.wait(lambda: (lambda text: text if "recorded" in text else None)(
            driver.find_element(By.ID, "audit-status").text), 10, "no audit trail shown")
        lines = [item.text for item in driver.find_elements(By.CSS_SELECTOR, "#audit-list li")]
        self.assertEqual(status, f"{len(lines)} changes recorded.")
        self.assertTrue(lines[0].startswith(tuple("0123456789JFMASOND")), lines)
        self.assertIn("settings changed (mutedUntil) from 127.0.0.1", lines[0])
        self.assertIn("claimed", lines[-1])
        self.assertTrue(all("from 127.0.0.1" in line for line in lines), lines)

    # -- accessibility and looks: every view and state, light and dark, phone and desktop -------------------

    def look_at(self, driver, state: str, found: dict):
        """Runs axe-core on the page as it is now, in light and dark at 360 and 1280 px, keeps a screenshot of
        each, and adds the serious and critical violations to `found` (by state)."""
        os.makedirs(SCREENSHOTS, exist_ok=True)
        for scheme in ("light", "dark"):
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
                "features": [{"name": "prefers-color-scheme", "value": scheme}]})
            for width, height, scale in ((360, 740, 2), (1280, 800, 1)):
                driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
                    "width": width, "height": height, "deviceScaleFactor": scale, "mobile": width < 900})
                time.sleep(0.15)
                driver.save_screenshot(os.path.join(SCREENSHOTS, f"{state}-{width}-{scheme}.png"))
                self.assert_no_horizontal_scroll(driver)
                axe = Axe(driver)
                axe.inject()
                results = axe.run(options='{"resultTypes": ["violations"]}')
                bad = [
                    f"{violation['id']} ({violation['impact']}): {violation['help']} at "
                    + ", ".join(" ".join(node["target"]) for node in violation["nodes"][:3])
                    for violation in results["violations"] if violation["impact"] in ("serious", "critical")
                ]
                if bad:
                    found[f"{state} {width} {scheme}"] = bad
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})

    def test_reduced_motion_is_honoured(self):
        driver = self.browser()
        self.open_page(driver)
        duration = lambda: driver.execute_script(  # noqa: E731
            "return getComputedStyle(document.getElementById('sign-in-button')).transitionDuration")
        self.assertNotEqual(duration(), "0s", "no transition to turn off: the test proves nothing")
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
        self.wait(lambda: duration() == "0s", 5, "transitions stay on with prefers-reduced-motion: reduce")

    def test_every_view_and_state_passes_axe_in_light_and_dark_with_screenshots(self):
        if Axe is None:
            self.fail("axe-selenium-python is missing from the venv: run `make deps-test`")
        found: dict = {}
        states = []
        driver = self.browser()
        self.open_page(driver)
        self.look_at(driver, "sign-in", found)
        states.append("sign-in")
        self.sign_in(driver, "KJ7AXE", 2, code=(passcode("KJ7AXE") + 1) % 32768)
        self.wait(lambda: driver.find_element(By.ID, "sign-in-error").text, 10, "no error")
        self.look_at(driver, "sign-in-error", found)
        self.owner(driver, "KJ7AXE", 2)
        for line in [
            message_line("DL1XYZ-10", "KJ7AXE-2", "Guten Tag! QSL via bureau, 73", "1"),
            message_line("W5AGO", "KJ7AXE-2", "Net tonight at 8 on the 146.52 simplex", "7"),
            message_line("KJ7ABC-7", "KJ7AXE-2", "Are you on the summit yet?", "20"),
            message_line("KJ7ABC-7", "KJ7AXE-2", "See you at the trailhead, 73!", "22"),
        ]:
            self.stack.inject(line)
        self.wait(lambda: self.conversation_link(driver, "KJ7ABC-7"), 10, "no messages")
        self.look_at(driver, "inbox", found)
        self.conversation_link(driver, "KJ7ABC-7").click()
        self.wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#messages .message")) == 2, 10, "no conversation")
        if driver.find_element(By.ID, "send-fields").is_displayed():
            # A sent message in each state the page can be brought to here: delivered, rejected, pending.
            states = lambda: [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#messages .message.sent .state")]  # noqa: E731
            for text, answer in [("Almost there, 10 minutes", "ack"), ("Bring the spare battery", "rej"), ("On my way", None)]:
                self.field(driver, "Message").send_keys(text)
                self.button(driver, "Send").click()
                self.wait(lambda: len(states()) > 0 and states()[-1] == "pending", 10, "not sent")
                if answer:
                    number = self.wait(lambda: next((entry["line"].rsplit("{", 1)[1] for entry in self.stack.transmitted()
                                                     if f":{text}{{" in (entry.get("line") or "")), None), 15, "not transmitted")
                    self.stack.inject(message_line("KJ7ABC-7", "KJ7AXE-2", f"{answer}{number}"))
                    self.wait(lambda: states()[-1] == ("delivered" if answer == "ack" else "rejected"), 10, f"no {answer}")
            self.assertEqual(states(), ["delivered", "rejected", "pending"])
        self.look_at(driver, "conversation", found)
        driver.find_element(By.LINK_TEXT, "New message").click()
        self.field(driver, "To").send_keys("not a call")
        self.field(driver, "Message").send_keys("x" * 70 + "{")
        self.button(driver, "Send").click()
        self.wait(lambda: driver.find_element(By.ID, "to-error").text, 5, "no error")
        self.look_at(driver, "send-errors", found)
        self.open_view(driver, "subs", "Subscriptions")
        self.wait(lambda: driver.find_element(By.ID, "subs-form").is_displayed(), 10, "no subscriptions form")
        self.button(driver, "Add").click()
        self.wait(lambda: "BLN*" in driver.find_element(By.ID, "subs-list").text, 10, "not added")
        line = message_line("WX1ABC", "BLN1WX", "Storm warning tonight, stay off the ridge")
        self.wait(lambda: self.stack.inject(line).get("delivered", 0) >= 1, 10, "the filter never took the bulletin")
        self.wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#catches .catch"), 10, "nothing arrived")
        self.look_at(driver, "subscriptions", found)
        self.open_view(driver, "settings", "Settings")
        self.wait(lambda: driver.find_element(By.ID, "settings-form").is_displayed(), 10, "no settings form")
        self.look_at(driver, "settings", found)
        self.field(driver, "Drop every message from these calls").send_keys("bad/call")
        self.button(driver, "Save settings").click()
        self.button(driver, "Show the link").click()
        self.wait(lambda: driver.find_element(By.ID, "blocked-error").text, 5, "no error")
        self.look_at(driver, "settings-errors", found)
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                               {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        driver.execute_script("location.hash = '#/'")
        self.wait(lambda: driver.find_element(By.ID, "connection").text.startswith("Offline"), 15, "not offline")
        self.look_at(driver, "offline", found)
        # A second browser of the same station without its key: the locked screens.
        other = self.browser()
        self.sign_in_ok(other, "KJ7AXE", 2)
        self.open_view(other, "settings", "Settings")
        self.wait(lambda: other.find_element(By.ID, "settings-locked").is_displayed(), 10, "not locked")
        self.look_at(other, "settings-locked", found)
        self.open_view(other, "subs", "Subscriptions")
        self.look_at(other, "subscriptions-locked", found)
        print(f"\n    axe: 11 states × light/dark × 360/1280 px; screenshots in {SCREENSHOTS}", end=" ", flush=True)
        self.assertEqual(found, {}, "serious or critical accessibility violations:\n" + json.dumps(found, indent=1))

    def assert_no_horizontal_scroll(self, driver):
        widths = driver.execute_script(
            "const d = document.documentElement;"
            "const wide = [...document.querySelectorAll('body *')].filter(e => e.scrollWidth > e.clientWidth + 1"
            " && getComputedStyle(e).overflowX !== 'hidden' && e.clientWidth > 0).map(e => e.id || e.className);"
            "return {scroll: d.scrollWidth, client: d.clientWidth, wide};"
        )
        self.assertLessEqual(widths["scroll"], widths["client"], f"horizontal scroll: {widths}")
        self.assertEqual(widths["wide"], [], f"elements wider than their box: {widths}")


def main() -> int:
    # Names of tests given on the command line run alone (`test_browser.py test_keyboard_only_session`).
    names = sys.argv[1:]
    suite = (unittest.TestSuite(WebClientTests(name) for name in names) if names
             else unittest.defaultTestLoader.loadTestsFromTestCase(WebClientTests))
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    for test, reason in result.skipped:
        print(f"SKIPPED {test.id().rsplit('.', 1)[-1]}: {reason}")
    print(f"webclient: {passed} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
