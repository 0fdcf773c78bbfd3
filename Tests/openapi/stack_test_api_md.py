"""docs/api.md's curl examples, run against the whole stack: every command works and answers what the doc says.

Every ```` ```console ```` block of docs/api.md is one of two kinds:

- **run**: its commands run in the order of the document against one stack (Tests/webclient/stack.py: nginx,
  the responder and the listener through `aprs-cloud up`, logged in with a verified login to the fake
  APRS-IS), each `curl` line through bash as written, with `http://127.0.0.1:8080` (`make run`'s address)
  replaced by the stack's. Shell variables carry over from block to block, as in one terminal.
- **not run**: the line just above its fence is `<!-- not run by tests: <reason> -->`. The test fails for a
  block that has no command to run, or that it cannot run, without that marker, and for a marker with no
  reason.

Inside a block that runs:

- A command is a line that is not a `#` comment, with its continuation lines (a trailing `\\` or a quote
  still open). Every command must be a `curl` call or an assignment.
- `NAME=…` (a value elided with `…`) sets NAME to the `stationKey` of the last answer that carried one: the
  key the reader is told to keep.
- The answer: the `# ` lines right after a command, from one that starts with `{` to the line that closes
  it, are the answer the doc shows (text after the closing brace, such as `(the key once)`, is a remark).
  A command without one must answer a JSON object without `error`.

The matching rule between the doc's answer (JSON written with elisions) and the server's:

- An object matches an object with exactly the same keys, each value matching; a bare `…` among its members
  (`{…,"forward":[…]}`) allows any other keys besides those listed.
- An array matches an array whose first elements match the ones listed; without a `…` element the lengths
  must be equal, with one (`[{…},…]`) the array may be longer. The elements after a `…` are not compared.
- `…` as a value, or a remark between two `…` (`…64 hex…`, `[…every stored entry…]`), matches any value.
- A string that contains `…` matches any string (`"q3P…43 characters…"`, `"…c0de"`).
- Any other value (a number, a string, `true`, `false`, `null`) matches only itself: an example that shows a
  concrete value must be what the server answers.
"""

import importlib.util
import json
import os
import pathlib
import re
import subprocess
import time
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "api.md"
MAKE_RUN = "http://127.0.0.1:8080"
MARKER = re.compile(r"^\s*<!--\s*not run by tests:\s*(?P<reason>\S.*?)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)```console\s*$")
ASSIGNMENT = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>\S*)")
ELLIPSIS = "…"

# The whole document's run.
TIMEOUT = 120


class Elided:
    """A place where the doc elides something with `…`."""

    def __repr__(self):
        return ELLIPSIS


ELIDED = Elided()


class ElidedString:
    """A string the doc shows with `…` in it: any string."""

    def __repr__(self):
        return f'"{ELLIPSIS}"'


ELIDED_STRING = ElidedString()


class ElidedJSONParser:
    """JSON as the doc writes it: `…` stands for any value, any other members of an object, or more elements."""

    def __init__(self, text: str):
        self.text = text
        self.position = 0

    def fail(self, message: str):
        raise ValueError(f"{message} at {self.position} in {self.text!r}")

    def skip_space(self):
        while self.position < len(self.text) and self.text[self.position] in " \t\r\n":
            self.position += 1

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.position] if self.position < len(self.text) else ""

    def value(self):
        character = self.peek()
        if character == "{":
            return self.object()
        if character == "[":
            return self.array()
        if character == '"':
            return self.string()
        if character == ELLIPSIS:
            return self.elision()
        match = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null").match(self.text, self.position)
        if not match:
            self.fail("no value")
        self.position = match.end()
        return json.loads(match.group(0))

    def elision(self):
        """`…`, or `…a remark…`: text between two ellipses that holds no quote, bracket or brace."""
        self.position += 1
        for index in range(self.position, len(self.text)):
            character = self.text[index]
            if character == ELLIPSIS:
                self.position = index + 1
                break
            if character in '"[]{}':
                break
        return ELIDED

    def string(self):
        match = re.compile(r'"(?:[^"\\]|\\.)*"').match(self.text, self.position)
        if not match:
            self.fail("an unclosed string")
        self.position = match.end()
        value = json.loads(match.group(0))
        return ELIDED_STRING if ELLIPSIS in value else value

    def object(self):
        self.position += 1
        members, open_ended = {}, False
        if self.peek() == "}":
            self.position += 1
            return members, open_ended
        while True:
            if self.peek() == ELLIPSIS:
                self.elision()
                open_ended = True
            else:
                if self.peek() != '"':
                    self.fail("no member name")
                key = json.loads(re.compile(r'"(?:[^"\\]|\\.)*"').match(self.text, self.position).group(0))
                self.string()
                if self.peek() != ":":
                    self.fail("no colon")
                self.position += 1
                members[key] = self.value()
            character = self.peek()
            self.position += 1
            if character == "}":
                return members, open_ended
            if character != ",":
                self.fail("no comma or closing brace")

    def array(self):
        self.position += 1
        elements = []
        if self.peek() == "]":
            self.position += 1
            return elements
        while True:
            elements.append(self.value())
            character = self.peek()
            self.position += 1
            if character == "]":
                return elements
            if character != ",":
                self.fail("no comma or closing bracket")


