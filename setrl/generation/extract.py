"""Turn a completion into the program the sandbox runs."""

from __future__ import annotations

import re

from setrl.problem import Problem

# A fenced block, closed or cut off by the length limit (then it runs to the end of the text).
_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:```|\Z)", re.S | re.I)


def program_from_completion(problem: Problem, text: str) -> str:
    """The program to run for one completion.

    Base-model style (no fence): the completion continues the prompt, so the program is
    prompt + completion. Chat/instruct style: the model writes a whole program in a fenced block;
    the LAST ```python block wins because instruct models often show a draft first.
    """
    if "```" in text:
        blocks = [b for b in _FENCE.findall(text) if b.strip()]
        if blocks:
            return blocks[-1] if blocks[-1].endswith("\n") else blocks[-1] + "\n"
    return problem.prompt + text
