"""A group-level verl reward manager: setrl's sandbox decides correctness, setrl's judge
clusters each prompt's N rollouts, and both go back to verl as reward extra info.

verl 0.9.1's v1 agent loop scores one trajectory at a time (`run_single`), on a reward
worker picked at random. A judge needs the whole group, so `SetrlGroupRewardManager`
holds each trajectory until its siblings (same `uid`) arrive, scores the group once, and
answers every waiting call. verl_config sets `reward.num_workers=1` so all siblings meet on
one (async) worker; a group that stays short for `group_timeout_s` (a failed rollout) is
scored as it is. Validation rows (extra_info.split == "validation") are scored alone:
validation is pass@1 and needs no judge.

Reward extra info per rollout: score, acc, sandbox_status, cluster_id (-1: group not
clustered, i.e. judge policy "skip" or an estimator/judge that needs none), judge_failed,
judge_cached. The judge cache and failure policy are `setrl.judge.JudgeService`'s.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from setrl.problem import Problem

NOT_CLUSTERED = -1
REGISTERED_NAME = "setrl_group"


@dataclass
class _Text:
    """The slice of a `setrl.generation.Completion` that scoring reads."""

    text: str
    n_tokens: int = 0
    finish_reason: str | None = None


@dataclass
class GroupScore:
    """Scores of one group, aligned with its responses."""

    rewards: np.ndarray  # (N,) in {0, 1}
    statuses: list[str]
    cluster_ids: np.ndarray  # (N,) int64, NOT_CLUSTERED when the group has no clustering
    judge_failed: bool
    judge_cached: bool

    def extra_info(self, i: int) -> dict[str, Any]:
        return {"score": float(self.rewards[i]), "acc": float(self.rewards[i]), "sandbox_status": self.statuses[i],
                "cluster_id": int(self.cluster_ids[i]), "judge_failed": bool(self.judge_failed),
                "judge_cached": bool(self.judge_cached)}


class GroupScorer:
    """Sandbox + judge over many groups in one call; built from the `setrl` block of a verl config.

    spec keys: sandbox (SandboxConfig fields = Sandbox arguments), judge (a JudgeSpec
    dict or None for no judge), failure_policy, degenerate_id, db (DuckDB path of the judge cache).
    """

    def __init__(self, spec: dict, sandbox=None, judge_service=None):
        self.spec = spec
        self._sandbox = sandbox
        self._judge = judge_service
        # Groups complete on several executor threads: start the sandbox and judge once, and
        # keep sandbox batches apart; judging (mostly waiting on an API) runs concurrently.
        self._init_lock = threading.Lock()
        self._run_lock = threading.Lock()

    def _sandbox_(self):
        with self._init_lock:
            return self._sandbox_unlocked()

    def _sandbox_unlocked(self):
        if self._sandbox is None:
            from setrl.sandbox import Sandbox

            # the `sandbox` section of the study's config (SandboxConfig.model_dump()): Sandbox's own arguments
            self._sandbox = Sandbox(**(self.spec.get("sandbox") or {}))
            self._sandbox.__enter__()
        return self._sandbox

    def _judge_(self):
        with self._init_lock:
            return self._judge_unlocked()

    def _judge_unlocked(self):
        if self._judge is None and self.spec.get("judge"):
            from setrl.config import JudgeSpec
            from setrl.judge import JudgeService, make_judge
            from setrl.store import Store

            judge = make_judge(JudgeSpec.model_validate(self.spec["judge"]))
            store = Store(self.spec["db"]) if self.spec.get("db") else None
            self._judge = JudgeService(judge, store, self.spec.get("failure_policy", "own_cluster"),
                                       degenerate_id=int(self.spec.get("degenerate_id", 100)))
        return self._judge

    def score(self, problems: Sequence[Problem], texts: Sequence[Sequence[str]], judge: bool = True) -> list[GroupScore]:
        """problems[g] and its responses texts[g] (N_g,) -> one GroupScore per group."""
        from setrl.train.rollout import judge_groups, score_groups

        sandbox = self._sandbox_()
        with self._run_lock:
            groups = score_groups(problems, [[_Text(t) for t in ts] for ts in texts], sandbox)
        service = self._judge_() if judge else None
        if service is not None:
            judge_groups(groups, service)
        return [GroupScore(g.rewards, list(g.statuses),
                           np.full(len(g.rewards), NOT_CLUSTERED, np.int64) if g.clusters is None
                           else np.asarray(g.clusters, np.int64), g.judge_failed, g.judge_cached) for g in groups]

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.__exit__(None, None, None)
            self._sandbox = None


def problem_from_ground_truth(ground_truth: Any) -> Problem:
    """The dataset's `reward_model.ground_truth` is the Problem as JSON (see verl_launch.write_dataset)."""
    return Problem.from_dict(json.loads(ground_truth) if isinstance(ground_truth, str) else dict(ground_truth))


