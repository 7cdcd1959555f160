"""Run one (method, seed) of the `full` profile on verl: write its data, launch verl as a
subprocess, stream its step metrics into `train_metrics`, register its checkpoints.

`run_verl_training` is the plain function the orchestration's GPU work-pool task calls.
Resuming is verl's own (`trainer.resume_mode=auto` picks the newest `global_step_*` under
`<out_dir>/checkpoints`); rows already in DuckDB are skipped by `Store.insert`.

Metrics come from verl's `file` logger (verl/utils/tracking.py FileLogger): one JSON line
`{"step": k, "data": {...}}` per step. It opens its file with "wb", truncating it, so each
launch attempt writes its own `metrics-<attempt>.jsonl`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from setrl.config import JudgeSpec, MethodConfig, StudyConfig
from setrl.problem import Problem
from setrl.store import Store
from setrl.train.verl_config import LaunchSpec, Mode, launch_spec

DATA_SOURCE = "setrl"
STEP_DIR = re.compile(r"^global_step_(\d+)$")
VAL_PASS1 = re.compile(r"^val-core/[^/]+/acc/mean@1$")

# train_metrics column <- verl metric key (first present wins)
COLUMNS: dict[str, tuple[str, ...]] = {
    "reward_mean": ("critic/score/mean",),
    "pass_rate": ("setrl/pass_rate",),
    "distinct_correct_clusters": ("setrl/distinct_correct_clusters",),
    "judge_failure_rate": ("setrl/judge_failure_rate",),
    "kl": ("actor/kl_loss", "actor/reward_kl_penalty"),
    "kl_coef": ("setrl/kl_coef", "actor/kl_coef", "actor/reward_kl_penalty_coeff"),
    "entropy": ("actor/entropy",),
    "response_len": ("response_length/mean",),
    "loss": ("actor/pg_loss",),
    "grad_norm": ("actor/grad_norm",),
    "t_sample": ("timing_s/gen",),
    "t_score": ("agent_loop/compute_score/mean", "timing_s/reward"),
    "t_update": ("timing_s/update_actor",),
}


def write_dataset(problems: Sequence[Problem], path: str | Path, split: str) -> Path:
    """verl's RL parquet: chat prompt, the Problem as ground truth (the reward manager runs its
    tests), extra_info.index = row (the curriculum's question id) and split."""
    import pandas as pd

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{
        "data_source": DATA_SOURCE,
        "prompt": [{"role": "user", "content": p.prompt}],
        "ability": "code",
        "reward_model": {"style": "rule", "ground_truth": json.dumps(p.to_dict(), sort_keys=True)},
        "extra_info": {"index": i, "split": split, "problem_id": p.problem_id},
    } for i, p in enumerate(problems)]
    tmp = path.with_suffix(".tmp")
    pd.DataFrame(rows).to_parquet(tmp, index=False)
    os.replace(tmp, path)
    return path


def parse_metrics_line(line: str) -> tuple[int, dict[str, Any]] | None:
    """(step, metrics) from one FileLogger line; None for a blank or torn (partly written) line."""
    line = line.strip()
    if not line:
        return None
    try:
        rec = json.loads(line)
    except json.JSONDecodeError:
        return None
    return int(rec["step"]), dict(rec.get("data") or {})


