"""Wall time of whole studies, split by stage, and Prefect's orchestration overhead.

    .venv/bin/python benchmarks/study.py [--profiles smoke tiny]

For each profile, on fresh stores: (1) the orchestrated DAG (`full_study`, ephemeral Prefect API)
and (2) the same stage functions called directly (the baseline), in the same run. Prints per-stage
seconds from the store's stage_runs table, both totals, the overhead ratio, and PASS/FAIL against the
targets (smoke < 3 min, tiny < 15 min, overhead < 10%).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.chdir(REPO)
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")

from setrl.config import load_config, write_variant  # noqa: E402
from setrl.store import Store  # noqa: E402

TARGET_S = {"smoke": 180, "tiny": 900}


def fresh_pipeline(profile: str, root: Path, tag: str) -> str:
    d = root / tag
    d.mkdir()
    return str(write_variant(REPO / "pipeline.yaml", d / "pipeline.yaml", profile,
                             {"storage": {"db": str(d / "study.duckdb"), "artifacts": str(d / "artifacts")}}))


def direct(pipeline: str, profile: str) -> float:
    """The DAG without Prefect: the library stage functions called in order."""
    from setrl.evaluate import evaluate_model, pooled_pass_at_k, significance
    from setrl.judge.calibration import calibrate
    from setrl.prepare import prepare_data, problem_set, study_id_of
    from setrl.report import build_report
    from setrl.train.cpu import train_run

    t0 = time.perf_counter()
    cfg = load_config(pipeline, profile)
    store, sid = Store(cfg.storage.db), study_id_of(cfg)
    prepare_data(cfg, store)
    judge = calibrate(cfg, store, sid).selected
    train, val, ev = (problem_set(store, sid, s) for s in ("train", "validation", "eval"))
    models = [("base", "base", None, cfg.model.path)]
    for m in cfg.methods:
        for seed in m.seeds:
            out = Path(cfg.storage.artifacts) / "train" / m.name / f"seed{seed}"
            r = train_run(cfg, m, seed, store, sid, train, val, judge, out, progress=False)
            models.append((f"{m.name}/seed{seed}", m.name, seed, str(r.final_checkpoint)))
    for model_id, method, seed, path in models:
        evaluate_model(cfg, store, sid, model_id, method, seed, path, ev, judge, progress=False)
    names = ["base"] + [m.name for m in cfg.methods]
    for m in names:
        pooled_pass_at_k(store, sid, m, cfg.eval.ks, n_boot=cfg.eval.bootstrap, ci=cfg.eval.ci)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            significance(store, sid, b, a, cfg.eval.ks, n_boot=cfg.eval.bootstrap, ci=cfg.eval.ci)
    build_report(store, sid, Path(cfg.storage.artifacts) / "report")
    return time.perf_counter() - t0


def orchestrated(pipeline: str, profile: str) -> tuple[float, "object"]:
    from flows.full_study import full_study

    t0 = time.perf_counter()
    full_study(profile=profile, pipeline=pipeline)
    wall = time.perf_counter() - t0
    cfg = load_config(pipeline, profile)
    stages = Store(cfg.storage.db).query(
        "SELECT regexp_replace(stage, ':seed\\d+$', '') AS stage, round(sum(seconds), 1) AS seconds "
        "FROM stage_runs WHERE status = 'completed' GROUP BY 1 ORDER BY min(started_at)")
    return wall, stages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profiles", nargs="+", default=["smoke"], help="profiles to time (smoke, tiny)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="setrl-bench-") as tmp:
        for profile in args.profiles:
            # the direct baseline first, so the orchestrated run cannot benefit from warmer OS caches
            base = direct(fresh_pipeline(profile, Path(tmp), f"{profile}-direct"), profile)
            wall, stages = orchestrated(fresh_pipeline(profile, Path(tmp), f"{profile}-prefect"), profile)
            overhead = (wall - base) / base
            print(f"\n== {profile}: seconds per stage (orchestrated run)")
            print(stages.to_string(index=False))
            print(f"direct stage calls (baseline): {base:8.1f} s")
            print(f"Prefect-orchestrated DAG:      {wall:8.1f} s   ratio {wall / base:.3f}  overhead {100 * overhead:+.1f}%")
            target = TARGET_S.get(profile)
            if target:
                print(f"{'PASS' if wall < target else 'FAIL'}: {profile} study in {wall:.0f} s (target < {target} s)")
            print(f"{'PASS' if overhead < 0.10 else 'FAIL'}: orchestration overhead {100 * overhead:.1f}% (target < 10%)")


if __name__ == "__main__":
    main()
