"""The in-process on-policy trainer (CPU, or one CUDA GPU unchanged).

One step: pick prompts (uniform, or EXPO's Gaussian curriculum) -> sample N rollouts each ->
score them in the sandbox -> cluster them with the judge -> per-rollout advantages from the
registered estimator -> one policy-gradient update (loss in `setrl.train.loss`) -> one
`train_metrics` row and the step's rollouts in DuckDB -> a checkpoint every k steps.

Resuming: `train_run` continues from the latest complete checkpoint in `out_dir`. Every step
reseeds python/numpy/torch and the sampler from (seed, step), and metric/rollout rows are keyed
by (run, step), so a resumed run reproduces the uninterrupted one and never duplicates rows.
"""

from __future__ import annotations

import random
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from setrl import advantages
from setrl.config import JudgeSpec, MethodConfig, StudyConfig
from setrl.problem import Problem, content_hash
from setrl.store import Store
from setrl.train import checkpoint
from setrl.train.loss import (aggregate, broadcast_advantages, clipped_pg_loss, k3_kl, token_logprobs,
                              token_logprobs_and_entropy)
from setrl.train.rollout import Batch, Group, encode_prompt, judge_groups, pack, rollout_rows, score_groups


@dataclass(frozen=True)
class TrainResult:
    final_checkpoint: Path
    steps_done: int
    resumed_from: int | None  # the checkpoint step this call started from (None: fresh run)


def make_run_key(study_id: str, method: str, seed: int) -> str:
    return f"{study_id}/{method}/seed{seed}"


def step_seed(seed: int, step: int) -> int:
    """The seed of one step: a hash, so neighbouring (seed, step) pairs give unrelated streams."""
    return int(content_hash("train-step", seed, step), 16) % (2**31)


def pick_device(pref: str) -> torch.device:
    if pref == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(pref)


@contextmanager
def single_thread(device: torch.device):
    """One torch thread for the run on CPU (the generator already samples with one): on the shared
    2-core machine the update was 2-4x slower with two threads, and a fixed count keeps float
    reductions, hence results, identical across machines with different core counts."""
    prev = torch.get_num_threads()
    if device.type == "cpu":
        torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(prev)


def seed_everything(s: int) -> None:
    random.seed(s)
    np.random.seed(s)
    torch.manual_seed(s)


def resolve_model_path(path: str, repo_root: Path) -> str:
    """pipeline.yaml's relative model paths (data/tiny-model) mean the repo's wherever the command
    runs (the generator's rule too); absolute paths and hub ids pass through."""
    p = Path(path)
    return str(repo_root / p) if not p.is_absolute() and not p.exists() and (repo_root / p).exists() else path


def needs_judge(method: MethodConfig, judge_spec: JudgeSpec) -> bool:
    """Judge when the estimator reads clusters, and also whenever the judge is the offline AST
    one: it costs milliseconds and gives every method (GRPO too) its diversity trajectory."""
    return advantages.get(method.estimator).needs_clusters or judge_spec.kind == "ast"


def group_advantages(method: MethodConfig, groups: list[Group]) -> tuple[np.ndarray, int]:
    """Per-rollout advantages, concatenated over groups (B,), and how many groups fell back.

    A group without clusters (judge policy "skip") gets Dr.GRPO advantages, which is what
    Poly-EPO reduces to without diversity information.
    """
    est = advantages.get(method.estimator)
    fallback = advantages.get("dr_grpo")
    out, skipped = [], 0
    for grp in groups:
        if est.needs_clusters and grp.clusters is None:
            out.append(fallback(grp.rewards))
            skipped += 1
        else:
            out.append(est(grp.rewards, grp.clusters if est.needs_clusters else None, **method.estimator_params))
    return np.concatenate(out), skipped


def kl_coefficient(method: MethodConfig, acc: float) -> float:
    from setrl.curriculum import akl_coef

    kind, beta = method.kl.kind, method.kl.beta
    return 0.0 if kind == "none" else beta if kind == "fixed" else akl_coef(beta, acc)


