"""Rollouts: score sampled completions in the sandbox, cluster them with the judge, store them,
and pack them into padded tensors for the loss. Shared by the trainer and `setrl.evaluate`.

A `Group` is the N completions of one prompt with their rewards (binary: every test passes)
and, once judged, their strategy cluster ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import torch

from setrl.problem import Problem, content_hash


@dataclass
class Group:
    """The N completions of one prompt and what we learned about them."""

    problem: Problem
    completions: list  # list[setrl.generation.Completion]
    rewards: np.ndarray  # (N,) float64 in {0, 1}
    statuses: list[str]
    reasons: list[str | None]
    clusters: np.ndarray | None = None  # (N,) judge cluster ids; None = not judged / judge skipped
    judge_failed: bool = False
    judge_cached: bool = False
    judged_idx: list[int] = field(default_factory=list)  # which completions the judge saw

    @property
    def texts(self) -> list[str]:
        return [c.text for c in self.completions]


def encode_prompt(tokenizer, prompt: str) -> list[int]:
    """Prompt token ids exactly as the generator feeds them (no special tokens, like its encoder)."""
    return tokenizer(prompt, add_special_tokens=False)["input_ids"]


def score_groups(problems: Sequence[Problem], completions: Sequence[Sequence], sandbox) -> list[Group]:
    """Run every completion's program against its problem's tests in one sandbox batch."""
    from setrl.generation import program_from_completion
    from setrl.sandbox import job_from_problem

    jobs = [job_from_problem(problem, program_from_completion(problem, comp.text), f"{g}:{i}")
            for g, (problem, comps) in enumerate(zip(problems, completions)) for i, comp in enumerate(comps)]
    verdicts = {v.id: v for v in sandbox.run(jobs)}
    groups = []
    for g, (problem, comps) in enumerate(zip(problems, completions)):
        vs = [verdicts[f"{g}:{i}"] for i in range(len(comps))]
        groups.append(Group(problem, list(comps), np.array([1.0 if v.passed else 0.0 for v in vs]),
                            [v.status for v in vs], [v.reason for v in vs]))
    return groups


def judge_groups(groups: Sequence[Group], service, correct_only: bool = False) -> None:
    """Cluster each group's completions with a `setrl.judge.JudgeService`, in place.

    correct_only: send only the passing completions (evaluation needs clusters only to count
    distinct correct strategies; the others get no id). Groups with nothing to judge are skipped.
    """
    todo, payload = [], []
    for grp in groups:
        idx = [i for i in range(len(grp.completions)) if grp.rewards[i] >= 1] if correct_only else list(range(len(grp.completions)))
        if idx:
            todo.append((grp, idx))
            payload.append((grp.problem, [grp.completions[i].text for i in idx]))
    if not todo:
        return
    for (grp, idx), clustering in zip(todo, service.cluster_groups(payload)):
        grp.judge_failed = bool(clustering.failed)
        grp.judge_cached = bool(clustering.cached)
        grp.judged_idx = idx
        if clustering.cluster_ids is None:  # policy "skip": the trainer falls back to Dr.GRPO
            continue
        ids = np.full(len(grp.completions), -1, dtype=np.int64)  # -1: not sent to the judge
        ids[idx] = np.asarray(clustering.cluster_ids, dtype=np.int64)
        grp.clusters = ids


def rollout_rows(groups: Sequence[Group], study_id: str, purpose: str, model_id: str,
                 step: int | None, seed: int | None) -> list[dict[str, Any]]:
    """One `rollouts` row per completion; the id hashes everything that makes it unique, so a
    re-run of the same step or problem writes the same ids and Store.insert skips them."""
    rows = []
    for slot, grp in enumerate(groups):
        pid = grp.problem.problem_id
        for i, comp in enumerate(grp.completions):
            judged = grp.clusters is not None and grp.clusters[i] >= 0
            rows.append({
                "rollout_id": content_hash(study_id, purpose, model_id, step, slot, pid, seed, i, length=24),
                "study_id": study_id, "purpose": purpose, "model_id": model_id, "step": step,
                "problem_id": pid, "sample_idx": i, "text": comp.text, "n_tokens": comp.n_tokens,
                "finish_reason": comp.finish_reason, "reward": float(grp.rewards[i]),
                "status": grp.statuses[i], "reason": grp.reasons[i],
                "cluster_id": int(grp.clusters[i]) if judged else None,
            })
    return rows


@dataclass
class Batch:
    """Padded prompt + response tokens of B sequences (right padding)."""

    input_ids: torch.Tensor  # (B, T)
    attention_mask: torch.Tensor  # (B, T)
    mask: torch.Tensor  # (B, T-1) 1.0 where the predicted token is a response token

    def to(self, device) -> "Batch":
        return Batch(self.input_ids.to(device), self.attention_mask.to(device), self.mask.to(device))

    def slice(self, start: int, stop: int) -> "Batch":
        """Rows start..stop, trimmed to their own longest sequence (less padding to forward)."""
        am = self.attention_mask[start:stop]
        width = int(am.sum(1).max())
        return Batch(self.input_ids[start:stop, :width], am[:, :width], self.mask[start:stop, :width - 1])


def pack(prompt_ids: Sequence[list[int]], response_ids: Sequence[list[int]], pad_id: int) -> Batch:
    """Concatenate each prompt with its response and right-pad to the longest: B sequences -> (B, T)."""
    from setrl.train.loss import response_mask

    seqs = [list(p) + list(r) for p, r in zip(prompt_ids, response_ids)]
    width = max(len(s) for s in seqs)
    input_ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(seqs), width), dtype=torch.long)
    for b, s in enumerate(seqs):
        input_ids[b, :len(s)] = torch.tensor(s, dtype=torch.long)
        attention[b, :len(s)] = 1
    plen = torch.tensor([len(p) for p in prompt_ids])
    rlen = torch.tensor([len(r) for r in response_ids])
    return Batch(input_ids, attention, response_mask(plen, rlen, width - 1))
