"""The tiny task family's templates: short Python functions, each solvable several genuinely
different ways, with realistic buggy attempts.

A template is a docstring, a reference implementation that produces the expected outputs, an
input generator, and bodies written with `$name` placeholders (string.Template, so code braces
need no escaping):  $f function name, $xs list argument, $s string argument, $n int argument,
$x loop/element variable, $acc accumulator, $i index, $k integer constant, $c character constant.

Held-out templates are compositions or variants of skills the training templates teach
("sum" + "even" -> "sum of the even numbers"), so the SFT model solves them sometimes, not always.
Every bug names the strategy it is a (failed) attempt at: the judge calibration set labels
buggy responses by strategy, as a human would.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable

VOWELS = "aeiou"
LETTERS = "abcdeilnorst"  # small alphabet: repeated letters and vowels are common in tests

# Randomised identifier pools; names never collide within one problem (see `pick_names`).
LIST_ARGS = ["xs", "nums", "values", "items", "arr", "data", "numbers", "lst"]
STR_ARGS = ["s", "text", "word", "string", "line"]
INT_ARGS = ["n", "num", "m", "limit"]
ELEM_VARS = ["x", "v", "item", "e", "val", "y"]
ACC_VARS = ["result", "acc", "res", "out", "ans", "total"]
INDEX_VARS = ["i", "j", "idx", "pos"]


@dataclass(frozen=True)
class Template:
    name: str
    split: str                                  # "train" | "heldout"
    kind: str                                   # "list" | "str" | "int": the single argument's type
    funcs: tuple[str, ...]                      # function-name pool
    doc: str                                    # docstring with $xs/$s/$n/$k/$c placeholders
    ref: Callable[..., Any]                     # ref(arg, consts) -> expected output
    gen: Callable[[random.Random, dict], Any]   # gen(rng, consts) -> one test argument
    strategies: dict[str, str]                  # strategy -> correct body
    bugs: tuple[tuple[str, str], ...] = ()      # (strategy attempted, buggy body)
    consts: Callable[[random.Random], dict] = field(default=lambda rng: {})


# ---- input generators -------------------------------------------------------------------


def ints(rng: random.Random, lo: int = -6, hi: int = 15, min_len: int = 0, max_len: int = 8) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(rng.randint(min_len, max_len))]


def word(rng: random.Random, min_len: int = 0, max_len: int = 9, alphabet: str = LETTERS) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(min_len, max_len)))


def palindrome_or_not(rng: random.Random, consts: dict) -> str:
    half = word(rng, 0, 4)
    if rng.random() < 0.5:
        return half + rng.choice(["", rng.choice(LETTERS)]) + half[::-1]
    return word(rng, 2, 7)


def with_char(rng: random.Random, consts: dict) -> str:
    w = list(word(rng, 0, 8))
    for _ in range(rng.randint(0, 3)):
        w.insert(rng.randint(0, len(w)), consts["c"])
    return "".join(w)


def with_k(rng: random.Random, consts: dict) -> list[int]:
    xs = ints(rng)
    if xs and rng.random() < 0.5:
        xs[rng.randrange(len(xs))] = consts["k"]  # exercise the boundary (> vs >=)
    return xs


def k_small(rng: random.Random) -> dict:
    return {"k": rng.randint(2, 9)}


def c_letter(rng: random.Random) -> dict:
    return {"c": rng.choice(LETTERS)}


L = lambda rng, c: ints(rng)                          # noqa: E731
LNE = lambda rng, c: ints(rng, min_len=1)             # noqa: E731
LNEG = lambda rng, c: ints(rng, -12, 9, min_len=1)    # noqa: E731  (all-negative lists catch `best = 0`)
S = lambda rng, c: word(rng)                          # noqa: E731


def _has_even(rng: random.Random, c: dict) -> list[int]:
    xs = ints(rng, -12, 15, min_len=1)
    xs.insert(rng.randint(0, len(xs)), 2 * rng.randint(-6, 7))
    return xs


def _prod(xs: list[int]) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def _fact(n: int) -> int:
    return _prod(list(range(1, n + 1)))


# ---- training templates -----------------------------------------------------------------

TRAIN = [
    Template("sum_list", "train", "list", ("total", "sum_list", "list_sum", "add_all"),
             "Return the sum of the numbers in $xs.", lambda xs, c: sum(xs), L, {
                 "builtin": "return sum($xs)",
                 "loop": "$acc = 0\nfor $x in $xs:\n    $acc += $x\nreturn $acc",
                 "while": "$i = 0\n$acc = 0\nwhile $i < len($xs):\n    $acc += $xs[$i]\n    $i += 1\nreturn $acc",
                 "recursion": "if not $xs:\n    return 0\nreturn $xs[0] + $f($xs[1:])",
                 "reduce": "from functools import reduce\nreturn reduce(lambda a, b: a + b, $xs, 0)",
             }, (("loop", "$acc = 0\nfor $x in $xs[1:]:\n    $acc += $x\nreturn $acc"),
                 ("while", "$i = 0\n$acc = 0\nwhile $i < len($xs) - 1:\n    $acc += $xs[$i]\n    $i += 1\nreturn $acc"),
                 ("recursion", "if len($xs) <= 1:\n    return 0\nreturn $xs[0] + $f($xs[1:])"))),
    Template("count_even", "train", "list", ("count_even", "count_evens", "num_even", "even_count"),
             "Return how many numbers in $xs are even.", lambda xs, c: sum(1 for x in xs if x % 2 == 0), L, {
                 "loop": "$acc = 0\nfor $x in $xs:\n    if $x % 2 == 0:\n        $acc += 1\nreturn $acc",
                 "comprehension": "return len([$x for $x in $xs if $x % 2 == 0])",
                 "generator": "return sum(1 for $x in $xs if $x % 2 == 0)",
                 "filter": "return len(list(filter(lambda $x: $x % 2 == 0, $xs)))",
                 "recursion": "if not $xs:\n    return 0\nreturn (1 if $xs[0] % 2 == 0 else 0) + $f($xs[1:])",
             }, (("loop", "$acc = 0\nfor $x in $xs:\n    if $x % 2 == 1:\n        $acc += 1\nreturn $acc"),
                 ("comprehension", "return len([$x for $x in $xs if $x % 2])"))),
    Template("count_odd", "train", "list", ("count_odd", "count_odds", "num_odd", "odd_count"),
             "Return how many numbers in $xs are odd.", lambda xs, c: sum(1 for x in xs if x % 2), L, {
                 "loop": "$acc = 0\nfor $x in $xs:\n    if $x % 2 == 1:\n        $acc += 1\nreturn $acc",
                 "comprehension": "return len([$x for $x in $xs if $x % 2 == 1])",
                 "generator": "return sum(1 for $x in $xs if $x % 2 != 0)",
                 "arithmetic": "return sum($x % 2 for $x in $xs)",
                 "recursion": "if not $xs:\n    return 0\nreturn $xs[0] % 2 + $f($xs[1:])",
             }, (("loop", "$acc = 0\nfor $x in $xs:\n    if $x % 2 == 0:\n        $acc += 1\nreturn $acc"),
                 ("arithmetic", "return sum($x // 2 for $x in $xs)"))),
    Template("sum_positive", "train", "list", ("sum_positive", "positive_total", "add_positives", "sum_of_positives"),
             "Return the sum of the positive numbers in $xs.", lambda xs, c: sum(x for x in xs if x > 0), L, {
                 "generator": "return sum($x for $x in $xs if $x > 0)",
                 "loop": "$acc = 0\nfor $x in $xs:\n    if $x > 0:\n        $acc += $x\nreturn $acc",
                 "filter": "return sum(filter(lambda $x: $x > 0, $xs))",
                 "recursion": "if not $xs:\n    return 0\nreturn ($xs[0] if $xs[0] > 0 else 0) + $f($xs[1:])",
             }, (("generator", "return sum($xs)"),
                 ("loop", "$acc = 0\nfor $x in $xs:\n    if $x > 0:\n        $acc = $x\nreturn $acc"))),
    Template("max_list", "train", "list", ("largest", "max_value", "biggest", "find_max"),
             "Return the largest number in $xs.", lambda xs, c: max(xs), LNEG, {
                 "builtin": "return max($xs)",
                 "loop": "$acc = $xs[0]\nfor $x in $xs:\n    if $x > $acc:\n        $acc = $x\nreturn $acc",
                 "sorting": "return sorted($xs)[-1]",
                 "reduce": "from functools import reduce\nreturn reduce(lambda a, b: a if a > b else b, $xs)",
                 "recursion": "if len($xs) == 1:\n    return $xs[0]\n$acc = $f($xs[1:])\nreturn $xs[0] if $xs[0] > $acc else $acc",
             }, (("loop", "$acc = 0\nfor $x in $xs:\n    if $x > $acc:\n        $acc = $x\nreturn $acc"),
                 ("sorting", "return sorted($xs)[0]"))),
    Template("min_list", "train", "list", ("smallest", "min_value", "lowest", "find_min"),
             "Return the smallest number in $xs.", lambda xs, c: min(xs), lambda rng, c: ints(rng, -5, 20, min_len=1), {
                 "builtin": "return min($xs)",
                 "loop": "$acc = $xs[0]\nfor $x in $xs:\n    if $x < $acc:\n        $acc = $x\nreturn $acc",
                 "sorting": "return sorted($xs)[0]",
                 "reduce": "from functools import reduce\nreturn reduce(lambda a, b: a if a < b else b, $xs)",
                 "recursion": "if len($xs) == 1:\n    return $xs[0]\n$acc = $f($xs[1:])\nreturn $xs[0] if $xs[0] < $acc else $acc",
             }, (("loop", "$acc = 0\nfor $x in $xs:\n    if $x < $acc:\n        $acc = $x\nreturn $acc"),
                 ("sorting", "return sorted($xs)[-1]"))),
    Template("filter_even", "train", "list", ("evens", "keep_even", "filter_even", "only_even"),
             "Return a list of the even numbers in $xs, in order.", lambda xs, c: [x for x in xs if x % 2 == 0], L, {
                 "comprehension": "return [$x for $x in $xs if $x % 2 == 0]",
                 "loop": "$acc = []\nfor $x in $xs:\n    if $x % 2 == 0:\n        $acc.append($x)\nreturn $acc",
                 "filter": "return list(filter(lambda $x: $x % 2 == 0, $xs))",
                 "recursion": "if not $xs:\n    return []\n$acc = $f($xs[1:])\nreturn [$xs[0]] + $acc if $xs[0] % 2 == 0 else $acc",
                 "while": "$i = 0\n$acc = []\nwhile $i < len($xs):\n    if $xs[$i] % 2 == 0:\n        $acc.append($xs[$i])\n    $i += 1\nreturn $acc",
             }, (("comprehension", "return [$x for $x in $xs if $x // 2 == 0]"),
                 ("comprehension", "return sorted($x for $x in $xs if $x % 2 == 0)"))),
    Template("filter_positive", "train", "list", ("positives", "keep_positive", "filter_positive", "only_positive"),
             "Return a list of the positive numbers in $xs, in order.", lambda xs, c: [x for x in xs if x > 0], L, {
                 "comprehension": "return [$x for $x in $xs if $x > 0]",
                 "loop": "$acc = []\nfor $x in $xs:\n    if $x > 0:\n        $acc.append($x)\nreturn $acc",
                 "filter": "return list(filter(lambda $x: $x > 0, $xs))",
                 "recursion": "if not $xs:\n    return []\n$acc = $f($xs[1:])\nreturn [$xs[0]] + $acc if $xs[0] > 0 else $acc",
             }, (("comprehension", "return [$x for $x in $xs if $x >= 0]"),
                 ("loop", "$acc = []\nfor $x in $xs:\n    if $x > 0:\n        $acc.append($x)\n    return $acc\nreturn $acc"))),
    Template("filter_greater", "train", "list", ("above", "keep_greater", "filter_greater", "greater_than"),
             "Return a list of the numbers in $xs that are greater than $k, in order.", lambda xs, c: [x for x in xs if x > c["k"]], with_k, {
                 "comprehension": "return [$x for $x in $xs if $x > $k]",
                 "loop": "$acc = []\nfor $x in $xs:\n    if $x > $k:\n        $acc.append($x)\nreturn $acc",
                 "filter": "return list(filter(lambda $x: $x > $k, $xs))",
                 "recursion": "if not $xs:\n    return []\n$acc = $f($xs[1:])\nreturn [$xs[0]] + $acc if $xs[0] > $k else $acc",
             }, (("comprehension", "return [$x for $x in $xs if $x >= $k]"),), k_small),
    Template("count_greater", "train", "list", ("count_above", "count_greater", "num_greater", "how_many_above"),
             "Return how many numbers in $xs are greater than $k.", lambda xs, c: sum(1 for x in xs if x > c["k"]), with_k, {
                 "loop": "$acc = 0\nfor $x in $xs:\n    if $x > $k:\n        $acc += 1\nreturn $acc",
                 "comprehension": "return len([$x for $x in $xs if $x > $k])",
                 "generator": "return sum(1 for $x in $xs if $x > $k)",
                 "filter": "return len(list(filter(lambda $x: $x > $k, $xs)))",
                 "recursion": "if not $xs:\n    return 0\nreturn ($xs[0] > $k) + $f($xs[1:])",
             }, (("loop", "$acc = 0\nfor $x in $xs:\n    if $x >= $k:\n        $acc += 1\nreturn $acc"),
                 ("generator", "return sum(1 for $x in $xs if $x > $k + 1)")), k_small),
    Template("square_each", "train", "list", ("squares", "square_all", "square_each", "squared"),
             "Return a list with the square of each number in $xs.", lambda xs, c: [x * x for x in xs], L, {
                 "comprehension": "return [$x * $x for $x in $xs]",
                 "loop": "$acc = []\nfor $x in $xs:\n    $acc.append($x ** 2)\nreturn $acc",
                 "map": "return list(map(lambda $x: $x * $x, $xs))",
                 "recursion": "if not $xs:\n    return []\nreturn [$xs[0] ** 2] + $f($xs[1:])",
             }, (("comprehension", "return [$x * 2 for $x in $xs]"),
                 ("loop", "$acc = []\nfor $x in $xs:\n    $acc.append($x ** 2)\n    return $acc\nreturn $acc"))),
    Template("add_k", "train", "list", ("shift", "add_to_all", "increase", "add_each"),
             "Return a list with $k added to each number in $xs.", lambda xs, c: [x + c["k"] for x in xs], L, {
                 "comprehension": "return [$x + $k for $x in $xs]",
                 "loop": "$acc = []\nfor $x in $xs:\n    $acc.append($x + $k)\nreturn $acc",
                 "map": "return list(map(lambda $x: $x + $k, $xs))",
                 "index": "$acc = list($xs)\nfor $i in range(len($acc)):\n    $acc[$i] += $k\nreturn $acc",
             }, (("index", "$acc = list($xs)\nfor $i in range(len($acc) - 1):\n    $acc[$i] += $k\nreturn $acc"),
                 ("comprehension", "return [$x + 1 for $x in $xs]")), k_small),
    Template("scale_k", "train", "list", ("scale", "multiply_all", "times", "scale_each"),
             "Return a list with each number in $xs multiplied by $k.", lambda xs, c: [x * c["k"] for x in xs], L, {
                 "comprehension": "return [$x * $k for $x in $xs]",
                 "loop": "$acc = []\nfor $x in $xs:\n    $acc.append($x * $k)\nreturn $acc",
                 "map": "return list(map(lambda $x: $x * $k, $xs))",
                 "recursion": "if not $xs:\n    return []\nreturn [$xs[0] * $k] + $f($xs[1:])",
             }, (("comprehension", "return [$x + $k for $x in $xs]"),
                 ("comprehension", "return [$x ** $k for $x in $xs]")), k_small),
    Template("product_list", "train", "list", ("product", "multiply", "prod_list", "list_product"),
             "Return the product of the numbers in $xs.", lambda xs, c: _prod(xs), lambda rng, c: ints(rng, -4, 6, 0, 6), {
                 "loop": "$acc = 1\nfor $x in $xs:\n    $acc *= $x\nreturn $acc",
                 "reduce": "from functools import reduce\nreturn reduce(lambda a, b: a * b, $xs, 1)",
                 "builtin": "import math\nreturn math.prod($xs)",
                 "recursion": "if not $xs:\n    return 1\nreturn $xs[0] * $f($xs[1:])",
                 "while": "$i = 0\n$acc = 1\nwhile $i < len($xs):\n    $acc *= $xs[$i]\n    $i += 1\nreturn $acc",
             }, (("loop", "$acc = 0\nfor $x in $xs:\n    $acc *= $x\nreturn $acc"),
                 ("reduce", "from functools import reduce\nreturn reduce(lambda a, b: a * b, $xs, 0)"))),
    Template("all_positive", "train", "list", ("all_positive", "is_all_positive", "every_positive", "positive_only"),
             "Return True if every number in $xs is positive, else False.", lambda xs, c: all(x > 0 for x in xs),
             lambda rng, c: ints(rng, -2, 9), {
                 "builtin": "return all($x > 0 for $x in $xs)",
                 "loop": "for $x in $xs:\n    if $x <= 0:\n        return False\nreturn True",
                 "comprehension": "return len([$x for $x in $xs if $x > 0]) == len($xs)",
                 "recursion": "if not $xs:\n    return True\nreturn $xs[0] > 0 and $f($xs[1:])",
                 "min": "return not $xs or min($xs) > 0",
             }, (("loop", "for $x in $xs:\n    if $x < 0:\n        return False\nreturn True"),
                 ("loop", "for $x in $xs:\n    if $x > 0:\n        return True\nreturn False"))),
    Template("any_even", "train", "list", ("any_even", "has_even", "contains_even", "some_even"),
             "Return True if some number in $xs is even, else False.", lambda xs, c: any(x % 2 == 0 for x in xs),
             lambda rng, c: [2 * v + 1 for v in ints(rng, -4, 6)] if rng.random() < 0.5 else ints(rng), {
                 "builtin": "return any($x % 2 == 0 for $x in $xs)",
                 "loop": "for $x in $xs:\n    if $x % 2 == 0:\n        return True\nreturn False",
                 "comprehension": "return len([$x for $x in $xs if $x % 2 == 0]) > 0",
                 "recursion": "if not $xs:\n    return False\nreturn $xs[0] % 2 == 0 or $f($xs[1:])",
             }, (("loop", "for $x in $xs:\n    if $x % 2 == 0:\n        return True\n    return False\nreturn False"),
                 ("builtin", "return any($x % 2 == 0 for $x in $xs[1:])"))),
    Template("any_negative", "train", "list", ("any_negative", "has_negative", "contains_negative", "some_negative"),
             "Return True if some number in $xs is negative, else False.", lambda xs, c: any(x < 0 for x in xs),
             lambda rng, c: ints(rng, 0, 9) if rng.random() < 0.5 else ints(rng), {
                 "builtin": "return any($x < 0 for $x in $xs)",
                 "loop": "for $x in $xs:\n    if $x < 0:\n        return True\nreturn False",
                 "min": "return bool($xs) and min($xs) < 0",
                 "recursion": "if not $xs:\n    return False\nreturn $xs[0] < 0 or $f($xs[1:])",
             }, (("loop", "for $x in $xs:\n    if $x <= 0:\n        return True\nreturn False"),
                 ("builtin", "return all($x < 0 for $x in $xs)"))),
    Template("reverse_string", "train", "str", ("reverse", "reverse_string", "backwards", "flip"),
             "Return $s reversed.", lambda s, c: s[::-1], S, {
                 "slicing": "return $s[::-1]",
                 "builtin": "return ''.join(reversed($s))",
                 "loop": "$acc = ''\nfor $x in $s:\n    $acc = $x + $acc\nreturn $acc",
                 "recursion": "if not $s:\n    return $s\nreturn $f($s[1:]) + $s[0]",
                 "while": "$acc = ''\n$i = len($s) - 1\nwhile $i >= 0:\n    $acc += $s[$i]\n    $i -= 1\nreturn $acc",
             }, (("loop", "$acc = ''\nfor $x in $s:\n    $acc = $acc + $x\nreturn $acc"),
                 ("while", "$acc = ''\n$i = len($s) - 1\nwhile $i > 0:\n    $acc += $s[$i]\n    $i -= 1\nreturn $acc"))),
    Template("count_char", "train", "str", ("count_char", "occurrences", "char_count", "count_letter"),
             "Return how many times the character '$c' appears in $s.", lambda s, c: s.count(c["c"]), with_char, {
                 "builtin": "return $s.count('$c')",
                 "loop": "$acc = 0\nfor $x in $s:\n    if $x == '$c':\n        $acc += 1\nreturn $acc",
                 "generator": "return sum(1 for $x in $s if $x == '$c')",
                 "recursion": "if not $s:\n    return 0\nreturn ($s[0] == '$c') + $f($s[1:])",
             }, (("loop", "$acc = 0\nfor $x in $s:\n    if $x != '$c':\n        $acc += 1\nreturn $acc"),
                 ("builtin", "return $s.find('$c')")), c_letter),
    Template("count_vowels", "train", "str", ("count_vowels", "vowels", "num_vowels", "vowel_count"),
             "Return how many vowels (a, e, i, o, u) are in $s.", lambda s, c: sum(ch in VOWELS for ch in s),
             lambda rng, c: word(rng, alphabet="abeiostu"), {
                 "loop": "$acc = 0\nfor $x in $s:\n    if $x in 'aeiou':\n        $acc += 1\nreturn $acc",
                 "generator": "return sum(1 for $x in $s if $x in 'aeiou')",
                 "set": "$acc = set('aeiou')\nreturn len([$x for $x in $s if $x in $acc])",
                 "regex": "import re\nreturn len(re.findall('[aeiou]', $s))",
                 "builtin": "return sum($s.count($x) for $x in 'aeiou')",
             }, (("loop", "$acc = 0\nfor $x in $s:\n    if $x in 'aeio':\n        $acc += 1\nreturn $acc"),
                 ("generator", "return sum(1 for $x in $s if $x not in 'aeiou')"))),
    Template("is_palindrome", "train", "str", ("is_palindrome", "palindrome", "is_mirror", "same_backwards"),
             "Return True if $s reads the same forwards and backwards.", lambda s, c: s == s[::-1], palindrome_or_not, {
                 "slicing": "return $s == $s[::-1]",
                 "builtin": "return $s == ''.join(reversed($s))",
                 "two_pointers": "$i = 0\n$x = len($s) - 1\nwhile $i < $x:\n    if $s[$i] != $s[$x]:\n        return False\n    $i += 1\n    $x -= 1\nreturn True",
                 "recursion": "if len($s) < 2:\n    return True\nreturn $s[0] == $s[-1] and $f($s[1:-1])",
                 "all": "return all($s[$i] == $s[-1 - $i] for $i in range(len($s) // 2))",
             }, (("all", "return all($s[$i] == $s[-$i] for $i in range(len($s) // 2))"),
                 ("slicing", "return $s == $s[::-1][1:]"))),
    Template("factorial", "train", "int", ("factorial", "fact", "product_to", "factorial_of"),
             "Return the factorial of $n.", lambda n, c: _fact(n), lambda rng, c: rng.randint(0, 8), {
                 "loop": "$acc = 1\nfor $i in range(1, $n + 1):\n    $acc *= $i\nreturn $acc",
                 "recursion": "if $n <= 1:\n    return 1\nreturn $n * $f($n - 1)",
                 "builtin": "import math\nreturn math.factorial($n)",
                 "reduce": "from functools import reduce\nreturn reduce(lambda a, b: a * b, range(1, $n + 1), 1)",
                 "while": "$acc = 1\nwhile $n > 1:\n    $acc *= $n\n    $n -= 1\nreturn $acc",
             }, (("loop", "$acc = 1\nfor $i in range(1, $n):\n    $acc *= $i\nreturn $acc"),
                 ("recursion", "if $n <= 1:\n    return $n\nreturn $n * $f($n - 1)"))),
    Template("sum_to_n", "train", "int", ("sum_to", "triangle", "sum_up_to", "sum_first"),
             "Return the sum of the integers from 1 to $n.", lambda n, c: n * (n + 1) // 2, lambda rng, c: rng.randint(0, 30), {
                 "formula": "return $n * ($n + 1) // 2",
                 "builtin": "return sum(range(1, $n + 1))",
                 "loop": "$acc = 0\nfor $i in range(1, $n + 1):\n    $acc += $i\nreturn $acc",
                 "recursion": "if $n <= 0:\n    return 0\nreturn $n + $f($n - 1)",
                 "while": "$acc = 0\nwhile $n > 0:\n    $acc += $n\n    $n -= 1\nreturn $acc",
             }, (("builtin", "return sum(range(1, $n))"),
                 ("formula", "return $n * ($n - 1) // 2"))),
    Template("sort_list", "train", "list", ("sort_list", "ascending", "sorted_copy", "order"),
             "Return the numbers in $xs sorted from smallest to largest.", lambda xs, c: sorted(xs), L, {
                 "builtin": "return sorted($xs)",
                 "method": "$acc = list($xs)\n$acc.sort()\nreturn $acc",
                 "selection": "$x = list($xs)\n$acc = []\nwhile $x:\n    $acc.append(min($x))\n    $x.remove(min($x))\nreturn $acc",
                 "insertion": "$acc = []\nfor $x in $xs:\n    $i = 0\n    while $i < len($acc) and $acc[$i] < $x:\n        $i += 1\n    $acc.insert($i, $x)\nreturn $acc",
             }, (("builtin", "return sorted($xs, reverse=True)"),
                 ("builtin", "return sorted(set($xs))"))),
    Template("unique", "train", "list", ("unique", "dedupe", "distinct", "remove_duplicates"),
             "Return the distinct numbers in $xs in order of first appearance.", lambda xs, c: list(dict.fromkeys(xs)),
             lambda rng, c: ints(rng, -3, 6, 0, 9), {
                 "loop": "$acc = []\nfor $x in $xs:\n    if $x not in $acc:\n        $acc.append($x)\nreturn $acc",
                 "set": "$i = set()\n$acc = []\nfor $x in $xs:\n    if $x not in $i:\n        $i.add($x)\n        $acc.append($x)\nreturn $acc",
                 "dict": "return list(dict.fromkeys($xs))",
                 "comprehension": "return [$x for $i, $x in enumerate($xs) if $x not in $xs[:$i]]",
             }, (("set", "return list(set($xs))"),
                 ("loop", "$acc = []\nfor $x in $xs:\n    if $x not in $acc:\n        $acc.append($x)\n    return $acc\nreturn $acc"))),
    Template("upper_string", "train", "str", ("shout", "to_upper", "upper", "capitalize_all"),
             "Return $s with every letter in upper case.", lambda s, c: s.upper(), S, {
                 "builtin": "return $s.upper()",
                 "loop": "$acc = ''\nfor $x in $s:\n    $acc += $x.upper()\nreturn $acc",
                 "generator": "return ''.join($x.upper() for $x in $s)",
                 "map": "return ''.join(map(str.upper, $s))",
                 "ord": "return ''.join(chr(ord($x) - 32) if 'a' <= $x <= 'z' else $x for $x in $s)",
             }, (("builtin", "return $s.capitalize()"),
                 ("ord", "return ''.join(chr(ord($x) - 31) for $x in $s)"))),
    Template("remove_char", "train", "str", ("remove_char", "strip_char", "without", "drop_char"),
             "Return $s with every '$c' removed.", lambda s, c: s.replace(c["c"], ""), with_char, {
                 "builtin": "return $s.replace('$c', '')",
                 "loop": "$acc = ''\nfor $x in $s:\n    if $x != '$c':\n        $acc += $x\nreturn $acc",
                 "generator": "return ''.join($x for $x in $s if $x != '$c')",
                 "split": "return ''.join($s.split('$c'))",
             }, (("builtin", "return $s.replace('$c', '', 1)"),
                 ("loop", "$acc = ''\nfor $x in $s:\n    if $x == '$c':\n        $acc += $x\nreturn $acc")), c_letter),
    Template("count_equal", "train", "list", ("count_value", "count_equal", "occurrences_of", "how_many"),
             "Return how many numbers in $xs are equal to $k.", lambda xs, c: xs.count(c["k"]),
             lambda rng, c: ints(rng, 0, 9, 0, 9), {
                 "builtin": "return $xs.count($k)",
                 "loop": "$acc = 0\nfor $x in $xs:\n    if $x == $k:\n        $acc += 1\nreturn $acc",
                 "generator": "return sum(1 for $x in $xs if $x == $k)",
                 "filter": "return len(list(filter(lambda $x: $x == $k, $xs)))",
             }, (("loop", "$acc = 0\nfor $x in $xs:\n    if $x >= $k:\n        $acc += 1\nreturn $acc"),), k_small),
    Template("abs_each", "train", "list", ("absolute", "abs_all", "magnitudes", "abs_each"),
             "Return a list with the absolute value of each number in $xs.", lambda xs, c: [abs(x) for x in xs], L, {
                 "comprehension": "return [abs($x) for $x in $xs]",
                 "loop": "$acc = []\nfor $x in $xs:\n    if $x < 0:\n        $x = -$x\n    $acc.append($x)\nreturn $acc",
                 "map": "return list(map(abs, $xs))",
                 "conditional": "return [-$x if $x < 0 else $x for $x in $xs]",
             }, (("comprehension", "return [-$x for $x in $xs]"),
                 ("loop", "$acc = []\nfor $x in $xs:\n    if $x < 0:\n        $acc.append(-$x)\nreturn $acc"))),
    Template("sum_digits", "train", "int", ("digit_sum", "sum_digits", "add_digits", "digits_total"),
             "Return the sum of the digits of $n.", lambda n, c: sum(int(d) for d in str(n)), lambda rng, c: rng.randint(0, 99999), {
                 "string": "return sum(int($x) for $x in str($n))",
                 "while": "$acc = 0\nwhile $n > 0:\n    $acc += $n % 10\n    $n //= 10\nreturn $acc",
                 "recursion": "if $n < 10:\n    return $n\nreturn $n % 10 + $f($n // 10)",
                 "map": "return sum(map(int, str($n)))",
             }, (("while", "$acc = 0\nwhile $n > 9:\n    $acc += $n % 10\n    $n //= 10\nreturn $acc"),
                 ("string", "return len(str($n))"))),
]

# ---- held-out templates: unseen compositions of the skills above ------------------------

HELDOUT = [
    Template("reverse_list", "heldout", "list", ("reverse_list", "backwards_list", "flip_list", "reversed_copy"),
             "Return $xs reversed.", lambda xs, c: xs[::-1], L, {
                 "slicing": "return $xs[::-1]",
                 "builtin": "return list(reversed($xs))",
                 "loop": "$acc = []\nfor $x in $xs:\n    $acc = [$x] + $acc\nreturn $acc",
                 "recursion": "if not $xs:\n    return []\nreturn $f($xs[1:]) + [$xs[0]]",
             }, (("loop", "$acc = []\nfor $x in $xs:\n    $acc.append($x)\nreturn $acc"),)),
    Template("sum_even", "heldout", "list", ("sum_even", "even_total", "add_evens", "sum_of_evens"),
             "Return the sum of the even numbers in $xs.", lambda xs, c: sum(x for x in xs if x % 2 == 0), L, {
                 "generator": "return sum($x for $x in $xs if $x % 2 == 0)",
                 "loop": "$acc = 0\nfor $x in $xs:\n    if $x % 2 == 0:\n        $acc += $x\nreturn $acc",
                 "filter": "return sum(filter(lambda $x: $x % 2 == 0, $xs))",
                 "recursion": "if not $xs:\n    return 0\nreturn ($xs[0] if $xs[0] % 2 == 0 else 0) + $f($xs[1:])",
             }, (("loop", "$acc = 0\nfor $x in $xs:\n    if $x % 2 == 0:\n        $acc += 1\nreturn $acc"),
                 ("generator", "return sum($x for $x in $xs if $x % 2 == 1)"))),
    Template("sum_greater", "heldout", "list", ("sum_above", "total_greater", "sum_greater", "add_above"),
             "Return the sum of the numbers in $xs that are greater than $k.", lambda xs, c: sum(x for x in xs if x > c["k"]), with_k, {
                 "generator": "return sum($x for $x in $xs if $x > $k)",
                 "loop": "$acc = 0\nfor $x in $xs:\n    if $x > $k:\n        $acc += $x\nreturn $acc",
                 "filter": "return sum(filter(lambda $x: $x > $k, $xs))",
                 "recursion": "if not $xs:\n    return 0\nreturn ($xs[0] if $xs[0] > $k else 0) + $f($xs[1:])",
             }, (("generator", "return sum($x for $x in $xs if $x >= $k)"),
                 ("loop", "$acc = 0\nfor $x in $xs:\n    if $x > $k:\n        $acc += 1\nreturn $acc")), k_small),
    Template("count_positive", "heldout", "list", ("count_positive", "num_positive", "positive_count", "count_pos"),
             "Return how many numbers in $xs are positive.", lambda xs, c: sum(1 for x in xs if x > 0), L, {
                 "loop": "$acc = 0\nfor $x in $xs:\n    if $x > 0:\n        $acc += 1\nreturn $acc",
                 "comprehension": "return len([$x for $x in $xs if $x > 0])",
                 "generator": "return sum(1 for $x in $xs if $x > 0)",
                 "filter": "return len(list(filter(lambda $x: $x > 0, $xs)))",
             }, (("loop", "$acc = 0\nfor $x in $xs:\n    if $x >= 0:\n        $acc += 1\nreturn $acc"),)),
    Template("filter_odd", "heldout", "list", ("odds", "keep_odd", "filter_odd", "only_odd"),
             "Return a list of the odd numbers in $xs, in order.", lambda xs, c: [x for x in xs if x % 2], L, {
                 "comprehension": "return [$x for $x in $xs if $x % 2 == 1]",
                 "loop": "$acc = []\nfor $x in $xs:\n    if $x % 2 != 0:\n        $acc.append($x)\nreturn $acc",
                 "filter": "return list(filter(lambda $x: $x % 2, $xs))",
                 "recursion": "if not $xs:\n    return []\n$acc = $f($xs[1:])\nreturn [$xs[0]] + $acc if $xs[0] % 2 else $acc",
             }, (("comprehension", "return [$x for $x in $xs if $x % 2 == 0]"),)),
    Template("all_even", "heldout", "list", ("all_even", "is_all_even", "every_even", "only_evens"),
             "Return True if every number in $xs is even, else False.", lambda xs, c: all(x % 2 == 0 for x in xs),
             lambda rng, c: [2 * v for v in ints(rng, -4, 6)] if rng.random() < 0.5 else ints(rng), {
                 "builtin": "return all($x % 2 == 0 for $x in $xs)",
                 "loop": "for $x in $xs:\n    if $x % 2 != 0:\n        return False\nreturn True",
                 "comprehension": "return len([$x for $x in $xs if $x % 2 == 0]) == len($xs)",
                 "recursion": "if not $xs:\n    return True\nreturn $xs[0] % 2 == 0 and $f($xs[1:])",
             }, (("builtin", "return any($x % 2 == 0 for $x in $xs)"),)),
    Template("any_greater", "heldout", "list", ("any_above", "has_greater", "exceeds", "some_greater"),
             "Return True if some number in $xs is greater than $k, else False.", lambda xs, c: any(x > c["k"] for x in xs), with_k, {
                 "builtin": "return any($x > $k for $x in $xs)",
                 "loop": "for $x in $xs:\n    if $x > $k:\n        return True\nreturn False",
                 "max": "return bool($xs) and max($xs) > $k",
                 "comprehension": "return len([$x for $x in $xs if $x > $k]) > 0",
             }, (("builtin", "return any($x >= $k for $x in $xs)"),), k_small),
    Template("sum_squares", "heldout", "list", ("sum_squares", "square_total", "sum_of_squares", "energy"),
             "Return the sum of the squares of the numbers in $xs.", lambda xs, c: sum(x * x for x in xs), L, {
                 "generator": "return sum($x * $x for $x in $xs)",
                 "loop": "$acc = 0\nfor $x in $xs:\n    $acc += $x ** 2\nreturn $acc",
                 "map": "return sum(map(lambda $x: $x * $x, $xs))",
                 "recursion": "if not $xs:\n    return 0\nreturn $xs[0] ** 2 + $f($xs[1:])",
             }, (("generator", "return sum($x * 2 for $x in $xs)"),
                 ("generator", "return sum($xs) ** 2"))),
    Template("square_even", "heldout", "list", ("square_evens", "even_squares", "squares_of_even", "square_even"),
             "Return a list with the square of each even number in $xs, in order.", lambda xs, c: [x * x for x in xs if x % 2 == 0], L, {
                 "comprehension": "return [$x * $x for $x in $xs if $x % 2 == 0]",
                 "loop": "$acc = []\nfor $x in $xs:\n    if $x % 2 == 0:\n        $acc.append($x ** 2)\nreturn $acc",
                 "map_filter": "return list(map(lambda $x: $x * $x, filter(lambda $x: $x % 2 == 0, $xs)))",
             }, (("comprehension", "return [$x * $x for $x in $xs]"),
                 ("comprehension", "return [$x for $x in $xs if $x % 2 == 0]"))),
    Template("product_positive", "heldout", "list", ("product_positive", "multiply_positive", "positive_product", "prod_pos"),
             "Return the product of the positive numbers in $xs.", lambda xs, c: _prod([x for x in xs if x > 0]),
             lambda rng, c: ints(rng, -4, 6, 0, 6), {
                 "loop": "$acc = 1\nfor $x in $xs:\n    if $x > 0:\n        $acc *= $x\nreturn $acc",
                 "builtin": "import math\nreturn math.prod($x for $x in $xs if $x > 0)",
                 "reduce": "from functools import reduce\nreturn reduce(lambda a, b: a * b, [$x for $x in $xs if $x > 0], 1)",
                 "recursion": "if not $xs:\n    return 1\nreturn ($xs[0] if $xs[0] > 0 else 1) * $f($xs[1:])",
             }, (("loop", "$acc = 1\nfor $x in $xs:\n    if $x >= 0:\n        $acc *= $x\nreturn $acc"),)),
    Template("max_even", "heldout", "list", ("max_even", "largest_even", "biggest_even", "top_even"),
             "Return the largest even number in $xs.", lambda xs, c: max(x for x in xs if x % 2 == 0), _has_even, {
                 "builtin": "return max($x for $x in $xs if $x % 2 == 0)",
                 "loop": "$acc = None\nfor $x in $xs:\n    if $x % 2 == 0 and ($acc is None or $x > $acc):\n        $acc = $x\nreturn $acc",
                 "sorting": "return sorted($x for $x in $xs if $x % 2 == 0)[-1]",
             }, (("builtin", "return max($xs)"),
                 ("loop", "$acc = 0\nfor $x in $xs:\n    if $x % 2 == 0 and $x > $acc:\n        $acc = $x\nreturn $acc"))),
    Template("remove_vowels", "heldout", "str", ("remove_vowels", "strip_vowels", "consonants", "devowel"),
             "Return $s with every vowel (a, e, i, o, u) removed.", lambda s, c: "".join(ch for ch in s if ch not in VOWELS), S, {
                 "generator": "return ''.join($x for $x in $s if $x not in 'aeiou')",
                 "loop": "$acc = ''\nfor $x in $s:\n    if $x not in 'aeiou':\n        $acc += $x\nreturn $acc",
                 "replace": "for $x in 'aeiou':\n    $s = $s.replace($x, '')\nreturn $s",
                 "regex": "import re\nreturn re.sub('[aeiou]', '', $s)",
             }, (("generator", "return ''.join($x for $x in $s if $x in 'aeiou')"),)),
    Template("count_less", "heldout", "list", ("count_below", "count_less", "num_less", "how_many_below"),
             "Return how many numbers in $xs are less than $k.", lambda xs, c: sum(1 for x in xs if x < c["k"]), with_k, {
                 "loop": "$acc = 0\nfor $x in $xs:\n    if $x < $k:\n        $acc += 1\nreturn $acc",
                 "comprehension": "return len([$x for $x in $xs if $x < $k])",
                 "generator": "return sum(1 for $x in $xs if $x < $k)",
                 "sorting": "import bisect\nreturn bisect.bisect_left(sorted($xs), $k)",
             }, (("loop", "$acc = 0\nfor $x in $xs:\n    if $x > $k:\n        $acc += 1\nreturn $acc"),
                 ("generator", "return sum(1 for $x in $xs if $x <= $k)")), k_small),
    Template("any_odd", "heldout", "list", ("any_odd", "has_odd", "contains_odd", "some_odd"),
             "Return True if some number in $xs is odd, else False.", lambda xs, c: any(x % 2 for x in xs),
             lambda rng, c: [2 * v for v in ints(rng, -4, 6)] if rng.random() < 0.5 else ints(rng), {
                 "builtin": "return any($x % 2 == 1 for $x in $xs)",
                 "loop": "for $x in $xs:\n    if $x % 2 != 0:\n        return True\nreturn False",
                 "comprehension": "return len([$x for $x in $xs if $x % 2 == 1]) > 0",
                 "recursion": "if not $xs:\n    return False\nreturn $xs[0] % 2 == 1 or $f($xs[1:])",
             }, (("builtin", "return all($x % 2 == 1 for $x in $xs)"),
                 ("loop", "for $x in $xs:\n    if $x % 2 != 0:\n        return True\n    return False\nreturn False"))),
]

TEMPLATES_BY_NAME = {t.name: t for t in TRAIN + HELDOUT}
