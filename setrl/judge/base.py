"""The judge interface: a problem and a group of N responses in, one strategy cluster id per response out.

Cluster ids are small non-negative integers that only mean "same strategy" within one group; a
degenerate response (no code, unparsable, gibberish) gets the degenerate id (100 by default) so
that it never counts toward diversity.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from setrl.problem import Problem, content_hash

DEGENERATE = 100


class JudgeError(RuntimeError):
    """A judge could not produce an answer. `calls` holds one record per request it made."""

    def __init__(self, msg: str, calls: list[dict] | None = None):
        super().__init__(msg)
        self.calls = calls or []


class JudgeTransientError(JudgeError):
    """The endpoint stayed unreachable (429, 5xx, timeouts, refused) through every retry."""


class JudgeUnavailableError(RuntimeError):
    """Raised by `JudgeService` under failure_policy=fail; what was judged before is cached."""


@dataclass
class Clustering:
    """One group's verdict. `cluster_ids` is None when the group has no usable clustering (skip policy)."""

    cluster_ids: list[int] | None
    rationales: list[str] | None = None
    failed: bool = False
    error: str | None = None
    cached: bool = False
    attempts: int = 0
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    raw: str | None = None
    calls: list[dict] = field(default_factory=list, repr=False)  # judge_calls rows (without cache_key)


class Judge(ABC):
    """Clusters one group at a time; `JudgeService` adds caching, concurrency and the failure policy."""

    kind: str = ""
    model: str | None = None
    prompt_version: str = ""
    # Requests in flight at once when a service judges many groups.
    concurrency: int = 1
    # Whether results are worth a DuckDB round trip (an offline judge is faster than the cache).
    cacheable: bool = True

    def __init__(self, name: str, degenerate_id: int = DEGENERATE):
        self.name = name
        self.degenerate_id = degenerate_id

    @abstractmethod
    def cluster(self, problem: Problem, responses: list[str]) -> Clustering:
        """Cluster one group. Malformed answers come back as failed=True; raises JudgeTransientError
        when the endpoint stays unreachable after the retries."""

    def cache_key(self, problem: Problem, responses: list[str]) -> str:
        """hash(judge name and kind, model, prompt version, problem hash, responses hash): order matters, ids are
        per index. The name (JudgeSpec.name) keeps two endpoints serving one model apart; the degenerate id
        is in the prompt an LLM sees, so it is part of the key too."""
        return content_hash(self.name, self.kind, self.model, self.prompt_version, self.degenerate_id, problem.problem_id,
                            responses_hash(responses), length=32)

    def describe(self) -> str:
        return f"judge '{self.name}' ({self.kind}{f', model {self.model}' if self.model else ''}, prompt {self.prompt_version})"


def responses_hash(responses: list[str]) -> str:
    return content_hash(list(responses), length=32)
