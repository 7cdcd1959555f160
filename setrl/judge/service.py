"""Judging many groups: the DuckDB cache, bounded concurrency and the failure policy.

The cache (`judgments`) is keyed by hash(judge kind, model, prompt version, problem hash,
responses hash), so the same group is never sent twice, across runs and resumes. Every result is
written as soon as its request completes, so an outage in the middle of a batch loses nothing
already judged; every request and its outcome goes to `judge_calls`.

Failure policies (the group's judge failed: endpoint down through every retry, or a malformed
answer on every attempt):
  own_cluster  ids 0..N-1 (the reference implementation's rule; it inflates diversity, so the
               failure rate is recorded)
  skip         cluster_ids=None: the trainer uses plain Dr.GRPO advantages for that group
  fail         raise JudgeUnavailableError after recording the successes; re-running resumes
Failed groups are recorded (failed=true) but never served from the cache: a later run retries them.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from typing import Literal

from setrl.judge.base import DEGENERATE, Clustering, Judge, JudgeError, JudgeUnavailableError, responses_hash
from setrl.problem import Problem
from setrl.store import Store

Policy = Literal["own_cluster", "skip", "fail"]
POLICIES = ("own_cluster", "skip", "fail")


class JudgeService:
    """Clusters batches of groups with one judge; see the module docstring for cache and policies."""

    def __init__(self, judge: Judge, store: Store | None = None, policy: Policy = "own_cluster", degenerate_id: int = DEGENERATE):
        if policy not in POLICIES:
            raise ValueError(f"unknown judge failure policy '{policy}'; valid: {', '.join(POLICIES)}")
        # The service's degenerate id wins, so that make_judge(spec) with its default cannot disagree with it.
        judge.degenerate_id = degenerate_id
        self.judge = judge
        self.store = store
        self.policy = policy
        self.degenerate_id = degenerate_id
        self._counts = {"groups": 0, "requests": 0, "cache_hits": 0, "failures": 0}
        self._lock = threading.Lock()

    @property
    def stats(self) -> dict:
        """Totals over this service's lifetime: requests = calls to the judge backend (retries included)."""
        c = dict(self._counts)
        c["failure_rate"] = c["failures"] / c["groups"] if c["groups"] else 0.0
        return c

    # ---- cache -------------------------------------------------------------------------
    def _lookup(self, keys: list[str]) -> dict[str, Clustering]:
        df = self.store.query(
            "SELECT cache_key, cluster_ids, rationales, attempts, latency_s, prompt_tokens, completion_tokens "
            "FROM judgments WHERE NOT failed AND cache_key IN (SELECT unnest(?::VARCHAR[]))", [sorted(set(keys))])
        hits = {}
        for row in df.itertuples(index=False):
            rationales = json.loads(row.rationales) if isinstance(row.rationales, str) else None
            hits[row.cache_key] = Clustering(
                [int(x) for x in row.cluster_ids], rationales, cached=True, attempts=int(row.attempts or 0),
                latency_s=float(row.latency_s or 0.0), prompt_tokens=int(row.prompt_tokens or 0),
                completion_tokens=int(row.completion_tokens or 0))
        return hits

    def _record(self, key: str, problem: Problem, responses: list[str], c: Clustering) -> None:
        if self.store is None:
            return
        # Upsert: a success replaces an earlier failure of the same group.
        self.store.upsert("judgments", [{
            "cache_key": key, "judge": self.judge.name, "model": self.judge.model, "prompt_version": self.judge.prompt_version,
            "problem_hash": problem.problem_id, "responses_hash": responses_hash(responses), "cluster_ids": c.cluster_ids,
            "rationales": c.rationales, "raw_response": c.raw, "failed": c.failed, "error": c.error, "attempts": c.attempts,
            "latency_s": c.latency_s, "prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
        }])
        if c.calls:
            self.store.insert("judge_calls", [{**call, "cache_key": key} for call in c.calls])

    # ---- judging -----------------------------------------------------------------------
    def _judge_one(self, problem: Problem, responses: list[str]) -> Clustering:
        try:
            return self.judge.cluster(problem, responses)
        except JudgeError as e:
            return Clustering(None, None, failed=True, error=str(e), attempts=len(e.calls), calls=e.calls)

    def cluster_groups(self, groups: list[tuple[Problem, list[str]]], progress: bool = False) -> list[Clustering]:
        """One Clustering per group, in order; cache first, then the misses with bounded concurrency."""
        keys = [self.judge.cache_key(p, list(r)) for p, r in groups]
        use_cache = self.store is not None and self.judge.cacheable
        found = self._lookup(keys) if use_cache and keys else {}
        todo: dict[str, int] = {}  # distinct missing key -> first group index with it
        for i, k in enumerate(keys):
            if k not in found:
                todo.setdefault(k, i)
        judged: dict[str, Clustering] = {}
        first_failure: str | None = None
        bar = _progress(progress, len(todo), self.judge.name)
        with ThreadPoolExecutor(max_workers=max(1, self.judge.concurrency)) as pool:
            pending = {pool.submit(self._judge_one, groups[i][0], list(groups[i][1])): k for k, i in todo.items()}
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    key = pending.pop(fut)
                    c = fut.result()
                    problem, responses = groups[todo[key]]
                    if use_cache or c.failed:
                        self._record(key, problem, list(responses), c)
                    judged[key] = c
                    with self._lock:
                        self._counts["requests"] += max(1, len(c.calls))
                    if bar:
                        bar.advance()
                    if c.failed and first_failure is None:
                        first_failure = c.error
                        if self.policy == "fail":
                            # Stop sending: requests already in flight finish and are recorded.
                            for f in pending:
                                f.cancel()
                            pending = {f: k for f, k in pending.items() if not f.cancelled()}
        if bar:
            bar.close()
        out = []
        for k, (problem, responses) in zip(keys, groups):
            c = found.get(k) or judged.get(k)
            self._counts["groups"] += 1
            if c is None:  # cancelled under policy=fail
                out.append(Clustering(None, None, failed=True, error="not judged: the judge failed earlier in the batch"))
                continue
            if k in found:
                self._counts["cache_hits"] += 1
            if c.failed:
                self._counts["failures"] += 1
                ids = list(range(len(responses))) if self.policy == "own_cluster" else None
                c = Clustering(ids, None, failed=True, error=c.error, attempts=c.attempts, latency_s=c.latency_s,
                               prompt_tokens=c.prompt_tokens, completion_tokens=c.completion_tokens, calls=c.calls)
            out.append(c)
        if self.policy == "fail" and first_failure is not None:
            ok = sum(1 for c in out if not c.failed)
            where = f"cached in {self.store.path}" if use_cache else "not cached (no store)"
            raise JudgeUnavailableError(
                f"{self.judge.describe()} is unavailable: {first_failure}. {ok} of {len(groups)} groups were judged and are "
                f"{where}; nothing judged is lost. Bring the endpoint back (or set judge.failure_policy to own_cluster "
                f"or skip) and re-run the stage: it resumes, and cached groups are not sent again.")
        return out


class _Bar:
    def __init__(self, total: int, label: str):
        from rich.progress import Progress

        self._p = Progress(transient=True)
        self._p.start()
        self._task = self._p.add_task(f"judge {label}", total=total)

    def advance(self) -> None:
        self._p.advance(self._task)

    def close(self) -> None:
        self._p.stop()


def _progress(enabled: bool, total: int, label: str) -> _Bar | None:
    return _Bar(total, label) if enabled and total else None
