"""The tiny task family: generated HumanEval-style problems for the CPU study.

A problem is a function signature plus docstring (with one worked example); the model writes the
body; the harness runs `check(<entry_point>)` on prompt + body. Templates live in
`tiny_templates.py`: training templates teach skills, held-out templates compose them, so
evaluation measures generalisation to unseen templates (as the study does on LiveCodeBench).

Everything is seeded: `load(spec)` returns the same problems for the same (split, seed, limit),
and a shorter limit is a prefix of a longer one.
"""

from __future__ import annotations

import copy
import json
import random
import textwrap
from pathlib import Path
from string import Template as Code

from setrl.config import DatasetSpec
from setrl.data.tiny_templates import (ACC_VARS, ELEM_VARS, HELDOUT, INDEX_VARS, INT_ARGS, LIST_ARGS, STR_ARGS,
                                       TEMPLATES_BY_NAME, TRAIN, Template)
from setrl.problem import Problem

TRAIN_TEMPLATES = [t.name for t in TRAIN]
HELDOUT_TEMPLATES = [t.name for t in HELDOUT]
TEMPLATES = TRAIN_TEMPLATES + HELDOUT_TEMPLATES
SPLITS = {"train": TRAIN, "heldout": HELDOUT}
DEFAULT_SIZE = {"train": 320, "heldout": 64}  # used when spec.limit is None
N_TESTS = 5        # random tests per problem; discriminating tests for the buggy variants come on top
MAX_TESTS = 8
DEGENERATE_LABEL = 100
CHAR_VARS = ["ch", "c", "letter", "char", "x"]
ARG_POOLS = {"list": LIST_ARGS, "str": STR_ARGS, "int": INT_ARGS}


# ---- rendering ----------------------------------------------------------------------------


def pick_names(t: Template, rng: random.Random, fixed: dict | None = None) -> dict:
    """Random identifiers (all distinct) and constants for one rendering of a template.

    `fixed` keeps the function and argument names (and constants) of an existing problem, so
    only the local variables change: the same strategy written by a different hand.
    """
    names = dict(fixed or {})
    if "f" not in names:
        names["f"] = rng.choice(t.funcs)
        names["arg"] = rng.choice([a for a in ARG_POOLS[t.kind] if a != names["f"]])
        names.update(t.consts(rng))
    used = {names["f"], names["arg"]}
    for key, pool in (("x", CHAR_VARS if t.kind == "str" else ELEM_VARS), ("acc", ACC_VARS), ("i", INDEX_VARS)):
        names[key] = rng.choice([v for v in pool if v not in used])
        used.add(names[key])
    return names


def render_body(body: str, names: dict) -> str:
    """A body template -> indented function body (the completion the model should write)."""
    subs = {**names, "xs": names["arg"], "s": names["arg"], "n": names["arg"]}
    return textwrap.indent(Code(body).substitute(subs), "    ") + "\n"


def make_prompt(t: Template, names: dict, example) -> str:
    subs = {**names, "xs": names["arg"], "s": names["arg"], "n": names["arg"]}
    doc = Code(t.doc).substitute(subs)
    call = f"{names['f']}({example!r})"
    return (f"def {names['f']}({names['arg']}):\n"
            f'    """{doc}\n'
            f"    >>> {call}\n"
            f"    {t.ref(copy.deepcopy(example), names)!r}\n"
            f'    """\n')


def _compile(program: str, entry: str):
    ns: dict = {}
    exec(program, ns)  # trusted: our own template bodies, never model output
    return ns[entry]


def _passes(fn, t: Template, names: dict, arg) -> bool:
    try:
        return fn(copy.deepcopy(arg)) == t.ref(copy.deepcopy(arg), names)
    except Exception:
        return False


def _check_source(entry_args: list, t: Template, names: dict) -> str:
    lines = ["def check(candidate):"]
    lines += [f"    assert candidate({a!r}) == {t.ref(copy.deepcopy(a), names)!r}" for a in entry_args]
    return "\n".join(lines) + "\n"


# ---- problems -----------------------------------------------------------------------------


def make_problem(t: Template, rng: random.Random) -> Problem:
    """One random instance of template `t`, with tests that every correct strategy passes and
    every kept buggy variant fails (bugs no test input can catch are dropped)."""
    names = pick_names(t, rng)
    pool, seen = [], set()
    for _ in range(60):
        a = t.gen(rng, names)
        if repr(a) not in seen:
            seen.add(repr(a))
            pool.append(a)
    # The docstring example should show something: a list or string of length >= 2.
    example = next((a for a in pool if not hasattr(a, "__len__") or len(a) >= 2), pool[0])
    rest = [a for a in pool if a is not example]
    tests, spare = rest[:N_TESTS], rest[N_TESTS:]
    prompt = make_prompt(t, names, example)
    for strategy, body in t.strategies.items():
        fn = _compile(prompt + render_body(body, names), names["f"])
        bad = [a for a in pool if not _passes(fn, t, names, a)]
        if bad:
            raise AssertionError(f"template {t.name}: strategy {strategy} fails on {bad[0]!r}")
    kept_bugs = []
    for b, (_, body) in enumerate(t.bugs):
        fn = _compile(prompt + render_body(body, names), names["f"])
        if any(not _passes(fn, t, names, a) for a in tests):
            kept_bugs.append(b)
            continue
        catch = next((a for a in spare if not _passes(fn, t, names, a)), None)
        if catch is not None and len(tests) < MAX_TESTS:
            tests.append(catch)
            kept_bugs.append(b)
    return Problem(
        source="tiny",
        title=f"{t.name}: {names['f']}",
        prompt=prompt,
        entry_point=names["f"],
        test_style="check",
        tests=_check_source(tests, t, names),
        meta={"template": t.name, "split": t.split, "strategies": list(t.strategies),
              "bugs": kept_bugs, "names": names},
    )


