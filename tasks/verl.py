"""The GPU training task: launches verl (+ vLLM rollouts) for one (method, seed) run of the `full` profile.

Deployed on a GPU work pool (prefect.yaml: `train/full-gpu`); streams verl's metrics into DuckDB and
resumes from verl's last checkpoint when re-run. SETRL_VERL_MODE / SETRL_VERL_GPUS / SETRL_VERL_NODES
(job variables of the work pool) choose single GPU, one multi-GPU node, or a Ray cluster.
"""

from __future__ import annotations

import os
from pathlib import Path

from prefect import task

from setrl.prepare import problem_set
from setrl.runs import stage
from tasks.stages import _open, by_cache_key, judge_is_down


@task(name="train-verl", cache_key_fn=by_cache_key, persist_result=True,
      retries=1, retry_delay_seconds=30, retry_condition_fn=judge_is_down)
def verl_train_task(pipeline: str, profile: str, method: str, seed: int, judge: str, cache_key: str) -> str:
    """Train one run with verl on this machine's GPUs; returns the final checkpoint directory."""
    from setrl.train.verl_launch import run_verl_training

    cfg, store, study_id, run_id = _open(pipeline, profile)
    gpus = os.environ.get("SETRL_VERL_GPUS")
    with stage(store, run_id, study_id, f"train:{method}:seed{seed}", cache_key):
        result = run_verl_training(
            cfg, cfg.method(method), seed, store, study_id, Path(cfg.storage.artifacts) / "train" / method / f"seed{seed}",
            problem_set(store, study_id, "train"), problem_set(store, study_id, "validation"),
            judge_spec=next(j for j in cfg.judge.candidates if j.name == judge),
            mode=os.environ.get("SETRL_VERL_MODE", "single"), gpus=int(gpus) if gpus else None,
            nodes=int(os.environ.get("SETRL_VERL_NODES", "1")))
    return str(result.final_checkpoint)
