"""The check of real answers against docs/openapi.yaml (answers.py) catches what it must, on answers made up here:
each kind of problem once, and the well-formed answers of each kind pass. The real answers are the integration
tests' (check_answers.py, run by `make test` after them)."""

import base64
import json
import unittest

from answers import Checker, load


def answer(method, path, status, body=b"", content_type="application/json", **headers):
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    names = {"content-type": content_type} if body else {}
    names.update({name.replace("_", "-").lower(): value for name, value in headers.items()})
    return {"method": method, "path": path, "status": status, "headers": names,
            "body64": base64.b64encode(body).decode()}


class AnswerCheckTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.checker = Checker(load())

    def problems(self, *args, **kwargs):
        return self.checker.problems(answer(*args, **kwargs))

    def test_well_formed_answers_pass(self):
        sync = {"messages": [{"direction": "received", "type": "message", "peer": "KJ7ABC-7", "text": "Hi",
                              "timestamp": 5, "seqId": "1"}], "serverTime": 5, "avatars": {}}
        self.assertEqual(self.problems("POST", "/v1/sync", 200, sync), [])
        self.assertEqual(self.problems("POST", "/v1/sync", 400, {"error": "since must be a number"}), [])
        self.assertEqual(
            self.problems("POST", "/v1/sync", 429, {"error": "too many"}, retry_after="10"), [])
        self.assertEqual(self.problems("HEAD", "/health", 200), [])
        self.assertEqual(self.problems("POST", "/v1/nothing", 404, {"error": "not found"}), [])
        self.assertEqual(self.problems("DELETE", "/v1/sync", 405, {"error": "method not allowed"}), [])

    def test_a_missing_field_is_a_problem(self):
        found = self.problems("POST", "/v1/sync", 200, {"messages": [], "avatars": {}})
        self.assertEqual(len(found), 1, found)
        self.assertIn("serverTime", found[0])

    def test_a_field_of_the_wrong_type_is_a_problem(self):
        found = self.problems("POST", "/v1/sync", 200, {"messages": [], "serverTime": "5", "avatars": {}})
        self.assertTrue(found and "serverTime" in found[0], found)

    def test_an_undocumented_field_is_a_problem_where_the_schema_is_closed(self):
        found = self.problems("POST", "/v1/sync", 200, {"messages": [], "serverTime": 5, "avatars": {}, "x": 1})
        self.assertTrue(found, "SyncAnswer allows no other keys")

    def test_an_undocumented_status_is_a_problem(self):
        found = self.problems("POST", "/v1/sync", 418, {"error": "teapot"})
        self.assertEqual(len(found), 1)
        self.assertIn("418", found[0])

    def test_a_limit_without_retry_after_is_a_problem(self):
        found = self.problems("POST", "/v1/sync", 429, {"error": "too many"})
        self.assertEqual(len(found), 1)
        self.assertIn("Retry-After", found[0])

    def test_an_error_that_is_not_json_is_a_problem(self):
        found = self.problems("POST", "/v1/sync", 502, b"<html>Bad Gateway</html>", "text/html")
        self.assertEqual(len(found), 1)
        self.assertIn("text/html", found[0])
        found = self.problems("POST", "/v1/sync", 400, b"{nope", "application/json")
        self.assertIn("not JSON", found[0])

    def test_an_unknown_path_must_be_a_404_with_an_error(self):
        self.assertTrue(self.problems("POST", "/v1/nothing", 200, {"ok": True}))
        self.assertTrue(self.problems("POST", "/v1/nothing", 404, b"not found", "text/plain"))
        self.assertTrue(self.problems("GET", "/elsewhere", 200, b"x", "text/plain"))

    def test_a_head_answer_with_a_body_is_a_problem(self):
        self.assertTrue(self.problems("HEAD", "/health", 200, {"status": "ok"}))


if __name__ == "__main__":
    unittest.main()
