"""The GPU training task: launches verl (+ vLLM rollouts) for one (method, seed) run of the `full` profile.

Deployed on a GPU work pool (prefect.yaml: `train/full-gpu`); streams verl's metrics into DuckDB and
resumes from verl's last checkpoint when re-run.
"""

from __future__ import annotations

from pathlib import Path

from prefect import task

from setrl.runs import stage
from tasks.stages import _open, by_cache_key, judge_is_down
from tasks.progress import StageProgress


@task(name="train-verl", cache_key_fn=by_cache_key, persist_result=True,
      retries=1, retry_delay_seconds=30, retry_condition_fn=judge_is_down)
def verl_train_task(pipeline: str, profile: str, method: str, seed: int, judge: str, cache_key: str) -> str:
    """Train one run with verl on this machine's GPUs; returns the final checkpoint directory."""
    from setrl.train.verl_launch import run_verl_training

    cfg, store, study_id, run_id = _open(pipeline, profile)
    m = cfg.method(method)
    out_dir = Path(cfg.storage.artifacts) / "train" / method / f"seed{seed}"
    progress = StageProgress(f"train-{method}-seed{seed}")
    with stage(store, run_id, study_id, f"train:{method}:seed{seed}", cache_key):
        result = run_verl_training(cfg, m, seed, store, study_id, out_dir, judge_name=judge,
                                   on_step=lambda step, _metrics: progress(step, m.steps, "steps"))
    return str(result.final_checkpoint)