def policy_update(model, ref_model, optimizer, batch: Batch, adv: torch.Tensor, method: MethodConfig,
                  kl_coef: float, max_len: int, micro_batch: int, device: torch.device) -> dict:
    """`ppo_epochs` optimiser steps on one batch of rollouts, gradient-accumulated over
    micro-batches; statistics are those of the first pass (the sampling policy)."""
    lc = method.loss
    B = batch.input_ids.shape[0]
    n_tokens = float(batch.mask.sum())
    spans = [(s, min(s + micro_batch, B)) for s in range(0, B, micro_batch)]

    def logprobs(m, s, e):
        mb = batch.slice(s, e).to(device)
        return token_logprobs(m(input_ids=mb.input_ids, attention_mask=mb.attention_mask).logits, mb.input_ids)

    with torch.no_grad():
        ref = [logprobs(ref_model, s, e) for s, e in spans] if ref_model is not None else None
        # With one pass the ratio is exactly 1 and old log-probs are the current ones (detached).
        old = [logprobs(model, s, e) for s, e in spans] if lc.ppo_epochs > 1 else None

    stats = {"loss": 0.0, "kl": 0.0, "entropy": 0.0, "clipped": 0.0}
    params = [p for p in model.parameters() if p.requires_grad]
    for epoch in range(lc.ppo_epochs):
        optimizer.zero_grad(set_to_none=True)
        for j, (s, e) in enumerate(spans):
            mb = batch.slice(s, e).to(device)
            logits = model(input_ids=mb.input_ids, attention_mask=mb.attention_mask).logits  # (b, T, V)
            logp, entropy = token_logprobs_and_entropy(logits, mb.input_ids, entropy_grad=lc.entropy_coef > 0)  # (b, T-1) each
            adv_tok = broadcast_advantages(adv[s:e].to(device), mb.mask)  # (b, T-1)
            per_token, clipped = clipped_pg_loss(logp, old[j] if old else logp.detach(), adv_tok, lc.clip_low, lc.clip_high)
            kl = k3_kl(logp, ref[j]) if ref is not None else None
            if kl is not None and kl_coef > 0:
                per_token = per_token + kl_coef * kl
            if lc.entropy_coef > 0:
                per_token = per_token - lc.entropy_coef * entropy
            loss = aggregate(per_token, mb.mask, lc.agg, max_len, n_seqs=B, n_tokens=n_tokens)
            loss.backward()
            if epoch == 0:
                with torch.no_grad():
                    stats["loss"] += float(loss)
                    stats["entropy"] += float((entropy * mb.mask).sum()) / max(n_tokens, 1.0)
                    stats["clipped"] += float((clipped.float() * mb.mask).sum()) / max(n_tokens, 1.0)
                    if kl is not None:
                        stats["kl"] += float((kl * mb.mask).sum()) / max(n_tokens, 1.0)
        grad_norm = torch.nn.utils.clip_grad_norm_(params, lc.grad_clip)
        if epoch == 0:
            stats["grad_norm"] = float(grad_norm)
        optimizer.step()
    if ref is None:
        stats["kl"] = None
    return stats


