"""docs/openapi.yaml is OpenAPI 3.1 (openapi-spec-validator), says what it means, and its examples fit their schemas.

Run by `make test` (`python -m unittest discover -s Tests/openapi`). Which routes the file names, against the ones the
router serves, is Tests/APITests/OpenAPIRoutesTests.swift.
"""

import pathlib
import unittest

import yaml
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SPEC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"
METHODS = ("get", "head", "post", "put", "delete", "patch", "options", "trace")
# The document's own URI, so that `#/components/...` references resolve against it.
BASE = "urn:aprs-cloud:openapi"


def load():
    with SPEC.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def resolve(document, node):
    """`node`, or what its `$ref` (inside the document) points at."""
    while isinstance(node, dict) and "$ref" in node:
        pointer = node["$ref"]
        assert pointer.startswith("#/"), pointer
        node = document
        for part in pointer[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def operations(document):
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def media_examples(media):
    """Every example of a media type object: `example` and each of `examples`."""
    if "example" in media:
        yield "example", media["example"]
    for name, example in media.get("examples", {}).items():
        yield name, example["value"]


class OpenAPIDocumentTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.document = load()

    def check(self, schema, instance):
        """The errors of `instance` against `schema` (a schema of the document, references and all)."""
        holder = dict(self.document)
        holder["$defs"] = {"__check": schema}
        holder["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        registry = Registry().with_resource(BASE, Resource(contents=holder, specification=DRAFT202012))
        validator = Draft202012Validator({"$ref": BASE + "#/$defs/__check"}, registry=registry)
        return sorted(error.message for error in validator.iter_errors(instance))

    def test_is_openapi_3_1(self):
        self.assertTrue(str(self.document["openapi"]).startswith("3.1."))
        validate(self.document)

    def test_no_yaml_slip_turned_text_into_keys(self):
        # A comma inside an unquoted flow mapping (`{description: a, b}`) silently becomes a key `b` with value null,
        # and `off`, `no`, `yes` become booleans: neither is caught by the OpenAPI schema, which allows extra keys.
        found = []

        def walk(node, where):
            if isinstance(node, dict):
                for key, value in node.items():
                    if not isinstance(key, str):
                        found.append(f"{where}: key {key!r} is not a string")
                    elif " " in key and value is None:
                        found.append(f"{where}: {key!r}")
                    walk(value, f"{where}/{key}")
            elif isinstance(node, list):
                for index, value in enumerate(node):
                    walk(value, f"{where}/{index}")

        walk(self.document, "")
        self.assertEqual(found, [])

    def test_every_operation_answers_errors_with_the_shared_error_schema(self):
        error = self.document["components"]["schemas"]["Error"]
        self.assertEqual(error["required"], ["error"])
        for path, method, operation in operations(self.document):
            with self.subTest(operation=f"{method.upper()} {path}"):
                codes = set(operation["responses"])
                self.assertTrue(any(code.startswith("2") for code in codes), "no success answer")
                if method == "head":
                    continue
                # Every answer of the responder or of nginx may be one of these.
                self.assertLessEqual({"500", "502", "503", "504"}, codes)
                for code, response in operation["responses"].items():
                    if not code.startswith(("4", "5")):
                        continue
                    schema = resolve(self.document, response)["content"]["application/json"]["schema"]
                    refs = [schema.get("$ref")] + [part.get("$ref") for part in schema.get("anyOf", [])]
                    self.assertIn("#/components/schemas/Error", refs, f"{code} does not answer an Error")

    def test_identity_errors_on_every_station_request(self):
        for path, method, operation in operations(self.document):
            if method != "post" or path == "/v1/info":
                continue
            with self.subTest(path=path):
                self.assertLessEqual({"400", "401", "403", "413", "429"}, set(operation["responses"]))

    def test_limited_answers_say_when_to_retry(self):
        responses = self.document["components"]["responses"]
        for name in ("TooManyRequests", "Unavailable"):
            header = resolve(self.document, responses[name]["headers"]["Retry-After"])
            self.assertTrue(header["required"])
            self.assertEqual(header["schema"]["minimum"], 1)

    def test_examples_fit_their_schemas(self):
        checked = 0
        for path, method, operation in operations(self.document):
            bodies = []
            if "requestBody" in operation:
                bodies.append(("request", resolve(self.document, operation["requestBody"])))
            for code, response in operation["responses"].items():
                bodies.append((code, resolve(self.document, response)))
            for where, body in bodies:
                for media in body.get("content", {}).values():
                    for name, example in media_examples(media):
                        with self.subTest(operation=f"{method.upper()} {path}", where=where, example=name):
                            self.assertEqual(self.check(media["schema"], example), [])
                            checked += 1
        self.assertGreater(checked, 30)

    def test_schemas_refuse_what_the_server_refuses(self):
        # A few of the limits the code enforces (Sources/API), as the schemas must say them.
        schemas = {name: {"$ref": f"#/components/schemas/{name}"} for name in self.document["components"]["schemas"]}
        refused = [
            ("SyncRequest", {"callsign": "N0CALL", "ssid": 16, "auth": "13023"}),
            ("SyncRequest", {"callsign": "N0CALL", "auth": "13023", "wait": 301}),
            ("SyncRequest", {"callsign": "N0CALL", "auth": "13023", "want": ["x"] * 17}),
            ("SyncRequest", {"callsign": "N0CALLABCD", "auth": "13023"}),
            ("AvatarsRequest", {"callsign": "N0CALL", "auth": "13023", "stations": ["W5AGO"] * 51}),
            ("SendRequest", {"callsign": "N0CALL", "to": "KJ7ABC", "text": "hi", "cancel": "a1"}),
            ("SendRequest", {"callsign": "N0CALL", "to": "KJ7ABC", "text": "hi", "clientId": "x" * 65}),
            ("SendRequest", {"callsign": "N0CALL", "to": "KJ7ABC", "text": "x" * 68}),
            ("SendRequest", {"callsign": "N0CALL", "to": "KJ7ABC", "text": "a {1"}),
            ("SendRequest", {"callsign": "N0CALL", "to": "KJ7ABC", "text": "   "}),
            ("SettingsRequest", {"callsign": "N0CALL", "blocked": ["KJ7ABC"] * 101}),
            ("SettingsRequest", {"callsign": "N0CALL", "quietHours": {"start": 1440, "end": 0, "utcOffsetMinutes": 0}}),
            ("SettingsRequest", {"callsign": "N0CALL", "ackPolicy": "sometimes"}),
            ("SettingsRequest", {"callsign": "N0CALL", "retention": {"mode": "ring", "max": 5}}),
            ("SettingsRequest", {"callsign": "N0CALL", "subscriptions": [{"kind": "nws", "zones": []}]}),
            ("SettingsRequest", {"callsign": "N0CALL", "forward": [{"type": "ntfy"}] * 6}),
            ("ReadRequest", {"callsign": "N0CALL", "peer": "*", "upTo": -1}),
            ("Message", {"direction": "received", "type": "message", "peer": "K1ABC", "text": "hi",
                         "timestamp": 1, "seqId": 42}),
            ("Error", {}),
        ]
        for name, instance in refused:
            with self.subTest(schema=name, instance=instance):
                self.assertNotEqual(self.check(schemas[name], instance), [])
        accepted = [
            ("SyncRequest", {"callsign": "n0call-7", "auth": 13023, "since": 0, "wait": 300, "want": ["inbox"]}),
            ("SendRequest", {"callsign": "N0CALL", "ssid": 7, "cancel": "a1"}),
            ("SendRequest", {"callsign": "N0CALL", "to": "KJ7ABC-7", "text": "x" * 67 + "   "}),
            ("SettingsRequest", {"callsign": "N0CALL", "quietHours": None, "ssids": [0, 7, 9],
                                 "retention": {"mode": "untilPulled", "max": 500}}),
        ]
        for name, instance in accepted:
            with self.subTest(schema=name, instance=instance):
                self.assertEqual(self.check(schemas[name], instance), [])


if __name__ == "__main__":
    unittest.main()