def score_batch(scorer: GroupScorer, uids: Sequence, ground_truths: Sequence, texts: Sequence[str],
                judge: bool = True) -> list[dict[str, Any]]:
    """Whole-batch scoring: rows grouped by uid -> one extra-info dict per row, in row order."""
    order: dict[Any, list[int]] = {}
    for row, uid in enumerate(uids):
        order.setdefault(uid, []).append(row)
    groups = list(order.values())
    scores = scorer.score([problem_from_ground_truth(ground_truths[rows[0]]) for rows in groups],
                         [[texts[r] for r in rows] for rows in groups], judge=judge)
    out: list[dict[str, Any]] = [{} for _ in texts]
    for rows, gs in zip(groups, scores):
        for i, r in enumerate(rows):
            out[r] = gs.extra_info(i)
    return out


def _register():
    from verl.experimental.reward_loop.reward_manager import register
    from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

    @register(REGISTERED_NAME)
    class SetrlGroupRewardManager(RewardManagerBase):
        """verl reward manager that scores whole groups (see the module docstring)."""

        def __init__(self, config, tokenizer, compute_score=None, reward_router_address=None,
                     reward_model_tokenizer=None, scorer: GroupScorer | None = None):
            super().__init__(config, tokenizer, compute_score)
            from omegaconf import OmegaConf

            spec = config.get("setrl", {}) if hasattr(config, "get") else {}
            self.spec = OmegaConf.to_container(spec, resolve=True) if OmegaConf.is_config(spec) else dict(spec or {})
            self.group_size = int(config.actor_rollout_ref.rollout.n)
            self.group_timeout_s = float(self.spec.get("group_timeout_s", 600.0))
            self.scorer = scorer or GroupScorer(self.spec)
            self._pending: dict[Any, dict] = {}

        def _decode(self, data) -> tuple[Any, Any, str, dict]:
            item = data[-1]
            response_ids = item.batch["responses"]
            valid = int(item.batch["attention_mask"][-response_ids.shape[-1]:].sum())
            text = self.tokenizer.decode(response_ids[:valid], skip_special_tokens=True)
            nt = item.non_tensor_batch
            return nt.get("uid"), nt["reward_model"]["ground_truth"], text, dict(nt.get("extra_info", {}) or {})

        async def run_single(self, data) -> dict:
            uid, ground_truth, text, extra = self._decode(data)
            if extra.get("split") == "validation" or uid is None:
                info = (await self.loop.run_in_executor(
                    None, lambda: score_batch(self.scorer, [0], [ground_truth], [text], judge=False)))[0]
                return {"reward_score": info["score"], "reward_extra_info": info}
            group = self._pending.setdefault(uid, {"texts": [], "futures": [], "gt": ground_truth,
                                                   "t0": time.monotonic(), "done": False})
            future = asyncio.get_running_loop().create_future()
            group["texts"].append(text)
            group["futures"].append(future)
            if len(group["texts"]) >= self.group_size:
                await self._score_group(uid)
            else:
                asyncio.get_running_loop().call_later(self.group_timeout_s,
                                                      lambda: asyncio.ensure_future(self._score_group(uid)))
            info = await future
            return {"reward_score": info["score"], "reward_extra_info": info}

        async def _score_group(self, uid) -> None:
            group = self._pending.get(uid)
            if group is None or group["done"]:
                return
            group["done"] = True
            del self._pending[uid]
            texts, gt = group["texts"], group["gt"]
            try:
                infos = await self.loop.run_in_executor(
                    None, lambda: score_batch(self.scorer, [uid] * len(texts), [gt] * len(texts), texts))
            except Exception as e:  # judge policy "fail" raises: every waiting rollout must see it
                for f in group["futures"]:
                    if not f.done():
                        f.set_exception(e)
                return
            for f, info in zip(group["futures"], infos):
                if not f.done():
                    f.set_result(info)

    return SetrlGroupRewardManager


try:
    SetrlGroupRewardManager = _register()
except ImportError:  # verl absent: GroupScorer / score_batch still work for the CPU trainer and tests
    SetrlGroupRewardManager = None