def parse_doc_answer(text: str):
    """The doc's answer, parsed; the rest of the text (a remark) is returned beside it."""
    parser = ElidedJSONParser(text)
    value = parser.value()
    return value, text[parser.position:].strip()


def mismatches(doc, actual, where: str = "$") -> list[str]:
    """Where `actual` (the server's JSON) does not match `doc` (the parsed answer the doc shows)."""
    if doc is ELIDED:
        return []
    if doc is ELIDED_STRING:
        if isinstance(actual, str):
            return []
        return [f"{where}: the doc shows a string, the server answered {json.dumps(actual)}"]
    if isinstance(doc, tuple):
        members, open_ended = doc
        if not isinstance(actual, dict):
            return [f"{where}: the doc shows an object, the server answered {json.dumps(actual)}"]
        problems = []
        missing = [key for key in members if key not in actual]
        extra = [key for key in actual if key not in members]
        if missing:
            problems.append(f"{where}: the server's answer lacks {missing}")
        if extra and not open_ended:
            problems.append(f"{where}: the server's answer has keys the doc does not show: {extra}")
        for key, value in members.items():
            if key in actual:
                problems += mismatches(value, actual[key], f"{where}.{key}")
        return problems
    if isinstance(doc, list):
        if not isinstance(actual, list):
            return [f"{where}: the doc shows an array, the server answered {json.dumps(actual)}"]
        listed = doc[: doc.index(ELIDED)] if ELIDED in doc else doc
        if ELIDED not in doc and len(actual) != len(doc):
            return [f"{where}: the doc shows {len(doc)} elements, the server answered {json.dumps(actual)}"]
        if len(actual) < len(listed):
            return [f"{where}: the doc shows at least {len(listed)} elements, the server answered {json.dumps(actual)}"]
        problems = []
        for index, value in enumerate(listed):
            problems += mismatches(value, actual[index], f"{where}[{index}]")
        return problems
    if type(doc) is not type(actual) or doc != actual:
        return [f"{where}: the doc shows {json.dumps(doc)}, the server answered {json.dumps(actual)}"]
    return []


class Command:
    def __init__(self, text: str, line: int):
        self.text = text
        self.line = line
        self.answer_text: str | None = None
        # The index of the command's last line in its block.
        self.end = 0


class Block:
    def __init__(self, line: int, lines: list[str], marker: str | None):
        self.line = line
        self.lines = lines
        self.marker = marker

    def commands(self) -> list[Command]:
        """The block's commands, each with the answer text shown after it."""
        commands: list[Command] = []
        index = 0
        while index < len(self.lines):
            line = self.lines[index]
            stripped = line.strip()
            if not stripped:
                index += 1
                continue
            if stripped.startswith("#"):
                body = stripped[1:].strip()
                last = commands[-1] if commands else None
                if last and last.answer_text is None and body.startswith("{") and self.follows(index, last):
                    text, index = self.answer(index)
                    commands[-1].answer_text = text
                    continue
                index += 1
                continue
            start = index
            text = line
            while self.continues(text) and index + 1 < len(self.lines):
                index += 1
                text += "\n" + self.lines[index]
            commands.append(Command(text, self.line + 1 + start))
            commands[-1].end = index
            index += 1
        return commands

    def follows(self, index: int, command: Command) -> bool:
        """Whether the comment at `index` comes right after `command` (only blank lines between)."""
        return all(not line.strip() for line in self.lines[command.end + 1 : index])

    def answer(self, index: int) -> tuple[str, int]:
        """The answer's text from the comment at `index` to the line that closes its outermost brace."""
        text = ""
        while index < len(self.lines) and self.lines[index].strip().startswith("#"):
            text += self.lines[index].strip()[1:].strip() + "\n"
            index += 1
            if balanced(text):
                break
        return text, index

    @staticmethod
    def continues(text: str) -> bool:
        """A command goes on past this line: it ends with `\\` or a single quote is still open."""
        if text.rstrip().endswith("\\"):
            return True
        quotes = 0
        double = False
        for character in text:
            if character == '"' and quotes % 2 == 0:
                double = not double
            elif character == "'" and not double:
                quotes += 1
        return quotes % 2 == 1


