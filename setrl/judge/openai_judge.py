"""The LLM judge: the whole group in one chat-completions request through the official `openai` client.

Works against any OpenAI-compatible endpoint (the OpenAI API, a `vllm serve` Qwen3-4B-Instruct...).
Prompts are versioned files `prompts/<version>.md`: the system prompt (instructions and few-shot
examples), then a `<!-- user -->` line, then the user template with {{problem}}, {{responses}},
{{n}}, {{keys}} and {{degenerate_id}} placeholders.

The answer must be JSON with exactly the keys "1".."N", each {"chain_of_thought": str,
"cluster_id": int}. Anything else is malformed and retried; a malformed last attempt is a failed
Clustering. Transient errors (429, 408/409, 5xx, timeouts, refused connections) are retried with
exponential backoff and jitter; when they outlast the retries `cluster` raises JudgeTransientError.
Every request becomes a `calls` record (the service writes them to `judge_calls`).
"""

from __future__ import annotations

import json
import os
import random
import re
import time
import uuid
from functools import lru_cache
from pathlib import Path

import openai

from setrl.config import JudgeSpec
from setrl.judge.base import DEGENERATE, Clustering, Judge, JudgeError, JudgeTransientError
from setrl.problem import Problem

PROMPTS = Path(__file__).with_name("prompts")
USER_MARKER = "<!-- user -->"
TRANSIENT_STATUS = {408, 409, 429}
_FENCED_JSON = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


class MalformedAnswer(ValueError):
    """The model answered, but not with exactly the keys 1..N and integer cluster ids."""


@lru_cache(maxsize=None)
def load_prompt(version: str) -> tuple[str, str]:
    """(system prompt, user template) of prompts/<version>.md."""
    path = PROMPTS / f"{version}.md"
    if not path.exists():
        valid = sorted(p.stem for p in PROMPTS.glob("*.md"))
        raise ValueError(f"unknown judge prompt '{version}'; valid: {', '.join(valid)}")
    system, sep, user = path.read_text().partition(USER_MARKER)
    if not sep:
        raise ValueError(f"{path} has no '{USER_MARKER}' line separating the system prompt from the user template")
    return system.strip(), user.strip()


def format_responses(responses: list[str]) -> str:
    """Numbered, delimited responses. The delimiters are plain text because responses may hold ``` fences."""
    return "\n\n".join(f"### Response {i}\n{r}\n### End of response {i}" for i, r in enumerate(responses, 1))


def parse_answer(text: str | None, n: int) -> tuple[list[int], list[str]]:
    """Validate the model's JSON strictly; raise MalformedAnswer naming what is wrong."""
    body = (text or "").strip()
    fenced = _FENCED_JSON.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        answer = json.loads(body)
    except json.JSONDecodeError as e:
        raise MalformedAnswer(f"not JSON ({e.msg} at char {e.pos}): {body[:120]!r}") from None
    if not isinstance(answer, dict):
        raise MalformedAnswer(f"expected a JSON object, got {type(answer).__name__}")
    want = {str(i) for i in range(1, n + 1)}
    if set(answer) != want:
        missing, extra = sorted(want - set(answer), key=int), sorted(set(answer) - want)
        raise MalformedAnswer(f"expected keys 1..{n}; missing {missing}, unexpected {extra}")
    ids, rationales = [], []
    for i in range(1, n + 1):
        item = answer[str(i)]
        cid = item.get("cluster_id") if isinstance(item, dict) else None
        # bool is an int subclass; "true" is not a cluster id.
        if not isinstance(cid, int) or isinstance(cid, bool) or cid < 0:
            raise MalformedAnswer(f"response {i}: cluster_id must be a non-negative integer, got {cid!r}")
        cot = item.get("chain_of_thought", "")
        ids.append(cid)
        rationales.append(cot if isinstance(cot, str) else json.dumps(cot))
    return ids, rationales


