"""Each test style end to end, the plain-data codec, and job validation."""

from __future__ import annotations

import pytest

from setrl.problem import Problem
from setrl.sandbox import Job, job_from_dict, job_from_problem
from setrl.sandbox import wire
from setrl.sandbox.jobs import outputs_match
from tests.sandbox.conftest import check_job

LISTNODE = """
class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next

def list_node(values):
    head = None
    for v in reversed(values):
        head = ListNode(v, head)
    return head

def to_list(node):
    out = []
    while node:
        out.append(node.val)
        node = node.next
    return out
"""


def test_every_style_passes_and_fails(sandbox):
    jobs = [
        check_job("check-ok", "def f(x):\n    return x + 1\n"),
        check_job("check-wrong", "def f(x):\n    return x\n"),
        check_job("check-kwargs", "def f(x, y=0):\n    return x + y\n",
                  "def check(c):\n    assert c(1, y=2) == 3\n    assert c(x=1) == 1\n"),
        Job("stdin-ok", "a, b = map(int, input().split())\nprint(a + b)", "stdin",
            [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5", "output": "10"}]),
        Job("stdin-wrong", "print(0)", "stdin", [{"input": "1 2\n", "output": "3\n"}]),
        Job("stdin-crash", "raise ValueError('boom')", "stdin", [{"input": "", "output": ""}]),
        Job("func-ok", "class Solution:\n    def add(self, a, b):\n        return (a + b, [a])\n", "functional",
            [{"input": "1\n2", "output": "[3, [1]]"}], "add"),
        Job("func-plain-fn", "def add(a, b):\n    return a + b\n", "functional", [{"input": "1\n2", "output": "3"}], "add"),
        Job("func-wrong", "def add(a, b):\n    return a - b\n", "functional", [{"input": "1\n2", "output": "3"}], "add"),
    ]
    got = {v.id: v for v in sandbox.run(jobs)}
    assert [v.id for v in sandbox.run(jobs)] == [j.id for j in jobs]  # order preserved
    for name in ("check-ok", "check-kwargs", "stdin-ok", "func-ok", "func-plain-fn"):
        assert got[name].passed, got[name]
    assert got["check-wrong"].status == "failed"
    assert got["stdin-wrong"].status == "failed" and "wrong answer" in got["stdin-wrong"].reason
    assert got["stdin-crash"].status == "error" and "ValueError" in got["stdin-crash"].reason
    assert got["func-wrong"].status == "failed"


def test_prelude_classes_in_place_updates_and_expected_exceptions(sandbox):
    reverse = ("def f(head):\n    prev = None\n    while head:\n        head.next, prev, head = prev, head, head.next\n"
               "    return prev\n")
    jobs = [
        check_job("listnode", reverse, "def check(c):\n    assert to_list(c(list_node([1, 2, 3]))) == [3, 2, 1]\n",
                  prelude=LISTNODE),
        check_job("in-place", "def f(nums):\n    nums.sort()\n",
                  "def check(c):\n    nums = [3, 1, 2]\n    assert c(nums) is None\n    assert nums == [1, 2, 3]\n"),
        check_job("raises", "def f(x):\n    raise ValueError('no')\n",
                  "def check(c):\n    try:\n        c(1)\n    except ValueError:\n        return\n    assert False\n"),
        check_job("helper", "def helper(x):\n    return 2 * x\ndef f(x):\n    return x\n",
                  "def check(c):\n    assert helper(c(3)) == 6\n"),
        check_job("method-expr", "class Solution:\n    def g(self, x):\n        return x + 1\n",
                  "def check(c):\n    assert c(1) == 2\n", entry_point="Solution().g"),
    ]
    for v in sandbox.run(jobs):
        assert v.passed, v


def test_invalid_jobs_get_error_verdicts(sandbox):
    jobs = [Job("no-entry", "x = 1", "check", "def check(c): pass", ""),
            Job("bad-style", "x = 1", "bogus", []),
            Job("bad-cases", "x = 1", "stdin", [{"input": 1}])]
    for v in sandbox.run(jobs):
        assert v.status == "error" and not v.passed and "invalid job" in v.reason


def test_job_from_problem_and_dict():
    p = Problem("s", "t", "prompt", "f", "check", "def check(c): pass", prelude="import math")
    job = job_from_problem(p, "def f(): pass", "j1")
    assert (job.test_style, job.tests, job.entry_point, job.prelude) == ("check", "def check(c): pass", "f", "import math")
    assert job_from_dict({"id": 1, "code": "", "stdin_tests": [{"input": "", "output": ""}]}).test_style == "stdin"
    assert job_from_dict({"id": 1, "code": "", "functional_tests": [], "entry_point": "f"}).test_style == "functional"
    with pytest.raises(ValueError):
        job_from_dict({"id": 1, "code": ""})


def test_plain_data_round_trip_and_refusals():
    class Node:
        pass

    n = Node()
    n.val, n.next = 1, None
    n.next = n  # a cycle
    value = [None, True, 3, 2.5, float("inf"), "s", b"\x00", 1j, (1, [2]), {1: {"a"}}, frozenset({2}), 10 ** 5000]
    assert wire.from_tree(wire.to_tree(value)) == value
    back = wire.from_tree(wire.to_tree(n, {"Node": Node}), {"Node": Node})
    assert type(back) is Node and back.next is back and back.val == 1

    class EvilInt(int):
        def __eq__(self, other):
            return True

    for bad in (EvilInt(1), object(), lambda: 1, iter([1])):
        with pytest.raises(wire.NotPlainData):
            wire.to_tree(bad)
    for tree in ({"o": "Node", "id": 0, "a": {}}, {"x": 1}, {"o": "Node", "id": 0, "a": {"__class__": 1}}, {"ref": 3}):
        with pytest.raises(wire.NotPlainData):
            wire.from_tree(tree, {"Node": Node} if tree.get("a", {}).get("__class__") else {})


def test_outputs_match_like_livecodebench():
    assert outputs_match("1 2\n3  \n\n", "1 2\n3")
    assert outputs_match("0.50\n", "0.5")
    assert not outputs_match("1 2", "1 3")
    assert not outputs_match("1\n2", "1")


def test_candidates_start_warm_but_fresh(sandbox):
    # The runner imports the preludes' stdlib modules once, before forking: a candidate finds
    # them already loaded. Each candidate still gets its own random state (Python reseeds after
    # fork), and what one candidate does to a preloaded module never reaches the next one.
    from setrl.sandbox.inside_runner import PRELOAD

    probe = ("import sys\nloaded = sorted(m for m in " + repr(PRELOAD) + " if m in sys.modules)\n"
             "import random, math\nmath.pi = 3\n"
             "def f(x):\n    return [loaded, random.random(), math.pi]\n")
    # The judge reports the candidate's random number through the (failing) verdict's reason.
    test = (f"def check(c):\n    loaded, r, pi = c(1)\n    assert loaded == {sorted(PRELOAD)!r}, loaded\n"
            "    assert pi == 3\n    assert False, repr(r)\n")
    verdicts = sandbox.run([check_job(f"warm-{i}", probe, test) for i in range(4)])
    prefix = "assertion failed: "
    assert all(v.reason.startswith(prefix) and v.reason[len(prefix)].isdigit() for v in verdicts), verdicts
    assert len({float(v.reason[len(prefix):]) for v in verdicts}) == 4, verdicts
    pristine = "import math\ndef f(x):\n    return math.pi\n"
    [v] = sandbox.run([check_job("pristine", pristine, "def check(c):\n    assert c(1) > 3.14\n")])
    assert v.passed, v
