"""The offline judge: clusters responses by a structural signature of their parsed code.

Two programs get the same cluster when they have the same *strategy signature*: the set of
algorithmic features below, computed from the AST. Names, literals, comments, docstrings and
formatting never enter it, so renaming variables or reformatting cannot split a cluster (the
failure the replication saw with a small LLM judge), and a buggy attempt lands with the strategy
it attempted rather than in the degenerate cluster.

Features:
  control      recursion, memo (lru_cache/cache or a dict next to recursion), for, while,
               nested-loop (for / comprehension generators nested >= 2 deep), comprehension
               (list/set/dict), generator (a generator expression, usually fed to sum/any/all)
  structures   dict, set, counter, deque, stack (list used with .append and .pop()); heaps show
               up as lib:heapq.* calls
  calls        sorted, .sort (sort-in-place) and reduce anywhere; other builtins and str methods that do the heavy
               lifting (sum, max, any, map, .count, .split, ...) only in code without loops,
               comprehensions or recursion: next to a loop `best = max(best, x)` is bookkeeping
  libraries    lib:<module>.<function> for heapq, bisect, itertools, functools, math, re, ...
  idioms       reverse-slice (x[::-1]), index-write (x[i] = ... inside a loop: DP tables, counting)

A response is degenerate when no code can be parsed out of it (after taking fenced blocks,
dedenting, or continuing the problem's prompt), or when the code does nothing (only pass,
docstrings, `...`, names, constants, imports).
"""

from __future__ import annotations

import ast
import re
import textwrap
import threading
import time

from setrl.judge.base import DEGENERATE, Clustering, Judge
from setrl.problem import Problem

# Bumped whenever the signature changes (it is the ast judge's "prompt version" in cache keys).
SIGNATURE_VERSION = "sig-v1"

# Calls that are a strategy only in loop-free code ("return max(xs)"); next to a loop they are
# bookkeeping ("best = max(best, x)", "return max(dp)") and counting them would split one strategy.
# Conversions (bin, str, int, format) are never a strategy on their own: `bin(n).count("1")` and
# `format(n, "b").count("1")` are one strategy.
STRAIGHT_LINE_BUILTINS = {"sum", "max", "min", "any", "all", "map", "filter", "reversed", "zip", "pow"}
STRAIGHT_LINE_METHODS = {
    "count": "count", "index": "find", "find": "find", "rfind": "find", "replace": "replace",
    "split": "split", "startswith": "affix", "endswith": "affix", "isdigit": "str-predicate",
    "isalpha": "str-predicate", "isalnum": "str-predicate", "isupper": "str-predicate",
    "islower": "str-predicate", "isspace": "str-predicate", "lower": "case", "upper": "case",
    "translate": "translate",
}
# Calls that are a strategy wherever they appear (sort-then-scan differs from a hash map scan).
ALWAYS_BUILTINS = {"sorted": "sorted", "reduce": "reduce"}
# In-place .sort() and sorted() copy are labelled as different strategies by the tiny family.
ALWAYS_METHODS = {"sort": "sort-in-place", "most_common": "counter"}
LIBRARIES = {"heapq", "bisect", "itertools", "functools", "math", "re", "collections", "operator", "string", "statistics", "numpy"}
STRUCTURE_CALLS = {
    "dict": "dict", "defaultdict": "dict", "OrderedDict": "dict", "set": "set", "frozenset": "set",
    "Counter": "counter", "deque": "deque",
}
MEMO_DECORATORS = {"lru_cache", "cache"}
_CODE_START = re.compile(r"(def|class|import|from)\s")
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)


# CPython 3.11 before 3.11.8 (gh-106905): ast.parse in several threads at once can raise
# "SystemError: AST constructor recursion depth mismatch". Judges run in thread pools; parsing is
# fast, so serialising it costs nothing measurable.
_PARSE_LOCK = threading.Lock()