def generate(split: str, count: int, seed: int = 0) -> list[Problem]:
    """`count` distinct problems, templates round-robin; the i-th problem depends only on
    (seed, split, i), so a smaller count is a prefix of a larger one."""
    if split not in SPLITS:
        raise ValueError(f"tiny: unknown split '{split}'; valid: {', '.join(SPLITS)}")
    templates, out, ids, i = SPLITS[split], [], set(), 0
    while len(out) < count:
        p = make_problem(templates[i % len(templates)], random.Random(f"tiny/{seed}/{split}/{i}"))
        if p.problem_id not in ids:
            ids.add(p.problem_id)
            out.append(p)
        i += 1
    return out


def load(spec: DatasetSpec) -> list[Problem]:
    """The loader-registry entry point: split train|heldout, limit (default DEFAULT_SIZE), seed."""
    if spec.split not in SPLITS:
        raise ValueError(f"tiny: unknown split '{spec.split}'; valid: {', '.join(SPLITS)}")
    return generate(spec.split, spec.limit or DEFAULT_SIZE[spec.split], spec.seed)


def solutions(problem: Problem) -> list[dict]:
    """Reference programs (prompt + body) for a tiny problem: every correct strategy, then the
    buggy variants its tests catch, each as {"strategy", "code", "correct"}."""
    t = TEMPLATES_BY_NAME[problem.meta["template"]]
    names = problem.meta["names"]
    out = [{"strategy": s, "code": problem.prompt + render_body(b, names), "correct": True}
           for s, b in t.strategies.items()]
    for b in problem.meta["bugs"]:
        strategy, body = t.bugs[b]
        out.append({"strategy": strategy, "code": problem.prompt + render_body(body, names), "correct": False})
    return out


# ---- SFT corpus ---------------------------------------------------------------------------


def sft_examples(count: int, seed: int = 0, bug_rate: float = 0.1) -> list[tuple[str, str]]:
    """(prompt, completion) pairs from the TRAINING templates only (never a held-out one).

    Each pair is a fresh random instance with a uniformly chosen strategy; with probability
    `bug_rate` a buggy variant instead, so the base model fails the way people do rather than
    only by producing noise. The completion ends without EOS: the tokenizer side adds it.
    """
    rng = random.Random(f"tiny-sft/{seed}")
    out = []
    for j in range(count):
        t = TRAIN[j % len(TRAIN)]
        names = pick_names(t, rng)
        example = t.gen(rng, names)
        while hasattr(example, "__len__") and len(example) < 2:
            example = t.gen(rng, names)
        if t.bugs and rng.random() < bug_rate:
            body = rng.choice(t.bugs)[1]
        else:
            body = t.strategies[rng.choice(list(t.strategies))]
        out.append((make_prompt(t, names, example), render_body(body, names)))
    return out


# ---- judge calibration set ----------------------------------------------------------------

DEGENERATE_BODIES = [
    "    pass\n",
    "    I am not sure how to solve this one.\n",
    "    return return ( ( $arg ] ] = =\n",
    "    # TODO\n",
    "    $arg $arg $arg $arg\n",
]


def calibration_groups(n_groups: int = 24, seed: int = 0, group_size: int = 8) -> list[dict]:
    """Labelled strategy groups for judge calibration (data/calibration/tiny.jsonl).

    Each group: one problem, `group_size` full programs. Responses of one strategy get the same
    label even when their local variable names differ or they are buggy attempts; exactly one
    degenerate response (no code / gibberish) per group gets label 100. Labels are numbered by
    first appearance within the group.
    """
    rng = random.Random(f"tiny-calibration/{seed}")
    templates = TRAIN + HELDOUT
    groups = []
    for g in range(n_groups):
        t = templates[(g * 7) % len(templates)]  # stride 7 visits train and held-out templates alike
        p = make_problem(t, random.Random(f"tiny-calibration/{seed}/{g}"))
        names = p.meta["names"]
        chosen = rng.sample(list(t.strategies), k=min(len(t.strategies), rng.randint(2, 4)))
        items = []
        bugs = [t.bugs[b] for b in p.meta["bugs"] if t.bugs[b][0] in chosen]
        for bug_strategy, bug_body in rng.sample(bugs, k=min(len(bugs), rng.randint(1, 2))):
            items.append((bug_strategy, bug_body))
        while len(items) < group_size - 1:
            s = chosen[len(items) % len(chosen)] if len(items) < len(chosen) else rng.choice(chosen)
            items.append((s, t.strategies[s]))
        rng.shuffle(items)
        responses, strategies = [], []
        for s, body in items:
            local = pick_names(t, rng, fixed={k: names[k] for k in ("f", "arg", "k", "c") if k in names})
            responses.append(p.prompt + render_body(body, local))
            strategies.append(s)
        pos = rng.randrange(group_size)
        junk = Code(rng.choice(DEGENERATE_BODIES)).substitute(arg=names["arg"])
        responses.insert(pos, p.prompt + junk)
        strategies.insert(pos, "degenerate")
        order: dict[str, int] = {}
        labels = [DEGENERATE_LABEL if s == "degenerate" else order.setdefault(s, len(order)) for s in strategies]
        groups.append({"id": f"tiny-{g:02d}-{t.name}", "problem": p.to_dict(), "responses": responses,
                       "labels": labels, "strategies": strategies})
    return groups


def write_calibration(path: str | Path = "data/calibration/tiny.jsonl", n_groups: int = 24, seed: int = 0) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(g) + "\n" for g in calibration_groups(n_groups, seed)))
    return path
