"""Time training steps of 8 prompts x 8 rollouts on the tiny model, split into their parts.

    .venv/bin/python benchmarks/train_step.py [--steps 5] [--method dr_grpo] [--profile tiny]

Runs the real trainer (`train_run`: generation, sandbox, AST judge, update, DuckDB writes) for a
few steps in a temporary directory, then prints the mean time per part, sampling throughput
beside the prototype's 100-210 completions/s, and the projection for 100 steps against the
3-minute target. The first step is reported separately (it pays for sandbox and model warm-up).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from setrl.config import DEFAULT_PIPELINE, load_config

TARGET_100_STEPS_S = 180.0
PROTOTYPE_SAMPLES_PER_S = (100, 210)
PARTS = ("t_sample", "t_score", "t_judge", "t_update")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--method", default="dr_grpo")
    ap.add_argument("--profile", default="tiny")
    args = ap.parse_args()

    from setrl.data import load_problems
    from setrl.store import Store
    from setrl.train.cpu import train_run

    cfg = load_config(DEFAULT_PIPELINE, args.profile)
    method = cfg.method(args.method).model_copy(update={"prompts_per_step": 8, "rollouts": 8,
                                                         "validate_every": 10**6, "checkpoint_every": 10**6})
    train = [p for spec in cfg.data.train for p in load_problems(spec)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        train_run(cfg, method, 0, Store(Path(tmp) / "bench.duckdb"), "bench", train, [], cfg.judge.candidates[0],
                  Path(tmp) / "ckpt", steps=args.steps, progress=False, on_step=lambda step, row: rows.append(row))
        wall = time.perf_counter() - t0

    print(f"train step, {method.prompts_per_step} prompts x {method.rollouts} rollouts, method {method.name}, "
          f"{args.steps} steps ({wall:.1f} s wall including model load and one final checkpoint)")
    print(f"{'step':>6} " + " ".join(f"{p[2:]:>8}" for p in PARTS) + f" {'total':>8} {'compl/s':>8} {'reward':>7}")
    for r in rows:
        total = sum(r[p] for p in PARTS)
        print(f"{r['step']:>6} " + " ".join(f"{r[p]:8.2f}" for p in PARTS)
              + f" {total:8.2f} {r['extra']['samples_per_s']:8.0f} {r['reward_mean']:7.3f}")
    steady = rows[1:] or rows
    mean = {p: sum(r[p] for r in steady) / len(steady) for p in PARTS}
    step_s = sum(mean.values())
    rate = sum(r["extra"]["samples_per_s"] for r in steady) / len(steady)
    print(f"{'mean':>6} " + " ".join(f"{mean[p]:8.2f}" for p in PARTS) + f" {step_s:8.2f} {rate:8.0f}"
          + ("   (steps 2..: step 1 excluded as warm-up)" if len(rows) > 1 else ""))
    lo, hi = PROTOTYPE_SAMPLES_PER_S
    print(f"sampling throughput: {rate:.0f} completions/s (prototype: {lo}-{hi} completions/s, batch 64)")
    verdict = "OK" if 100 * step_s <= TARGET_100_STEPS_S else "OVER"
    print(f"100 steps projected: {100 * step_s:.0f} s (target <= {TARGET_100_STEPS_S:.0f} s): {verdict}")


if __name__ == "__main__":
    main()