def extract_code(text: str, prompt: str = "") -> ast.Module | None:
    """Parse the code in a response, or None when there is none.

    Tries, in order: fenced ``` blocks (python-tagged first), the text as is, dedented, as the
    continuation of the prompt (completion models write a function body after the given `def`),
    and as the body of a function.
    """
    text = text or ""
    fences = _FENCE.findall(text)
    if fences:
        py = [body for tag, body in fences if tag.lower() in ("python", "py", "python3")]
        candidates = ["\n".join(py or [body for _, body in fences])]
    else:
        candidates = [text, textwrap.dedent(text)]
        # Prose before unfenced code: start at the first line that opens code.
        lines = text.splitlines()
        starts = [i for i, line in enumerate(lines) if _CODE_START.match(line)]
        if starts and starts[0] > 0:
            candidates.append("\n".join(lines[starts[0]:]))
        if prompt and text[:1] in (" ", "\t"):
            candidates.append(prompt.rstrip("\n") + "\n" + text)
        candidates.append("def _body():\n" + textwrap.indent(textwrap.dedent(text), "    "))
    for code in candidates:
        if not code.strip():
            continue
        try:
            with _PARSE_LOCK:
                return ast.parse(code)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
    return None


class _Signature(ast.NodeVisitor):
    def __init__(self, function_names: set[str]):
        self.functions = function_names
        self.features: set[str] = set()
        self.loop_depth = 0
        self.max_depth = 0
        self.current: list[str] = []
        self.methods: set[str] = set()
        self.straight: set[str] = set()  # features that count only when the program has no loop
        self.substantive = False  # a call, loop, return or assignment of something computed

    # Depth counts `for` loops and comprehension generators only: for-in-for is the quadratic
    # brute force, while a `while` inside a `while` is usually a pointer skipping ahead.
    def _loop(self, node: ast.AST, kind: str, depth: int = 1) -> None:
        self.features.add(kind)
        self.substantive = True
        self.loop_depth += depth
        self.max_depth = max(self.max_depth, self.loop_depth)
        self.generic_visit(node)
        self.loop_depth -= depth

    def visit_For(self, node):
        self._loop(node, "for")

    visit_AsyncFor = visit_For

    def visit_While(self, node):
        self._loop(node, "while", depth=0)

    def _comprehension(self, node):
        self._loop(node, "comprehension", depth=len(node.generators))

    visit_ListComp = _comprehension

    # A generator feeding a builtin (`any(x % 2 == 0 for x in xs)`) is the builtin's strategy; a
    # list comprehension builds the answer. The tiny family labels them apart, and so do we.
    def visit_GeneratorExp(self, node):
        self._loop(node, "generator", depth=len(node.generators))

    def visit_DictComp(self, node):
        self.features.add("dict")
        self._comprehension(node)

    def visit_SetComp(self, node):
        self.features.add("set")
        self._comprehension(node)

    def visit_FunctionDef(self, node):
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            if _name(target) in MEMO_DECORATORS:
                self.features.add("memo")
        self.current.append(node.name)
        # A def nested in a loop is rare; its body is not "inside" the loop for our purpose.
        saved, self.loop_depth = self.loop_depth, 0
        self.generic_visit(node)
        self.loop_depth = saved
        self.current.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Return(self, node):
        if node.value is not None and not isinstance(node.value, ast.Constant):
            self.substantive = True
        self.generic_visit(node)

    # A literal of constants ({"(": ")"}, {"a", "e"}) is a lookup table, i.e. data; an empty or
    # computed one is a working structure.
    def visit_Dict(self, node):
        if not node.keys or not all(_constant(x) for x in node.keys + node.values if x is not None):
            self.features.add("dict")
        self.generic_visit(node)

    def visit_Set(self, node):
        if not all(_constant(x) for x in node.elts):
            self.features.add("set")
        self.generic_visit(node)

    def visit_Subscript(self, node):
        sl = node.slice
        if isinstance(sl, ast.Slice) and sl.step is not None and _negative(sl.step) and sl.lower is None and sl.upper is None:
            self.features.add("reverse-slice")
        if isinstance(node.ctx, ast.Store) and self.loop_depth:
            self.features.add("index-write")
        self.generic_visit(node)

    def visit_Assign(self, node):
        if not all(isinstance(v, ast.Constant) for v in ast.walk(node.value) if not isinstance(v, (ast.expr_context,))):
            self.substantive = True
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self.substantive = True
        if isinstance(node.target, ast.Subscript) and self.loop_depth:
            self.features.add("index-write")
        self.generic_visit(node)

    def visit_Call(self, node):
        self.substantive = True
        func = node.func
        name = _name(func)
        if isinstance(func, ast.Name):
            if name in self.functions and name in self.current:
                self.features.add("recursion")
            elif name in STRUCTURE_CALLS:
                self.features.add(STRUCTURE_CALLS[name])
            elif name in ALWAYS_BUILTINS:
                self.features.add(ALWAYS_BUILTINS[name])
            elif name in STRAIGHT_LINE_BUILTINS:
                self.straight.add(name)
        elif isinstance(func, ast.Attribute):
            base = func.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls") and name in self.functions and name in self.current:
                self.features.add("recursion")
            elif isinstance(base, ast.Name) and base.id in LIBRARIES:
                # collections.Counter(x) == Counter(x); functools.reduce == reduce; a memo decorator is `memo`.
                if base.id == "collections" and name in STRUCTURE_CALLS:
                    self.features.add(STRUCTURE_CALLS[name])
                elif name == "reduce":
                    self.features.add("reduce")
                elif name not in MEMO_DECORATORS:
                    self.features.add(f"lib:{base.id}.{name}")
            else:
                self.methods.add(name)
                if name in ALWAYS_METHODS:
                    self.features.add(ALWAYS_METHODS[name])
                elif name in STRAIGHT_LINE_METHODS:
                    self.straight.add(STRAIGHT_LINE_METHODS[name])
                if name == "pop" and not node.args:
                    self.features.add("pop")
        self.generic_visit(node)


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _constant(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) or (isinstance(node, (ast.Tuple, ast.List)) and all(_constant(e) for e in node.elts))


