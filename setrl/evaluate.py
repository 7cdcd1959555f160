"""Stage 4 library code: evaluate one model (pass@k with bootstrap CIs and correct-rollout
diversity), then pool seeds per method and test methods against each other.

    evaluate_model(...)        n samples per problem -> rollouts (purpose 'eval'), eval_problems, pass_at_k
    pooled_pass_at_k(...)      seeds of one method pooled -> pass_at_k (model_id = method)
    significance(...)          paired bootstrap over problems, method_a - method_b -> significance

`evaluate_model` is resumable per problem: a problem whose `eval_problems` row exists for this
(study, model) is not sampled again, and rows are written problem by problem.
"""

from __future__ import annotations

from collections.abc import Callable

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from setrl.config import JudgeSpec, StudyConfig
from setrl.problem import Problem, content_hash
from setrl.store import Store

# Difficulty band the shipped base model must meet on the held-out split: hard enough to leave
# room for RL, easy enough that pass@k still rises, and not saturated at the largest k.
BAND_PASS1 = (0.05, 0.5)
BAND_PASS_KMAX = 0.95


def _eval_seed(seed: int | None, problem_id: str) -> int:
    """Per-problem sampling seed: results do not depend on which problems were already done."""
    return int(content_hash("eval", seed, problem_id), 16) % (2**31)


def evaluate_model(cfg: StudyConfig, store: Store, study_id: str, model_id: str, method: str, seed: int | None,
                   model_path: str | Path, problems: list[Problem], judge_spec: JudgeSpec,
                   progress: bool | Callable[[int, int, str], None] = True) -> pd.DataFrame:
    """Sample cfg.eval.n completions per problem at cfg.eval.temperature, score and cluster the
    correct ones, store per-problem (n, c, distinct correct clusters) and the pass@k curve with
    bootstrap CIs over problems. Returns that curve: DataFrame[k, pass_at_k, ci_low, ci_high, n_problems]."""
    from setrl.generation import make_generator
    from setrl.judge import JudgeService, make_judge
    from setrl.metrics import distinct_correct_clusters
    from setrl.sandbox import Sandbox
    from setrl.train.rollout import judge_groups, rollout_rows, score_groups

    ev = cfg.eval
    # a problem evaluated with another n (eval config changed) is done again, not reused
    done = set(store.query("SELECT problem_id FROM eval_problems WHERE study_id = ? AND model_id = ? AND n = ?",
                           [study_id, model_id, ev.n]).problem_id)
    todo = [p for p in problems if p.problem_id not in done]
    if todo:
        generator = make_generator(cfg.model, path=str(model_path))
        judge = JudgeService(make_judge(judge_spec, degenerate_id=cfg.judge.degenerate_id), store, cfg.judge.failure_policy, degenerate_id=cfg.judge.degenerate_id)
        degenerate = {cfg.judge.degenerate_id}
        with Sandbox(**cfg.sandbox.model_dump()) as sandbox:
            for i, problem in enumerate(todo):
                comps = generator.sample([problem.prompt], n=ev.n, temperature=ev.temperature, top_p=cfg.model.top_p,
                                         max_new_tokens=cfg.model.max_new_tokens,
                                         seed=_eval_seed(seed, problem.problem_id), progress=False)
                groups = score_groups([problem], comps, sandbox)
                # Only correct rollouts are judged: diversity here is distinct strategies among them.
                judge_groups(groups, judge, correct_only=True)
                grp = groups[0]
                c = int(grp.rewards.sum())
                # No correct rollout: zero strategies (nothing to judge); judge skipped: unknown (NULL).
                distinct = 0 if c == 0 else (distinct_correct_clusters(grp.rewards, grp.clusters, degenerate)
                                             if grp.clusters is not None else None)
                store.replace("rollouts", "study_id = ? AND model_id = ? AND purpose = 'eval' AND problem_id = ?",
                              [study_id, model_id, problem.problem_id],
                              rollout_rows(groups, study_id, "eval", model_id, None, seed))
                store.upsert("eval_problems", [{"study_id": study_id, "model_id": model_id, "method": method, "seed": seed,
                                                "problem_id": problem.problem_id, "n": ev.n, "c": c,
                                                "distinct_correct_clusters": distinct}])
                if callable(progress):
                    progress(len(done) + i + 1, len(problems), "problems evaluated")
                elif progress:
                    print(f"[eval {model_id}] {len(done) + i + 1}/{len(problems)} {problem.title}: {c}/{ev.n} correct"
                          + (f", {distinct} distinct" if distinct is not None else ""), flush=True)
    ids = [p.problem_id for p in problems]
    rows = store.query("SELECT problem_id, n, c FROM eval_problems WHERE study_id = ? AND model_id = ?", [study_id, model_id])
    rows = rows[rows.problem_id.isin(ids)]
    return _write_curve(store, study_id, model_id, method, rows.n.to_numpy(), rows.c.to_numpy(), ev.ks, ev.bootstrap, ev.ci)


