"""The readable source of `leetcode.jsonl`: hand-written, hand-labelled strategy groups.

Twelve leetcode-style problems, eight responses each, written to look like sampled rollouts:
several strategies per problem, the same strategy written with different names, comments and
layout, buggy-but-genuine attempts labelled with the strategy they attempt, and degenerate
responses (prose, gibberish, truncated code, empty bodies) labelled 100. Labels are per group:
ids only say "same strategy" within one problem.

Each response is (label, strategy name, correct?, code). Running this file checks every "correct"
flag against the problem's tests (trusted, hand-written code) and rewrites leetcode.jsonl:

    .venv/bin/python data/calibration/build_leetcode.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from setrl.problem import Problem  # noqa: E402

D = 100  # degenerate
OUT = Path(__file__).with_name("leetcode.jsonl")

LISTNODE = '''class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next


def build(values):
    head = None
    for v in reversed(values):
        head = ListNode(v, head)
    return head


def values(head, limit=100):
    out = []
    while head is not None and len(out) < limit:
        out.append(head.val)
        head = head.next
    return out
'''

PROBLEMS = [
    dict(
        title="Two Sum", entry_point="two_sum",
        prompt="Given an array of integers nums and an integer target, return the indices of the two numbers "
               "that add up to target, in increasing order. Exactly one solution exists; you may not use the "
               "same element twice.\n\ndef two_sum(nums: list[int], target: int) -> list[int]:\n",
        tests="def check(f):\n    assert f([2, 7, 11, 15], 9) == [0, 1]\n    assert f([3, 2, 4], 6) == [1, 2]\n"
              "    assert f([3, 3], 6) == [0, 1]\n    assert f([1, 5, 3, 8], 11) == [2, 3]\n",
        responses=[
            (0, "brute force", True, '''def two_sum(nums, target):
    for i in range(len(nums)):
        for j in range(i + 1, len(nums)):
            if nums[i] + nums[j] == target:
                return [i, j]
'''),
            (1, "hash map", True, '''def two_sum(nums, target):
    seen = {}
    for i, x in enumerate(nums):
        if target - x in seen:
            return [seen[target - x], i]
        seen[x] = i
'''),
            (0, "brute force", False, '''def two_sum(nums, target):
    n = len(nums)
    # check every pair
    for a in range(n):
        for b in range(a, n):
            if nums[a] + nums[b] == target:
                return [a, b]
    return []
'''),
            (2, "sort + two pointers", True, '''def two_sum(nums, target):
    order = sorted(range(len(nums)), key=lambda k: nums[k])
    lo, hi = 0, len(nums) - 1
    while lo < hi:
        s = nums[order[lo]] + nums[order[hi]]
        if s == target:
            return sorted([order[lo], order[hi]])
        if s < target:
            lo += 1
        else:
            hi -= 1
'''),
            (1, "hash map", True, '''def two_sum(nums: list[int], target: int) -> list[int]:
    # complement -> index of the number that needs it
    index_of = dict()
    for pos in range(len(nums)):
        want = target - nums[pos]
        if want in index_of:
            return [index_of[want], pos]
        index_of[nums[pos]] = pos
    return [-1, -1]
'''),
            (D, "degenerate", False, "To solve this, iterate over the array and use a hash map to remember the "
                                     "complement of each number; when the current number is a stored complement, "
                                     "return both indices."),
            (1, "hash map", False, '''def two_sum(nums, target):
    lookup = {}
    for i, v in enumerate(nums):
        lookup[v] = i
        if target - v in lookup:
            return [lookup[target - v], i]
'''),
            (2, "sort + two pointers", False, '''def two_sum(nums, target):
    arr = sorted(nums)
    i, j = 0, len(arr) - 1
    while i < j:
        total = arr[i] + arr[j]
        if total == target:
            return [i, j]
        elif total < target:
            i += 1
        else:
            j -= 1
'''),
        ],
    ),
    dict(
        title="Valid Palindrome", entry_point="is_palindrome",
        prompt="A phrase is a palindrome if, after converting all uppercase letters to lowercase and removing all "
               "non-alphanumeric characters, it reads the same forward and backward. Return True if s is a "
               "palindrome.\n\ndef is_palindrome(s: str) -> bool:\n",
        tests="def check(f):\n    assert f('A man, a plan, a canal: Panama') is True\n    assert f('race a car') is False\n"
              "    assert f(' ') is True\n    assert f('0P') is False\n    assert f('No lemon, no melon') is True\n",
        responses=[
            (0, "clean + reverse compare", True, '''def is_palindrome(s):
    t = "".join(c.lower() for c in s if c.isalnum())
    return t == t[::-1]
'''),
            (1, "two pointers", True, '''def is_palindrome(s: str) -> bool:
    i, j = 0, len(s) - 1
    while i < j:
        if not s[i].isalnum():
            i += 1
        elif not s[j].isalnum():
            j -= 1
        else:
            if s[i].lower() != s[j].lower():
                return False
            i += 1
            j -= 1
    return True
'''),
            (2, "recursion", True, '''def is_palindrome(s):
    cleaned = [ch.lower() for ch in s if ch.isalnum()]

    def same(lo, hi):
        if lo >= hi:
            return True
        return cleaned[lo] == cleaned[hi] and same(lo + 1, hi - 1)

    return same(0, len(cleaned) - 1)
'''),
            (0, "clean + reverse compare", True, '''def is_palindrome(s):
    chars = [c.lower() for c in s if c.isalnum()]
    return chars == list(reversed(chars))
'''),
            (1, "two pointers", False, '''def is_palindrome(s):
    left, right = 0, len(s) - 1
    while left < right:
        while left < right and not s[left].isalnum():
            left += 1
        while left < right and not s[right].isalnum():
            right -= 1
        if s[left] != s[right]:  # compares case-sensitively
            return False
        left += 1
        right -= 1
    return True
'''),
            (D, "degenerate", False, '''def is_palindrome(s):
    i, j = 0, len(s) - 1
    while i < j and'''),
            (2, "recursion", False, '''def is_palindrome(s):
    s = s.lower()
    if len(s) <= 1:
        return True
    if s[0] != s[-1]:
        return False
    return is_palindrome(s[1:-1])
'''),
            (0, "clean + reverse compare", True, '''import re

def is_palindrome(s):
    t = re.sub(r"[^a-z0-9]", "", s.lower())
    return t == t[::-1]
'''),
        ],
    ),
    dict(
        title="Maximum Subarray", entry_point="max_subarray",
        prompt="Given an integer array nums (at least one element), find the contiguous subarray with the largest "
               "sum and return its sum.\n\ndef max_subarray(nums: list[int]) -> int:\n",
        tests="def check(f):\n    assert f([-2, 1, -3, 4, -1, 2, 1, -5, 4]) == 6\n    assert f([1]) == 1\n"
              "    assert f([5, 4, -1, 7, 8]) == 23\n    assert f([-3, -1, -2]) == -1\n",
        responses=[
            (0, "kadane", True, '''def max_subarray(nums):
    best = cur = nums[0]
    for x in nums[1:]:
        cur = max(x, cur + x)
        best = max(best, cur)
    return best
'''),
            (0, "kadane", True, '''def max_subarray(nums: list[int]) -> int:
    running, answer = 0, float("-inf")
    for value in nums:
        running += value
        if running > answer:
            answer = running
        if running < 0:
            running = 0  # a negative prefix never helps
    return answer
'''),
            (1, "brute force", True, '''def max_subarray(nums):
    best = nums[0]
    for i in range(len(nums)):
        total = 0
        for j in range(i, len(nums)):
            total += nums[j]
            best = max(best, total)
    return best
'''),
            (1, "brute force", False, '''def max_subarray(nums):
    best = 0
    n = len(nums)
    for start in range(n):
        s = 0
        for end in range(start, n):
            s += nums[end]
            if s > best:
                best = s
    return best
'''),
            (2, "divide and conquer", True, '''def max_subarray(nums):
    def solve(lo, hi):
        if lo == hi:
            return nums[lo]
        mid = (lo + hi) // 2
        left_best = right_best = float("-inf")
        s = 0
        for i in range(mid, lo - 1, -1):
            s += nums[i]
            left_best = max(left_best, s)
        s = 0
        for i in range(mid + 1, hi + 1):
            s += nums[i]
            right_best = max(right_best, s)
        return max(solve(lo, mid), solve(mid + 1, hi), left_best + right_best)
    return solve(0, len(nums) - 1)
'''),
            (3, "prefix sums", True, '''def max_subarray(nums):
    prefix = 0
    lowest = 0
    best = nums[0]
    for x in nums:
        prefix += x
        best = max(best, prefix - lowest)
        lowest = min(lowest, prefix)
    return best
'''),
            (0, "kadane", False, '''def max_subarray(nums):
    cur = best = 0
    for n in nums:
        cur = max(0, cur + n)
        best = max(best, cur)
    return best
'''),
            (D, "degenerate", False, '''def max_subarray(nums):
    pass
'''),
        ],
    ),
    dict(
        title="Valid Parentheses", entry_point="is_valid",
        prompt="Given a string s containing just the characters '(', ')', '{', '}', '[' and ']', determine if the "
               "input string is valid: open brackets are closed by the same type of bracket and in the correct "
               "order.\n\ndef is_valid(s: str) -> bool:\n",
        tests="def check(f):\n    assert f('()') is True\n    assert f('()[]{}') is True\n    assert f('(]') is False\n"
              "    assert f('([)]') is False\n    assert f('{[]}') is True\n    assert f('((') is False\n",
        responses=[
            (0, "stack", True, '''def is_valid(s):
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for c in s:
        if c in pairs:
            if not stack or stack.pop() != pairs[c]:
                return False
        else:
            stack.append(c)
    return not stack
'''),
            (0, "stack", True, '''def is_valid(s: str) -> bool:
    st = []
    for ch in s:
        if ch in "([{":
            st.append(ch)
        elif not st:
            return False
        else:
            top = st.pop()
            if (top, ch) not in (("(", ")"), ("[", "]"), ("{", "}")):
                return False
    return len(st) == 0
'''),
            (1, "repeated replace", True, '''def is_valid(s):
    while True:
        t = s.replace("()", "").replace("[]", "").replace("{}", "")
        if t == s:
            return s == ""
        s = t
'''),
            (1, "repeated replace", True, '''def is_valid(s):
    # strip innermost pairs until nothing changes
    prev = None
    while prev != s:
        prev = s
        for pair in ("()", "[]", "{}"):
            s = s.replace(pair, "")
    return not s
'''),
            (2, "counting", False, '''def is_valid(s):
    a = b = c = 0
    for ch in s:
        if ch == "(": a += 1
        elif ch == ")": a -= 1
        elif ch == "[": b += 1
        elif ch == "]": b -= 1
        elif ch == "{": c += 1
        else: c -= 1
        if a < 0 or b < 0 or c < 0:
            return False
    return a == b == c == 0
'''),
            (0, "stack", False, '''def is_valid(s):
    stack = []
    match = {")": "(", "]": "[", "}": "{"}
    for c in s:
        if c in match:
            if stack and stack[-1] == match[c]:
                stack.pop()
            else:
                return False
        else:
            stack.append(c)
    return True
'''),
            (D, "degenerate", False, "))(( stack stack pop pop push )) valid valid valid [[ ]] {{"),
            (2, "counting", False, '''def is_valid(s):
    depth = {"(": 0, "[": 0, "{": 0}
    closer = {")": "(", "]": "[", "}": "{"}
    for ch in s:
        if ch in depth:
            depth[ch] += 1
        else:
            depth[closer[ch]] -= 1
            if depth[closer[ch]] < 0:
                return False
    return all(v == 0 for v in depth.values())
'''),
        ],
    ),
    dict(
        title="Climbing Stairs", entry_point="climb_stairs",
        prompt="You are climbing a staircase with n steps (1 <= n <= 45). Each time you can climb 1 or 2 steps. "
               "In how many distinct ways can you climb to the top?\n\ndef climb_stairs(n: int) -> int:\n",
        tests="def check(f):\n    assert f(1) == 1\n    assert f(2) == 2\n    assert f(3) == 3\n    assert f(5) == 8\n"
              "    assert f(10) == 89\n",
        responses=[
            (0, "bottom-up dp", True, '''def climb_stairs(n):
    a, b = 1, 1
    for _ in range(n - 1):
        a, b = b, a + b
    return b
'''),
            (0, "bottom-up dp", True, '''def climb_stairs(n: int) -> int:
    if n <= 2:
        return n
    dp = [0] * (n + 1)
    dp[1], dp[2] = 1, 2
    for i in range(3, n + 1):
        dp[i] = dp[i - 1] + dp[i - 2]
    return dp[n]
'''),
            (1, "memoised recursion", True, '''from functools import lru_cache

def climb_stairs(n):
    @lru_cache(maxsize=None)
    def ways(k):
        if k <= 1:
            return 1
        return ways(k - 1) + ways(k - 2)
    return ways(n)
'''),
            (2, "plain recursion", True, '''def climb_stairs(n):
    if n <= 2:
        return n
    return climb_stairs(n - 1) + climb_stairs(n - 2)
'''),
            (1, "memoised recursion", True, '''def climb_stairs(n, memo=None):
    memo = {} if memo is None else memo
    if n <= 2:
        return n
    if n not in memo:
        memo[n] = climb_stairs(n - 1, memo) + climb_stairs(n - 2, memo)
    return memo[n]
'''),
            (0, "bottom-up dp", False, '''def climb_stairs(n):
    prev, curr = 1, 2
    for i in range(n):
        prev, curr = curr, prev + curr
    return prev
'''),
            (0, "bottom-up dp", False, '''def climb_stairs(n):
    ways = [1] * n
    for step in range(2, n):
        ways[step] = ways[step - 1] + ways[step - 2]
    return ways[-1]
'''),
            (D, "degenerate", False, "The number of ways is the (n+1)-th Fibonacci number, so the answer "
                                     "follows directly from the recurrence f(n) = f(n-1) + f(n-2)."),
        ],
    ),
    dict(
        title="Number of 1 Bits", entry_point="hamming_weight",
        prompt="Given a non-negative integer n (below 2**32), return the number of set bits in its binary "
               "representation.\n\ndef hamming_weight(n: int) -> int:\n",
        tests="def check(f):\n    assert f(11) == 3\n    assert f(128) == 1\n    assert f(2147483645) == 30\n"
              "    assert f(0) == 0\n    assert f(1) == 1\n",
        responses=[
            (0, "binary string count", True, '''def hamming_weight(n):
    return bin(n).count("1")
'''),
            (0, "binary string count", True, '''def hamming_weight(n: int) -> int:
    # format as base 2 and count the ones
    return format(n, "b").count("1")
'''),
            (1, "shift and test", True, '''def hamming_weight(n):
    count = 0
    while n:
        count += n & 1
        n >>= 1
    return count
'''),
            (2, "clear lowest set bit", True, '''def hamming_weight(n):
    bits = 0
    while n:
        n &= n - 1  # drops the lowest set bit
        bits += 1
    return bits
'''),
            (1, "shift and test", True, '''def hamming_weight(n):
    total = 0
    for i in range(32):
        if (n >> i) & 1:
            total += 1
    return total
'''),
            (1, "shift and test", False, '''def hamming_weight(n):
    c = 0
    while n > 1:
        c += n % 2
        n //= 2
    return c
'''),
            (0, "binary string count", True, '''def hamming_weight(n):
    return sum(1 for ch in bin(n)[2:] if ch == "1")
'''),
            (D, "degenerate", False, ""),
        ],
    ),
    dict(
        title="Reverse Linked List", entry_point="reverse_list",
        prompt="Given the head of a singly linked list (ListNode with fields val and next), reverse the list and "
               "return the new head.\n\ndef reverse_list(head: ListNode | None) -> ListNode | None:\n",
        prelude=LISTNODE,
        tests="def check(f):\n    assert values(f(build([1, 2, 3, 4, 5]))) == [5, 4, 3, 2, 1]\n"
              "    assert values(f(build([1, 2]))) == [2, 1]\n    assert f(None) is None\n",
        responses=[
            (0, "iterative relink", True, '''def reverse_list(head):
    prev = None
    while head:
        nxt = head.next
        head.next = prev
        prev = head
        head = nxt
    return prev
'''),
            (0, "iterative relink", True, '''def reverse_list(head):
    new_head, node = None, head
    while node is not None:
        node.next, new_head, node = new_head, node, node.next
    return new_head
'''),
            (1, "recursion", True, '''def reverse_list(head):
    if head is None or head.next is None:
        return head
    rest = reverse_list(head.next)
    head.next.next = head
    head.next = None
    return rest
'''),
            (2, "collect and rebuild", True, '''def reverse_list(head):
    vals = []
    while head:
        vals.append(head.val)
        head = head.next
    out = None
    for v in vals:
        out = ListNode(v, out)
    return out
'''),
            (0, "iterative relink", False, '''def reverse_list(head):
    prev = None
    curr = head
    while curr:
        curr.next = prev
        prev = curr
        curr = curr.next
    return prev
'''),
            (1, "recursion", False, '''def reverse_list(head):
    if not head or not head.next:
        return head
    new_head = reverse_list(head.next)
    head.next.next = head
    return new_head
'''),
            (D, "degenerate", False, "reverse reverse reverse the the list list node node next next prev prev"),
            (2, "collect and rebuild", True, '''def reverse_list(head):
    stack = []
    node = head
    while node:
        stack.append(node)
        node = node.next
    if not stack:
        return None
    new_head = stack.pop()
    cur = new_head
    while stack:
        cur.next = stack.pop()
        cur = cur.next
    cur.next = None
    return new_head
'''),
        ],
    ),
    dict(
        title="Contains Duplicate", entry_point="contains_duplicate",
        prompt="Given an integer array nums, return True if any value appears at least twice, and False if every "
               "element is distinct.\n\ndef contains_duplicate(nums: list[int]) -> bool:\n",
        tests="def check(f):\n    assert f([1, 2, 3, 1]) is True\n    assert f([1, 2, 3, 4]) is False\n"
              "    assert f([1, 1, 1, 3, 3, 4, 3, 2, 4, 2]) is True\n    assert f([]) is False\n    assert f([3, 1, 3]) is True\n",
        responses=[
            (0, "set size", True, '''def contains_duplicate(nums):
    return len(set(nums)) != len(nums)
'''),
            (1, "sort + adjacent scan", True, '''def contains_duplicate(nums):
    nums = sorted(nums)
    for i in range(1, len(nums)):
        if nums[i] == nums[i - 1]:
            return True
    return False
'''),
            (2, "hash set scan", True, '''def contains_duplicate(nums):
    seen = set()
    for x in nums:
        if x in seen:
            return True
        seen.add(x)
    return False
'''),
            (3, "brute force", True, '''def contains_duplicate(nums):
    for i in range(len(nums)):
        for j in range(i + 1, len(nums)):
            if nums[i] == nums[j]:
                return True
    return False
'''),
            (4, "count occurrences", True, '''from collections import Counter

def contains_duplicate(nums):
    return any(c > 1 for c in Counter(nums).values())
'''),
            (1, "sort + adjacent scan", False, '''def contains_duplicate(nums):
    # neighbours must differ
    for k in range(len(nums) - 1):
        if nums[k] == nums[k + 1]:
            return True
    return False
'''),
            (0, "set size", False, '''def contains_duplicate(nums: list[int]) -> bool:
    return len(nums) == len(set(nums))
'''),
            (D, "degenerate", False, "```python\n# TODO: implement\n```"),
        ],
    ),
    dict(
        title="Fizz Buzz", entry_point="fizz_buzz",
        prompt="Given an integer n, return a list of strings answer (1-indexed) where answer[i] is 'FizzBuzz' if i "
               "is divisible by 3 and 5, 'Fizz' if divisible by 3, 'Buzz' if divisible by 5, and str(i) otherwise."
               "\n\ndef fizz_buzz(n: int) -> list[str]:\n",
        tests="def check(f):\n    assert f(3) == ['1', '2', 'Fizz']\n    assert f(5) == ['1', '2', 'Fizz', '4', 'Buzz']\n"
              "    assert f(15)[-1] == 'FizzBuzz'\n    assert f(1) == ['1']\n",
        responses=[
            (0, "if/elif chain", True, '''def fizz_buzz(n):
    out = []
    for i in range(1, n + 1):
        if i % 15 == 0:
            out.append("FizzBuzz")
        elif i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        else:
            out.append(str(i))
    return out
'''),
            (1, "string concatenation", True, '''def fizz_buzz(n):
    res = []
    for k in range(1, n + 1):
        word = ""
        if k % 3 == 0:
            word += "Fizz"
        if k % 5 == 0:
            word += "Buzz"
        res.append(word or str(k))
    return res
'''),
            (0, "if/elif chain", True, '''def fizz_buzz(n):
    return ["FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else str(i)
            for i in range(1, n + 1)]
'''),
            (1, "string concatenation", True, '''def fizz_buzz(n):
    return ["Fizz" * (i % 3 == 0) + "Buzz" * (i % 5 == 0) or str(i) for i in range(1, n + 1)]
'''),
            (2, "recursion", True, '''def fizz_buzz(n):
    if n == 0:
        return []
    word = "FizzBuzz" if n % 15 == 0 else "Fizz" if n % 3 == 0 else "Buzz" if n % 5 == 0 else str(n)
    return fizz_buzz(n - 1) + [word]
'''),
            (0, "if/elif chain", True, '''def fizz_buzz(n):
    i, answer = 1, []
    while i <= n:
        if i % 3 == 0 and i % 5 == 0:
            answer.append("FizzBuzz")
        elif i % 3 == 0:
            answer.append("Fizz")
        elif i % 5 == 0:
            answer.append("Buzz")
        else:
            answer.append(str(i))
        i += 1
    return answer
'''),
            (0, "if/elif chain", False, '''def fizz_buzz(n):
    result = []
    for i in range(1, n + 1):
        if i % 3 == 0:
            result.append("Fizz")
        elif i % 5 == 0:
            result.append("Buzz")
        elif i % 15 == 0:
            result.append("FizzBuzz")
        else:
            result.append(str(i))
    return result
'''),
            (D, "degenerate", False, "Sorry, I can't help with that."),
        ],
    ),
    dict(
        title="Merge Intervals", entry_point="merge",
        prompt="Given a list of intervals [start, end], merge all overlapping intervals (touching intervals "
               "overlap) and return the merged intervals sorted by start.\n\n"
               "def merge(intervals: list[list[int]]) -> list[list[int]]:\n",
        tests="def check(f):\n    assert f([[1, 3], [2, 6], [8, 10], [15, 18]]) == [[1, 6], [8, 10], [15, 18]]\n"
              "    assert f([[1, 4], [4, 5]]) == [[1, 5]]\n    assert f([[1, 4], [2, 3]]) == [[1, 4]]\n"
              "    assert f([[5, 6], [1, 2]]) == [[1, 2], [5, 6]]\n",
        responses=[
            (0, "sort + linear merge", True, '''def merge(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out
'''),
            (0, "sort + linear merge", True, '''def merge(intervals: list[list[int]]) -> list[list[int]]:
    intervals.sort(key=lambda iv: iv[0])
    merged = [list(intervals[0])]
    for start, end in intervals[1:]:
        last = merged[-1]
        if start > last[1]:
            merged.append([start, end])
        else:
            last[1] = max(last[1], end)
    return merged
'''),
            (1, "repeated pairwise merging", True, '''def merge(intervals):
    ivs = [list(x) for x in intervals]
    changed = True
    while changed:
        changed = False
        for i in range(len(ivs)):
            for j in range(i + 1, len(ivs)):
                a, b = ivs[i], ivs[j]
                if a[0] <= b[1] and b[0] <= a[1]:
                    ivs[i] = [min(a[0], b[0]), max(a[1], b[1])]
                    del ivs[j]
                    changed = True
                    break
            if changed:
                break
    return sorted(ivs)
'''),
            (2, "sweep over endpoints", True, '''def merge(intervals):
    events = sorted([(s, 0) for s, _ in intervals] + [(e, 1) for _, e in intervals])
    out, depth, start = [], 0, None
    for x, kind in events:
        if kind == 0:
            if depth == 0:
                start = x
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                out.append([start, x])
    return out
'''),
            (0, "sort + linear merge", False, '''def merge(intervals):
    intervals = sorted(intervals)
    res = [intervals[0]]
    for cur in intervals[1:]:
        if cur[0] <= res[-1][1]:
            res[-1][1] = cur[1]
        else:
            res.append(cur)
    return res
'''),
            (D, "degenerate", False, '''def merge(intervals):
    intervals.sort(key=lambda x: x[0]
    out = []
    for'''),
            (1, "repeated pairwise merging", False, '''def merge(intervals):
    result = []
    for a in intervals:
        merged = False
        for b in result:
            if a[0] <= b[1] and b[0] <= a[1]:
                b[0], b[1] = min(a[0], b[0]), max(a[1], b[1])
                merged = True
        if not merged:
            result.append(list(a))
    return result
'''),
            (0, "sort + linear merge", True, '''def merge(intervals):
    intervals = sorted(intervals)
    merged, i = [], 0
    while i < len(intervals):
        lo, hi = intervals[i]
        while i + 1 < len(intervals) and intervals[i + 1][0] <= hi:
            i += 1
            hi = max(hi, intervals[i][1])
        merged.append([lo, hi])
        i += 1
    return merged
'''),
        ],
    ),
    dict(
        title="Valid Anagram", entry_point="is_anagram",
        prompt="Given two lowercase strings s and t, return True if t is an anagram of s.\n\n"
               "def is_anagram(s: str, t: str) -> bool:\n",
        tests="def check(f):\n    assert f('anagram', 'nagaram') is True\n    assert f('rat', 'car') is False\n"
              "    assert f('aacc', 'ccac') is False\n    assert f('a', 'ab') is False\n    assert f('', '') is True\n",
        responses=[
            (0, "sort and compare", True, '''def is_anagram(s, t):
    return sorted(s) == sorted(t)
'''),
            (1, "counter compare", True, '''from collections import Counter

def is_anagram(s, t):
    return Counter(s) == Counter(t)
'''),
            (2, "manual counting", True, '''def is_anagram(s, t):
    if len(s) != len(t):
        return False
    counts = [0] * 26
    for a, b in zip(s, t):
        counts[ord(a) - 97] += 1
        counts[ord(b) - 97] -= 1
    return all(c == 0 for c in counts)
'''),
            (2, "manual counting", True, '''def is_anagram(s: str, t: str) -> bool:
    freq = {}
    for ch in s:
        freq[ch] = freq.get(ch, 0) + 1
    for ch in t:
        freq[ch] = freq.get(ch, 0) - 1
    return all(v == 0 for v in freq.values())
'''),
            (3, "set compare", False, '''def is_anagram(s, t):
    return set(s) == set(t)
'''),
            (0, "sort and compare", False, '''def is_anagram(s, t):
    return sorted(s) == list(t)
'''),
            (1, "counter compare", False, '''import collections

def is_anagram(s, t):
    return not (collections.Counter(s) - collections.Counter(t))
'''),
            (D, "degenerate", False, "anagram anagram anagram anagram anagram anagram"),
        ],
    ),
    dict(
        title="Binary Search", entry_point="search",
        prompt="Given a sorted array of distinct integers nums and a target, return the index of target in nums, "
               "or -1 if it is absent. Aim for O(log n).\n\ndef search(nums: list[int], target: int) -> int:\n",
        tests="def check(f):\n    assert f([-1, 0, 3, 5, 9, 12], 9) == 4\n    assert f([-1, 0, 3, 5, 9, 12], 2) == -1\n"
              "    assert f([5], 5) == 0\n    assert f([], 1) == -1\n    assert f([1, 3], 3) == 1\n",
        responses=[
            (0, "iterative binary search", True, '''def search(nums, target):
    lo, hi = 0, len(nums) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if nums[mid] == target:
            return mid
        if nums[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1
'''),
            (1, "recursive binary search", True, '''def search(nums, target):
    def go(lo, hi):
        if lo > hi:
            return -1
        mid = lo + (hi - lo) // 2
        if nums[mid] == target:
            return mid
        return go(mid + 1, hi) if nums[mid] < target else go(lo, mid - 1)
    return go(0, len(nums) - 1)
'''),
            (2, "bisect module", True, '''import bisect

def search(nums, target):
    i = bisect.bisect_left(nums, target)
    return i if i < len(nums) and nums[i] == target else -1
'''),
            (3, "linear scan", True, '''def search(nums, target):
    for i, x in enumerate(nums):
        if x == target:
            return i
    return -1
'''),
            (3, "linear scan", True, '''def search(nums, target):
    return nums.index(target) if target in nums else -1
'''),
            (0, "iterative binary search", False, '''def search(nums, target):
    left, right = 0, len(nums) - 1
    while left < right:
        middle = (left + right) // 2
        if nums[middle] == target:
            return middle
        elif nums[middle] < target:
            left = middle + 1
        else:
            right = middle - 1
    return -1
'''),
            (1, "recursive binary search", False, '''def search(nums, target, lo=0, hi=None):
    if hi is None:
        hi = len(nums) - 1
    if lo > hi:
        return -1
    mid = (lo + hi) // 2
    if nums[mid] == target:
        return mid
    if nums[mid] < target:
        return search(nums, target, mid, hi)
    return search(nums, target, lo, mid)
'''),
            (D, "degenerate", False, '''def search(nums, target):
    ...
'''),
        ],
    ),
]


def unsafe_check(problem: Problem, code: str) -> bool:
    """Run trusted, hand-written code against the problem's check(): only for this file's own labels."""
    env: dict = {}
    try:
        exec(problem.prelude + "\n" + code + "\n" + problem.tests, env)
        env["check"](env[problem.entry_point])
        return True
    except BaseException:  # a wrong answer, a crash or RecursionError: all count as "not correct"
        return False


def build() -> list[dict]:
    groups = []
    sys.setrecursionlimit(200)
    for spec in PROBLEMS:
        problem = Problem(source="leetcode", title=spec["title"], prompt=spec["prompt"], entry_point=spec["entry_point"],
                          test_style="check", tests=spec["tests"], prelude=spec.get("prelude", ""),
                          meta={"calibration": "hand-labelled"})
        labels, names, correct, responses = zip(*spec["responses"])
        for label, code, ok in zip(labels, responses, correct):
            got = label != D and unsafe_check(problem, code)
            if got != ok:
                raise SystemExit(f"{spec['title']}: response labelled correct={ok} but check() says {got}:\n{code}")
        slug = spec["title"].lower().replace(" ", "-")
        groups.append({"id": f"leetcode/{slug}", "problem": problem.to_dict(), "responses": list(responses),
                       "labels": list(labels), "strategies": list(names), "correct": list(correct)})
    return groups


if __name__ == "__main__":
    rows = build()
    OUT.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"wrote {len(rows)} groups, {sum(len(r['responses']) for r in rows)} responses to {OUT}")
