"""Checks every answer the integration tests wrote down (Tests/IntegrationTests/AnswerLog.swift) against
docs/openapi.yaml: `python check_answers.py FOLDER` reads every `*.jsonl` file in FOLDER, prints how many answers of
which operations it checked and every problem (the same problem once, with how often it came), and exits 1 when there
was a problem or no answer at all (the log was not on), 0 otherwise. The rules: answers.py.
"""

import collections
import json
import pathlib
import sys

from answers import Checker, load


def main(argv):
    if len(argv) != 2:
        print("usage: check_answers.py FOLDER", file=sys.stderr)
        return 2
    checker = Checker(load())
    covered = collections.Counter()
    problems = collections.Counter()
    count = 0
    for file in sorted(pathlib.Path(argv[1]).glob("*.jsonl")):
        for line in file.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            answer = json.loads(line)
            count += 1
            covered[f"{answer['method']} {answer['path']} {answer['status']}"] += 1
            for problem in checker.problems(answer):
                problems[problem] += 1
    if count == 0:
        print(f"no answers were written down in {argv[1]}: was APRS_CLOUD_ANSWER_LOG set?", file=sys.stderr)
        return 1
    print(f"{count} answers checked against docs/openapi.yaml, {len(covered)} (method, path, status):")
    for key, times in sorted(covered.items()):
        print(f"  {key}: {times}")
    if problems:
        print(f"{len(problems)} problems:", file=sys.stderr)
        for problem, times in sorted(problems.items()):
            print(f"  {problem}  (×{times})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
