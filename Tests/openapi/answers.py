"""Real answers of the server checked against docs/openapi.yaml, with jsonschema (an implementation independent of
the server's).

An answer is a dict as the integration tests write it down (Tests/IntegrationTests/AnswerLog.swift): `method`,
`path`, `status`, `headers` (lower-case names) and `body64` (the body's bytes, base64). `problems(document,
answer)` lists what in one answer the document does not allow:

- the path and method must be an operation of the document; an unknown path under `/v1/` must be a 404 with an
  `Error` body (a client learns an endpoint is missing that way, docs/protocol.md "Errors");
- the status must be one of the operation's answers (exactly, or its `4XX`/`5XX` range, or `default`);
- every header the answer marks `required` must be there (`Retry-After` of a 429 or 503);
- a body must come with a media type the answer lists (none when the answer lists none; `HEAD` answers have none);
  a JSON body must parse and fit the answer's schema.

`python check_answers.py FOLDER` runs this over every `*.jsonl` file in FOLDER (see check_answers.py).
"""

import base64
import json
import pathlib
import re

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SPEC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"
# The document's own URI, so that `#/components/...` references resolve against it.
BASE = "urn:aprs-cloud:openapi"


def load(path=SPEC):
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


class Checker:
    """The document, ready to check answers against: its operations by path pattern and a validator per schema."""

    def __init__(self, document):
        self.document = document
        self.patterns = []
        for path in document["paths"]:
            # `{name}` in a path is one segment.
            pattern = "^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path)) + "$"
            self.patterns.append((re.compile(pattern), path))
        self.validators = {}

    def follow(self, node):
        """`node`, or what its `$ref` (inside the document) points at, followed until it is no reference."""
        while isinstance(node, dict) and "$ref" in node:
            pointer = node["$ref"]
            if not pointer.startswith("#/"):
                raise ValueError(f"a reference outside the document: {pointer}")
            node = self.document
            for part in pointer[2:].split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def validator(self, schema):
        """A validator of `schema`, whose references (`#/components/...`) are the document's."""
        key = json.dumps(schema, sort_keys=True)
        if key not in self.validators:
            contents = {**self.document, "$defs": {"__check": schema},
                        "$schema": "https://json-schema.org/draft/2020-12/schema"}
            registry = Registry().with_resource(BASE, Resource(contents=contents, specification=DRAFT202012))
            self.validators[key] = Draft202012Validator({"$ref": BASE + "#/$defs/__check"}, registry=registry)
        return self.validators[key]

    def operation(self, path, method):
        """(the document's path, the operation) for a request, or (None, None)."""
        for pattern, name in self.patterns:
            if pattern.match(path):
                return name, self.document["paths"][name].get(method.lower())
        return None, None

    def answer_for(self, operation, status):
        """The operation's answer object for `status`, or None when the status is not one of them."""
        responses = operation["responses"]
        for key in (str(status), f"{status // 100}XX", "default"):
            if key in responses:
                return self.follow(responses[key])
        return None

    def problems(self, answer):
        method, path, status = answer["method"].upper(), answer["path"], int(answer["status"])
        headers = {name.lower(): value for name, value in answer.get("headers", {}).items()}
        body = base64.b64decode(answer.get("body64", ""))
        where = f"{method} {path} {status}"
        name, operation = self.operation(path, method)
        if name is None:
            if not path.startswith("/v1/"):
                return [f"{where}: a path the document does not name"]
            if status != 404:
                return [f"{where}: an unknown /v1 path answered {status}, not 404"]
            schema = {"$ref": "#/components/schemas/Error"}
            return self.body_problems(where, schema, headers, body, "application/json")
        if operation is None:
            if status == 405:
                return []
            return [f"{where}: {method} is not an operation of {name} and was not refused with 405"]
        response = self.answer_for(operation, status)
        if response is None:
            return [f"{where}: status {status} is not one of the answers {sorted(operation['responses'])}"]
        found = []
        for header, spec in response.get("headers", {}).items():
            spec = self.follow(spec)
            if spec.get("required") and header.lower() not in headers:
                found.append(f"{where}: the required header {header} is missing")
        content = response.get("content", {})
        if method == "HEAD" or not body:
            if body and method == "HEAD":
                found.append(f"{where}: a HEAD answer with a body")
            return found
        media = headers.get("content-type", "").split(";")[0].strip().lower()
        if not content:
            return found + [f"{where}: a body ({media or 'no content type'}) where the answer has none"]
        if media not in content:
            return found + [f"{where}: content type {media!r}, not one of {sorted(content)}"]
        schema = content[media].get("schema")
        if schema is None:
            return found
        return found + self.body_problems(where, schema, headers, body, media)

    def body_problems(self, where, schema, headers, body, media):
        if media != "application/json" and not media.endswith("+json"):
            return []
        try:
            instance = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as error:
            return [f"{where}: the body is not JSON ({error}): {body[:120]!r}"]
        return [
            f"{where}: {'/'.join(str(part) for part in error.absolute_path) or '(body)'}: {error.message}"
            for error in self.validator(schema).iter_errors(instance)
        ]