def metrics_row(run_key: str, study_id: str, method: str, seed: int, step: int, data: dict[str, Any]) -> dict:
    """One `train_metrics` row: mapped columns plus every numeric verl metric in `extra`."""
    row: dict[str, Any] = {"run_key": run_key, "study_id": study_id, "method": method, "seed": seed, "step": step}
    for col, keys in COLUMNS.items():
        row[col] = next((float(data[k]) for k in keys if isinstance(data.get(k), (int, float))), None)
    failures = data.get("setrl/judge_failures")
    row["judge_failures"] = int(failures) if isinstance(failures, (int, float)) else None
    row["validation_pass1"] = next((float(v) for k, v in data.items() if VAL_PASS1.match(k)), None)
    row["extra"] = {k: v for k, v in data.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return row


class MetricsTail:
    """Follows a growing JSONL file; `poll()` returns the complete lines added since the last call."""

    def __init__(self, path: str | Path):
        self.path, self.offset = Path(path), 0

    def poll(self) -> list[tuple[int, dict[str, Any]]]:
        if not self.path.exists():
            return []
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            chunk = f.read()
        end = chunk.rfind(b"\n") + 1  # keep a torn last line for the next poll
        self.offset += end
        return [rec for rec in map(parse_metrics_line, chunk[:end].decode().splitlines()) if rec is not None]


def checkpoint_steps(ckpt_dir: str | Path) -> list[int]:
    """Completed checkpoint steps: global_step_* dirs up to verl's latest_checkpointed_iteration.txt
    (written after the step's files, so a crash mid-save never counts)."""
    ckpt_dir = Path(ckpt_dir)
    tracker = ckpt_dir / "latest_checkpointed_iteration.txt"
    if not tracker.exists():
        return []
    latest = int(tracker.read_text().strip() or 0)
    steps = [int(m.group(1)) for d in ckpt_dir.iterdir() if d.is_dir() and (m := STEP_DIR.match(d.name))]
    return sorted(s for s in steps if s <= latest)


def register_checkpoints(store: Store, study_id: str, ckpt_dir: str | Path, method: str, seed: int) -> list[str]:
    """Register every completed checkpoint's actor folder (idempotent: same files, same id)."""
    ids = []
    for step in checkpoint_steps(ckpt_dir):
        actor = Path(ckpt_dir) / f"global_step_{step}" / "actor"
        if actor.exists():
            ids.append(store.register_artifact(study_id, "checkpoint", f"{method}/seed{seed}/step{step}", actor,
                                               {"backend": "verl", "method": method, "seed": seed, "step": step}))
    return ids


def launch(spec: LaunchSpec, log_path: str | Path, metrics_path: str | Path,
           on_metrics: Callable[[list[tuple[int, dict]]], None], poll_s: float = 5.0,
           cwd: str | Path | None = None) -> int:
    """Run verl (or `ray job submit`) to completion, feeding new metric lines to `on_metrics`."""
    # In ray mode the variables reach verl through the job's runtime env, so they go in the spec.
    spec = dataclasses.replace(spec, env={**spec.env, "VERL_FILE_LOGGER_PATH": str(metrics_path)})
    env = {**os.environ, **spec.env}
    tail = MetricsTail(metrics_path)
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(spec.command(), env=env, stdout=log, stderr=subprocess.STDOUT, cwd=cwd)
        try:
            while proc.poll() is None:
                time.sleep(poll_s)
                on_metrics(tail.poll())
        except BaseException:
            proc.terminate()  # our own child: a cancelled task must not leave verl holding the GPUs
            proc.wait(timeout=60)
            raise
    on_metrics(tail.poll())
    return proc.returncode


def hf_model_dir(ckpt_dir: Path, step: int) -> Path:
    """The Hugging Face model verl saves in a checkpoint (save_contents includes hf_model)."""
    return ckpt_dir / f"global_step_{step}" / "actor" / "huggingface"


def run_verl_training(cfg: StudyConfig, method: MethodConfig, seed: int, store: Store, study_id: str,
                      out_dir: str | Path, train_problems: Sequence[Problem], validation_problems: Sequence[Problem],
                      judge_spec: JudgeSpec | None = None, mode: Mode = "single", gpus: int | None = None,
                      nodes: int = 1, ray_address: str = "http://127.0.0.1:8265", poll_s: float = 5.0):
    """Train `method` with seed `seed` on verl, resuming from `<out_dir>/checkpoints`.

    Returns setrl.train.cpu.TrainResult(final_checkpoint, steps_done, resumed_from). Raises
    RuntimeError when verl exits non-zero (metrics and checkpoints so far are kept; a re-run
    resumes). In ray mode out_dir must be on storage every node sees.
    """
    from setrl.train.cpu import TrainResult, make_run_key

    out_dir = Path(out_dir).resolve()
    ckpt_dir = out_dir / "checkpoints"
    done = checkpoint_steps(ckpt_dir) if ckpt_dir.exists() else []
    resumed_from = done[-1] if done else None
    if resumed_from is not None and resumed_from >= method.steps:
        return TrainResult(hf_model_dir(ckpt_dir, resumed_from), resumed_from, resumed_from)

    write_dataset(train_problems, out_dir / "data" / "train.parquet", "train")
    write_dataset(validation_problems or train_problems[:1], out_dir / "data" / "validation.parquet", "validation")
    spec = launch_spec(cfg, method, seed, out_dir, mode=mode, gpus=gpus, nodes=nodes, judge=judge_spec,
                       db=str(Path(store.path).resolve()), ray_address=ray_address)
    run_key = make_run_key(study_id, method.name, seed)
    attempt = len(list(out_dir.glob("metrics-*.jsonl")))

    def on_metrics(records: list[tuple[int, dict]]) -> None:
        store.insert("train_metrics", [metrics_row(run_key, study_id, method.name, seed, s, d) for s, d in records])

    rc = launch(spec, out_dir / "verl.log", out_dir / f"metrics-{attempt}.jsonl", on_metrics, poll_s=poll_s)
    register_checkpoints(store, study_id, ckpt_dir, method.name, seed)
    steps = checkpoint_steps(ckpt_dir)
    if rc != 0:
        raise RuntimeError(f"verl exited with {rc} (log: {out_dir / 'verl.log'}); "
                           f"last checkpoint: {steps[-1] if steps else 'none'}; re-run to resume")
    last = steps[-1] if steps else 0
    return TrainResult(hf_model_dir(ckpt_dir, last), last, resumed_from)