class OpenAIJudge(Judge):
    kind = "openai"

    def __init__(self, spec: JudgeSpec, degenerate_id: int = DEGENERATE, backoff_s: float = 1.0,
                 max_backoff_s: float = 30.0, client: openai.OpenAI | None = None):
        super().__init__(spec.name, degenerate_id)
        self.spec = spec
        self.model = spec.model
        self.prompt_version = spec.prompt
        self.concurrency = spec.concurrency
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.system, self.user_template = load_prompt(spec.prompt)
        key = os.environ.get(spec.api_key_env)
        if not key and spec.base_url is None:
            raise JudgeError(f"judge '{spec.name}': ${spec.api_key_env} is not set (needed for the OpenAI API)")
        # Retries are ours (max_retries=0) so that every attempt is recorded and backoff is uniform.
        self.client = client or openai.OpenAI(base_url=spec.base_url, api_key=key or "EMPTY",
                                              timeout=spec.timeout_s, max_retries=0)

    def describe(self) -> str:
        return f"{super().describe()} at {self.spec.base_url or 'the OpenAI API'}"

    def messages(self, problem: Problem, responses: list[str]) -> list[dict]:
        n = len(responses)
        fill = {"problem": problem.prompt.strip(), "responses": format_responses(responses), "n": str(n),
                "keys": ", ".join(f'"{i}"' for i in range(1, n + 1)), "degenerate_id": str(self.degenerate_id)}
        system, user = self.system, self.user_template
        for k, v in fill.items():
            system = system.replace("{{" + k + "}}", v)
            user = user.replace("{{" + k + "}}", v)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(float(retry_after), self.max_backoff_s)
            except ValueError:
                pass
        return min(self.max_backoff_s, self.backoff_s * 2 ** attempt) * (0.5 + random.random())

    def cluster(self, problem: Problem, responses: list[str]) -> Clustering:
        messages = self.messages(problem, responses)
        calls: list[dict] = []
        started = time.monotonic()
        tokens = [0, 0]
        error = ""
        for attempt in range(self.spec.max_retries + 1):
            t0 = time.monotonic()
            retry_after = None
            usage = None
            try:
                resp = self.client.chat.completions.create(
                    model=self.model, messages=messages, temperature=0.0, response_format={"type": "json_object"})
            except openai.APITimeoutError as e:
                outcome, error = "timeout", f"timed out after {self.spec.timeout_s:g}s: {e}"
            except openai.APIConnectionError as e:
                outcome, error = "connection", f"connection failed: {e.__cause__ or e}"
            except openai.APIStatusError as e:
                outcome, error = f"http_{e.status_code}", f"HTTP {e.status_code}: {str(e)[:300]}"
                retry_after = e.response.headers.get("retry-after")
                if e.status_code < 500 and e.status_code not in TRANSIENT_STATUS:
                    calls.append(_call(attempt, outcome, error, t0))
                    raise JudgeError(f"{self.describe()}: {error} (not retried)", calls) from None
            else:
                usage = resp.usage
                if usage is not None:
                    tokens[0] += usage.prompt_tokens or 0
                    tokens[1] += usage.completion_tokens or 0
                text = resp.choices[0].message.content if resp.choices else None
                try:
                    ids, rationales = parse_answer(text, len(responses))
                except MalformedAnswer as e:
                    outcome, error = "malformed", f"malformed answer: {e}"
                    calls.append(_call(attempt, outcome, error, t0, usage))
                    continue  # an answer came back, so the endpoint is up: retry at once
                calls.append(_call(attempt, "ok", None, t0, usage))
                return Clustering(ids, rationales, attempts=attempt + 1, latency_s=time.monotonic() - started,
                                  prompt_tokens=tokens[0], completion_tokens=tokens[1], raw=text, calls=calls)
            calls.append(_call(attempt, outcome, error, t0, usage))
            if attempt < self.spec.max_retries:
                time.sleep(self._delay(attempt, retry_after))
        if calls[-1]["outcome"] == "malformed":
            return Clustering(None, None, failed=True, error=error, attempts=len(calls), latency_s=time.monotonic() - started,
                              prompt_tokens=tokens[0], completion_tokens=tokens[1], calls=calls)
        raise JudgeTransientError(f"{self.describe()}: {error} (after {len(calls)} attempts)", calls)


def _call(attempt: int, outcome: str, error: str | None, t0: float, usage=None) -> dict:
    return {"call_id": uuid.uuid4().hex, "attempt": attempt + 1, "outcome": outcome, "error": error,
            "latency_s": time.monotonic() - t0,
            "prompt_tokens": getattr(usage, "prompt_tokens", None), "completion_tokens": getattr(usage, "completion_tokens", None)}