def train_run(cfg: StudyConfig, method: MethodConfig, seed: int, store: Store, study_id: str,
              train_problems: list[Problem], validation_problems: list[Problem], judge_spec: JudgeSpec,
              out_dir: Path, steps: int | None = None, progress: bool = True,
              on_step: Callable[[int, dict], None] | None = None) -> TrainResult:
    """Train `method` from `cfg.model.path` for `steps` (default `method.steps`) steps, resuming
    from the latest checkpoint in `out_dir`; metrics go to `train_metrics` keyed by
    run_key = f"{study_id}/{method.name}/seed{seed}"."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from setrl.curriculum import GaussianCurriculum
    from setrl.generation import REPO_ROOT, TransformersGenerator
    from setrl.metrics import mean_distinct_correct_clusters
    from setrl.sandbox import Sandbox

    if not train_problems:
        raise ValueError("train_run needs at least one training problem")
    total = steps if steps is not None else method.steps
    out_dir = Path(out_dir)
    run_key = make_run_key(study_id, method.name, seed)
    model_id = f"{method.name}/seed{seed}"
    # Everything that changes what a step computes; not steps/checkpoint_every/validate_every/seeds,
    # so a longer run (--steps) still resumes.
    fingerprint = content_hash(method.model_dump(mode="json", exclude={"steps", "checkpoint_every", "validate_every", "seeds"}),
                               seed, cfg.model.model_dump(mode="json"), cfg.sandbox.model_dump(mode="json"),
                               judge_spec.model_dump(mode="json"), [p.problem_id for p in train_problems],
                               [p.problem_id for p in validation_problems])
    if checkpoint.claim(out_dir, fingerprint):
        store.execute("DELETE FROM train_metrics WHERE run_key = ?", [run_key])
        store.execute("DELETE FROM rollouts WHERE study_id = ? AND model_id = ?", [study_id, model_id])
        store.execute("DELETE FROM eval_problems WHERE study_id = ? AND model_id = ?", [study_id, model_id])
        store.execute("DELETE FROM pass_at_k WHERE study_id = ? AND model_id = ?", [study_id, model_id])
        print(f"[{run_key}] configuration changed since the last run: starting over (old checkpoints and metrics removed)")
    checkpoint.clean_partial(out_dir)
    ckpt = checkpoint.latest(out_dir, max_step=total)
    start = checkpoint.load_state(ckpt)["step"] if ckpt else 0
    if ckpt is not None and start >= total:
        return TrainResult(ckpt, start, start)

    device = pick_device(cfg.model.device)
    base_path = resolve_model_path(cfg.model.path, REPO_ROOT)
    load_from = ckpt or base_path
    tokenizer = AutoTokenizer.from_pretrained(load_from)
    model = AutoModelForCausalLM.from_pretrained(load_from, dtype=torch.float32).to(device)
    # Dropout off throughout: the update's log-probs must be those of the sampling policy.
    model.eval()
    ref_model = None
    if method.kl.kind != "none":
        ref_model = AutoModelForCausalLM.from_pretrained(base_path, dtype=torch.float32).to(device).eval()
        ref_model.requires_grad_(False)
    optimizer = torch.optim.Adam(model.parameters(), lr=method.loss.lr)
    curriculum = None
    if method.curriculum.kind == "gaussian":
        cc = method.curriculum
        curriculum = GaussianCurriculum(len(train_problems), ema=cc.ema, mu=cc.mu, sigma=cc.sigma, seed=seed)
    if ckpt is not None:
        checkpoint.load_optimizer(ckpt, optimizer, device)
        if curriculum is not None:
            curriculum.load_state_dict(checkpoint.load_state(ckpt)["curriculum"])

    generator = TransformersGenerator(model, tokenizer=tokenizer, device=str(device), batch_size=cfg.model.batch_size)
    judge = None
    if needs_judge(method, judge_spec):
        from setrl.judge import JudgeService, make_judge

        judge = JudgeService(make_judge(judge_spec, degenerate_id=cfg.judge.degenerate_id), store, cfg.judge.failure_policy, degenerate_id=cfg.judge.degenerate_id)
    degenerate = set(method.estimator_params.get("degenerate", [cfg.judge.degenerate_id]))
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    prompt_ids = {}  # problem_id -> token ids, tokenised once

    def validate(step: int) -> float | None:
        if not validation_problems:
            return None
        comps = generator.sample([p.prompt for p in validation_problems], n=1, temperature=0.0, top_p=1.0,
                                 max_new_tokens=cfg.model.max_new_tokens, progress=False)  # greedy: no seed needed
        groups = score_groups(validation_problems, comps, sandbox)
        store.insert("rollouts", rollout_rows(groups, study_id, "validation", model_id, step, seed))
        return float(np.mean([g.rewards.mean() for g in groups]))

    def save(step: int) -> Path:
        state = {"run_key": run_key, "seed": seed, "method": method.name,
                 "curriculum": curriculum.state_dict() if curriculum is not None else None}
        path = checkpoint.save(out_dir, step, model, tokenizer, optimizer, state)
        store.register_artifact(study_id, "checkpoint", f"{run_key}/step-{step:04d}", path,
                                meta={"run_key": run_key, "method": method.name, "seed": seed, "step": step})
        return path

    last = ckpt
    with single_thread(device), Sandbox(**cfg.sandbox.model_dump()) as sandbox:
        if start == 0 and validation_problems:
            store.insert("train_metrics", [{"run_key": run_key, "study_id": study_id, "method": method.name,
                                            "seed": seed, "step": 0, "validation_pass1": validate(0)}])
        for step in range(start + 1, total + 1):
            t0 = time.perf_counter()
            s = step_seed(seed, step)
            seed_everything(s)
            if curriculum is not None:
                idx = curriculum.sample(method.prompts_per_step)
            else:
                k = method.prompts_per_step
                idx = np.random.default_rng(s).choice(len(train_problems), size=k, replace=k > len(train_problems))
            problems = [train_problems[i] for i in idx]

            # The generator samples with one torch thread (measured fastest on CPU) and a private RNG stream.
            comps = generator.sample([p.prompt for p in problems], n=method.rollouts, temperature=cfg.model.temperature,
                                     top_p=cfg.model.top_p, max_new_tokens=cfg.model.max_new_tokens, seed=s, progress=False)
            t1 = time.perf_counter()
            groups = score_groups(problems, comps, sandbox)
            t2 = time.perf_counter()
            if judge is not None:
                judge_groups(groups, judge)
            t3 = time.perf_counter()

            adv, skipped = group_advantages(method, groups)  # (B,) with B = prompts * rollouts, group-major
            rewards = np.concatenate([g.rewards for g in groups])  # (B,)
            kl_coef = kl_coefficient(method, float(rewards.mean()))
            for p in problems:
                if p.problem_id not in prompt_ids:
                    prompt_ids[p.problem_id] = encode_prompt(tokenizer, p.prompt)
            batch = pack([prompt_ids[g.problem.problem_id] for g in groups for _ in g.completions],
                         [c.token_ids for g in groups for c in g.completions], pad_id)
            stats = policy_update(model, ref_model, optimizer, batch, torch.tensor(adv, dtype=torch.float32), method,
                                  kl_coef, cfg.model.max_new_tokens, cfg.model.batch_size, device)
            t4 = time.perf_counter()

            if curriculum is not None:
                curriculum.update(idx, [g.rewards.mean() for g in groups])
            judged = [g for g in groups if g.clusters is not None]
            n_judged = sum(1 for g in groups if g.judged_idx)
            failures = sum(g.judge_failed for g in groups)
            row = {
                "run_key": run_key, "study_id": study_id, "method": method.name, "seed": seed, "step": step,
                "reward_mean": float(rewards.mean()),
                "pass_rate": float(np.mean([g.rewards.max() for g in groups])),
                "distinct_correct_clusters": mean_distinct_correct_clusters([g.rewards for g in judged], [g.clusters for g in judged], degenerate) if judged else None,
                "judge_failures": int(failures) if judge is not None else None,
                "judge_failure_rate": failures / n_judged if n_judged else None,
                "kl": stats["kl"], "kl_coef": kl_coef, "entropy": stats["entropy"],
                "response_len": float(np.mean([c.n_tokens for g in groups for c in g.completions])),
                "loss": stats["loss"], "grad_norm": stats["grad_norm"],
                "t_sample": t1 - t0, "t_score": t2 - t1, "t_judge": t3 - t2, "t_update": t4 - t3,
                "validation_pass1": validate(step) if step % method.validate_every == 0 or step == total else None,
                "extra": {"clip_frac": stats["clipped"], "judge_skipped": skipped,
                          "judge_cached": sum(g.judge_cached for g in groups),
                          "samples_per_s": len(rewards) / max(t1 - t0, 1e-9),
                          "uniform_reward_groups": sum(bool(np.all(g.rewards == g.rewards[0])) for g in groups),
                          "prompts": [int(i) for i in idx]},
            }
            store.insert("rollouts", rollout_rows(groups, study_id, "train", model_id, step, seed))
            store.insert("train_metrics", [row])
            if step % method.checkpoint_every == 0 or step == total:
                last = save(step)
            if progress:
                print(f"[{run_key}] step {step}/{total} reward {row['reward_mean']:.3f} "
                      f"distinct {row['distinct_correct_clusters'] if row['distinct_correct_clusters'] is not None else float('nan'):.2f} "
                      f"sample {t1 - t0:.2f}s score {t2 - t1:.2f}s judge {t3 - t2:.2f}s update {t4 - t3:.2f}s"
                      + (f" val@1 {row['validation_pass1']:.3f}" if row["validation_pass1"] is not None else ""), flush=True)
            if on_step is not None:
                on_step(step, row)
    return TrainResult(last, total, start if ckpt is not None else None)
