"""The offline judge: invariant to names, comments and layout; splits strategies; flags degenerates."""

from __future__ import annotations

import time

from setrl.judge import DEGENERATE, make_judge
from setrl.judge.ast_judge import AstJudge
from setrl.judge.calibration import load_calibration_set
from setrl.config import JudgeSpec
from setrl.problem import Problem

P = Problem(source="t", title="sum", prompt="def total(xs):\n    \"\"\"Sum xs.\"\"\"\n", entry_point="total",
            test_style="check", tests="")

LOOP = "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    return s\n"
LOOP_RENAMED = ("def total(numbers):  # add them up\n    acc = 10  # wrong start: still a loop attempt\n"
                "    for value in numbers:\n\n        acc = acc + value\n    return acc\n")
BUILTIN = "def total(xs):\n    return sum(xs)\n"
RECURSION = "def total(xs):\n    return xs[0] + total(xs[1:]) if xs else 0\n"
REDUCE = "from functools import reduce\n\ndef total(xs):\n    return reduce(lambda a, b: a + b, xs, 0)\n"
REDUCE_MODULE = "import functools\ndef total(xs):\n    return functools.reduce(lambda p, q: p + q, xs, 0)\n"
WHILE = "def total(xs):\n    i = s = 0\n    while i < len(xs):\n        s += xs[i]\n        i += 1\n    return s\n"


def ids(responses, problem=P):
    return AstJudge("ast").cluster(problem, responses).cluster_ids


def test_names_comments_literals_and_bugs_do_not_split():
    assert ids([LOOP, LOOP_RENAMED]) == [0, 0]
    assert ids([REDUCE, REDUCE_MODULE]) == [0, 0]


def test_strategies_split():
    got = ids([LOOP, BUILTIN, RECURSION, REDUCE, WHILE, LOOP_RENAMED])
    assert got == [0, 1, 2, 3, 4, 0]


def test_degenerate_responses():
    degenerate = ["", "I would add the numbers.", "def total(xs):\n    pass\n", "def total(xs):\n    ...",
                  "def total(xs):\n    for x in", "asdf", "```python\n# TODO\n```"]
    assert ids(degenerate + [BUILTIN]) == [DEGENERATE] * len(degenerate) + [0]
    assert AstJudge("ast", degenerate_id=7).cluster(P, [""]).cluster_ids == [7]


def test_completions_fences_and_prose_are_parsed():
    body_only = "    s = 0\n    for x in xs:\n        s += x\n    return s\n"  # continues the prompt's def
    fenced = "Here you go:\n```python\n" + LOOP + "```\nThis loops."
    prose_then_code = "Sure, a loop works.\n" + LOOP
    assert ids([LOOP, body_only, fenced, prose_then_code]) == [0, 0, 0, 0]


def test_deterministic_and_fast_on_calibration_set():
    groups = load_calibration_set("data/calibration/leetcode.jsonl")
    judge = make_judge(JudgeSpec(name="ast"))
    first = [judge.cluster(g.problem, g.responses).cluster_ids for g in groups]
    t0 = time.perf_counter()
    second = [judge.cluster(g.problem, g.responses).cluster_ids for g in groups]
    rate = sum(len(g.responses) for g in groups) / (time.perf_counter() - t0)
    assert first == second
    assert rate > 300  # loose on a shared 2-core machine; benchmarks/judge.py reports the real figure