def _negative(node: ast.AST) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) or (isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and node.value < 0)


def signature(tree: ast.Module) -> frozenset[str] | None:
    """The strategy signature of parsed code, or None when the code does nothing (degenerate)."""
    functions = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    v = _Signature(functions)
    v.visit(tree)
    if not v.substantive:
        return None
    features = set(v.features)
    _from_imports(tree, features)
    if not features & {"for", "while", "comprehension", "generator", "recursion"}:
        features |= v.straight
    if v.max_depth >= 2:
        features.add("nested-loop")
    if "pop" in features:
        features.discard("pop")
        if "append" in v.methods:
            features.add("stack")
    # Next to recursion, a dict written outside any loop is a memo: the same strategy as @lru_cache.
    if "recursion" in features and "dict" in features and "index-write" not in features:
        features.discard("dict")
        features.add("memo")
    return frozenset(features) or frozenset({"straight-line"})


def _from_imports(tree: ast.Module, features: set[str]) -> None:
    """Calls to names imported from a library (`from heapq import heappush`) count as library calls."""
    imported = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in LIBRARIES:
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{node.module.split('.')[0]}.{alias.name}"
    if not imported:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in imported:
            name = node.func.id
            if name in STRUCTURE_CALLS or name in MEMO_DECORATORS:
                continue
            if imported[name] == "functools.reduce":
                continue  # already the `reduce` feature, however it was imported
            features.add(f"lib:{imported[name]}")


def group_ids(signatures: list[frozenset[str] | None], degenerate_id: int = DEGENERATE) -> list[int]:
    """Ids 0, 1, ... in order of first appearance; None -> degenerate_id."""
    seen: dict[frozenset[str], int] = {}
    out = []
    for sig in signatures:
        if sig is None:
            out.append(degenerate_id)
        else:
            out.append(seen.setdefault(sig, len(seen)))
    return out


class AstJudge(Judge):
    """Deterministic, offline, thousands of responses per second; the tiny profile's default."""

    kind = "ast"
    prompt_version = SIGNATURE_VERSION
    cacheable = False  # recomputing is faster than a DuckDB round trip

    def signatures(self, problem: Problem, responses: list[str]) -> list[frozenset[str] | None]:
        out = []
        for text in responses:
            tree = extract_code(text, problem.prompt)
            out.append(None if tree is None else signature(tree))
        return out

    def cluster(self, problem: Problem, responses: list[str]) -> Clustering:
        t0 = time.perf_counter()
        sigs = self.signatures(problem, responses)
        rationales = ["degenerate: no parsable code that does anything" if s is None else "signature: " + ", ".join(sorted(s)) for s in sigs]
        return Clustering(group_ids(sigs, self.degenerate_id), rationales, attempts=1, latency_s=time.perf_counter() - t0)
