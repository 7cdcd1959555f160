"""Which program a completion becomes."""

from setrl.generation import program_from_completion
from setrl.problem import Problem

P = Problem(source="tiny", title="t", prompt="def f(xs):\n    \"\"\"Doc.\"\"\"\n", entry_point="f",
            test_style="check", tests="def check(candidate):\n    assert candidate([]) == 0\n")


def test_base_model_completion_continues_the_prompt():
    assert program_from_completion(P, "    return 0\n") == P.prompt + "    return 0\n"


def test_last_fenced_block_wins():
    text = "Draft:\n```python\ndef f(xs):\n    return 1\n```\nFixed:\n```python\ndef f(xs):\n    return 0\n```\nDone."
    assert program_from_completion(P, text) == "def f(xs):\n    return 0\n"


def test_unlabelled_and_unclosed_fences():
    assert program_from_completion(P, "```\ndef f(xs): return 0\n```") == "def f(xs): return 0\n"
    assert program_from_completion(P, "Here:\n```python\ndef f(xs):\n    return 0") == "def f(xs):\n    return 0\n"


def test_empty_fence_falls_back_to_prompt_plus_text():
    assert program_from_completion(P, "    return 0  # ```\n") == P.prompt + "    return 0  # ```\n"