def _write_curve(store: Store, study_id: str, model_id: str, method: str, ns, cs, ks: Sequence[int],
                 n_boot: int, ci: float, seed: int = 0) -> pd.DataFrame:
    from setrl.metrics import pass_at_k_curve

    curve = pass_at_k_curve(ns, cs, ks, n_boot=n_boot, ci=ci, seed=seed)
    store.upsert("pass_at_k", curve.assign(study_id=study_id, model_id=model_id, method=method))
    return curve


def _pooled_counts(store: Store, study_id: str, method: str) -> pd.DataFrame:
    """Per problem, the samples of every seed of `method` pooled: DataFrame[problem_id, n, c]."""
    return store.query("SELECT problem_id, sum(n)::INTEGER AS n, sum(c)::INTEGER AS c FROM eval_problems "
                       "WHERE study_id = ? AND method = ? GROUP BY problem_id ORDER BY problem_id", [study_id, method])


def pooled_pass_at_k(store: Store, study_id: str, method: str, ks: Sequence[int], n_boot: int = 1000,
                     ci: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """pass@k of `method` with its seeds pooled, written to pass_at_k with model_id = method.

    Pooling: per problem the seeds' samples are added (n = sum n_s, c = sum c_s), i.e. pass@k of
    k draws from all seeds' samples together; the CI is a bootstrap over problems.
    """
    counts = _pooled_counts(store, study_id, method)
    if counts.empty:
        raise ValueError(f"no eval_problems rows for method '{method}' in study '{study_id}'")
    return _write_curve(store, study_id, method, method, counts.n.to_numpy(), counts.c.to_numpy(), ks, n_boot, ci, seed)


def significance(store: Store, study_id: str, method_a: str, method_b: str, ks: Sequence[int], n_boot: int = 1000,
                 ci: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Paired bootstrap over the problems both methods were evaluated on: mean pass@k(A) - pass@k(B)
    per k (seeds pooled as in `pooled_pass_at_k`), written to `significance`."""
    from setrl.metrics import paired_bootstrap

    a = _pooled_counts(store, study_id, method_a)
    b = _pooled_counts(store, study_id, method_b)
    both = a.merge(b, on="problem_id", suffixes=("_a", "_b"))
    if both.empty:
        raise ValueError(f"methods '{method_a}' and '{method_b}' share no evaluated problems in study '{study_id}'")
    rows = []
    for k in ks:
        res = paired_bootstrap(both.n_a.to_numpy(), both.c_a.to_numpy(), both.n_b.to_numpy(), both.c_b.to_numpy(),
                               k, n_boot=n_boot, seed=seed, ci=ci)
        rows.append({"study_id": study_id, "method_a": method_a, "method_b": method_b, "k": int(k), **res})
    out = pd.DataFrame(rows)
    store.upsert("significance", out)
    return out


def difficulty_band(curve: pd.DataFrame) -> dict:
    """Whether a base model's curve sits in the study's difficulty band (pass@1 and pass@k_max)."""
    by_k = curve.set_index("k")["pass_at_k"]
    k_max = int(by_k.index.max())
    p1, pk = float(by_k.get(1, np.nan)), float(by_k[k_max])
    ok = BAND_PASS1[0] <= p1 <= BAND_PASS1[1] and pk < BAND_PASS_KMAX
    return {"pass@1": p1, f"pass@{k_max}": pk, "k_max": k_max, "pass1_band": list(BAND_PASS1),
            "pass_kmax_below": BAND_PASS_KMAX, "in_band": bool(ok)}