def balanced(text: str) -> bool:
    """Whether the braces and brackets opened in `text` (outside strings) are all closed."""
    depth, inside, escaped = 0, False, False
    for character in text:
        if inside:
            if escaped:
                escaped = False
            elif character == "\\":
                escaped = True
            elif character == '"':
                inside = False
        elif character == '"':
            inside = True
        elif character in "{[":
            depth += 1
        elif character in "}]":
            depth -= 1
    return depth <= 0


def blocks(document: str) -> list[Block]:
    lines = document.split("\n")
    found = []
    index = 0
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        indent = len(fence.group("indent"))
        start = index
        body = []
        index += 1
        while index < len(lines) and lines[index].strip() != "```":
            body.append(lines[index][indent:] if lines[index][:indent].strip() == "" else lines[index])
            index += 1
        marker = MARKER.match(lines[start - 1]) if start > 0 else None
        found.append(Block(start + 1, body, marker.group("reason") if marker else None))
        index += 1
    return found


def load_stack_module():
    spec = importlib.util.spec_from_file_location("stack", ROOT / "Tests" / "webclient" / "stack.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ParserTests(unittest.TestCase):
    """The matching rule itself, on answers written as the doc writes them."""

    def check(self, doc: str, actual) -> list[str]:
        value, _ = parse_doc_answer(doc)
        return mismatches(value, actual)

    def test_the_rule(self):
        self.assertEqual(self.check('{"a":1,"b":"x…"}', {"a": 1, "b": "anything"}), [])
        self.assertTrue(self.check('{"a":1}', {"a": 2}))
        self.assertTrue(self.check('{"a":1}', {"a": 1, "b": 2}))
        self.assertEqual(self.check('{…,"a":1}', {"a": 1, "b": 2}), [])
        self.assertTrue(self.check('{"a":1,"b":2}', {"a": 1}))
        self.assertEqual(self.check('{"a":…,"s":{…the rest, all of it…}}', {"a": [1], "s": {"x": 1}}), [])
        self.assertEqual(self.check('{"e":[…every entry, as sync shows it…]}', {"e": []}), [])
        self.assertTrue(self.check('{…,"a":"x…"}', {"a": 1}))
        self.assertEqual(self.check('{"e":[{"k":1},…]}', {"e": [{"k": 1}, {"k": 2}]}), [])
        self.assertTrue(self.check('{"e":[{"k":1}]}', {"e": [{"k": 1}, {"k": 2}]}))
        self.assertTrue(self.check('{"e":[]}', {"e": [1]}))
        self.assertTrue(self.check('{"a":1}', {"a": 1.0}))
        self.assertTrue(self.check('{"a":true}', {"a": 1}))
        value, remark = parse_doc_answer('{"a":1}   (a remark)\n')
        self.assertEqual(remark, "(a remark)")


class BlockTests(unittest.TestCase):
    """How a block is read: its marker, its commands and the answers shown after them."""

    SAMPLE = "\n".join([
        "Text.",
        "",
        "```console",
        "curl -s http://127.0.0.1:8080/v1/claim -H 'a: b' \\",
        "  -d '{\"callsign\":\"N0CALL\",",
        "  \"ssid\":7}'   # a remark",
        "# {\"stationKey\":\"…\",",
        "#  \"claim\":\"proven\"}   (the key once)",
        "KEY=…   # keep it",
        "curl -s http://127.0.0.1:8080/health",
        "# (a remark, not an answer)",
        "```",
        "",
        "  <!-- not run by tests: an answer shape only -->",
        "  ```console",
        "  # {\"a\":1}",
        "  ```",
        "",
        "```console",
        "# {\"b\":2}",
        "```",
    ])

    def test_blocks(self):
        found = blocks(self.SAMPLE)
        self.assertEqual([block.line for block in found], [3, 15, 19])
        self.assertEqual([block.marker for block in found], [None, "an answer shape only", None])
        commands = found[0].commands()
        self.assertEqual(len(commands), 3)
        self.assertTrue(commands[0].text.endswith("\"ssid\":7}'   # a remark"), commands[0].text)
        self.assertEqual(commands[0].line, 4)
        value, remark = parse_doc_answer(commands[0].answer_text)
        self.assertEqual(mismatches(value, {"stationKey": "k", "claim": "proven"}), [])
        self.assertEqual(remark, "(the key once)")
        self.assertEqual(commands[1].text, "KEY=…   # keep it")
        self.assertIsNone(commands[2].answer_text)
        # A block without a command and without a marker: the document test refuses it.
        self.assertEqual(found[2].commands(), [])


class APIDocumentTests(unittest.TestCase):
    def test_every_console_block(self):
        document = DOC.read_text(encoding="utf-8")
        found = blocks(document)
        self.assertTrue(found, "docs/api.md has no console block")
        runnable = []
        for block in found:
            commands = block.commands()
            if block.marker is not None:
                continue
            self.assertTrue(
                commands,
                f"docs/api.md:{block.line}: a console block without a command needs `<!-- not run by tests: "
                "reason -->` above it",
            )
            for command in commands:
                first = command.text.strip().split()[0]
                self.assertTrue(
                    first == "curl" or ASSIGNMENT.match(command.text.strip()),
                    f"docs/api.md:{command.line}: not a curl call or an assignment: {command.text!r}",
                )
            runnable.append((block, commands))

        # The examples stay within the shipped limits: the stack as the browser tests start it.
        stack = load_stack_module().Stack()
        started = time.monotonic()
        variables: dict[str, str] = {}
        last_key: str | None = None
        problems: list[str] = []
        try:
            for block, commands in runnable:
                for command in commands:
                    text = command.text.strip()
                    assignment = ASSIGNMENT.match(text)
                    if assignment and text.split()[0] != "curl":
                        self.assertIn(ELLIPSIS, assignment.group("value"), f"docs/api.md:{command.line}")
                        self.assertIsNotNone(last_key, f"docs/api.md:{command.line}: no stationKey answered before")
                        variables[assignment.group("name")] = last_key
                        continue
                    script = text.replace(MAKE_RUN, stack.url)
                    remaining = TIMEOUT - (time.monotonic() - started)
                    self.assertGreater(remaining, 0, "docs/api.md's examples took too long")
                    result = subprocess.run(
                        ["bash", "-c", script], capture_output=True, text=True, timeout=remaining,
                        env=dict(os.environ, **variables),
                    )
                    where = f"docs/api.md:{command.line}"
                    if result.returncode != 0:
                        problems.append(f"{where}: exit {result.returncode}: {result.stderr.strip()}")
                        continue
                    try:
                        actual = json.loads(result.stdout)
                    except ValueError:
                        problems.append(f"{where}: not JSON: {result.stdout[:300]!r}")
                        continue
                    if isinstance(actual, dict) and isinstance(actual.get("stationKey"), str):
                        last_key = actual["stationKey"]
                    if command.answer_text is None:
                        if not isinstance(actual, dict) or actual.get("error") is not None:
                            problems.append(f"{where}: answered {result.stdout.strip()[:300]}")
                        continue
                    try:
                        expected, _ = parse_doc_answer(command.answer_text)
                    except ValueError as error:
                        problems.append(f"{where}: the doc's answer does not parse: {error}")
                        continue
                    for problem in mismatches(expected, actual):
                        problems.append(f"{where}: {problem}\n    answered: {result.stdout.strip()[:600]}")
        finally:
            stack.stop()
        self.assertEqual(problems, [], "\n" + "\n".join(problems))


if __name__ == "__main__":
    unittest.main()
