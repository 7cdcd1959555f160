"""Bookkeeping of studies, runs and stage runs in the store (what ran, when, with which inputs, and how it ended)."""

from __future__ import annotations

import subprocess
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from setrl.config import StudyConfig
from setrl.prepare import study_id_of
from setrl.problem import content_hash
from setrl.store import Store

REPO = Path(__file__).resolve().parent.parent


def now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def git_revision() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=5)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, timeout=5)
        return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "") if rev.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def register_study(store: Store, cfg: StudyConfig) -> str:
    """Insert the study row once; returns its creation time, which identifies this store's copy of the study."""
    study_id = study_id_of(cfg)
    store.insert("studies", [{"study_id": study_id, "name": cfg.study, "profile": cfg.profile,
                              "config_hash": cfg.config_hash(), "config_json": cfg.model_dump(mode="json")}])
    return str(store.scalar("SELECT created_at FROM studies WHERE study_id = ?", [study_id]))


def start_run(store: Store, cfg: StudyConfig, run_id: str, orchestrator: str) -> None:
    store.upsert("runs", [{"run_id": run_id, "study_id": study_id_of(cfg), "profile": cfg.profile,
                           "config_hash": cfg.config_hash(), "git_rev": git_revision(), "orchestrator": orchestrator,
                           "status": "running", "started_at": now(), "finished_at": None, "error": None}])


def finish_run(store: Store, run_id: str, error: str | None = None) -> None:
    store.execute("UPDATE runs SET status = ?, finished_at = ?, error = ? WHERE run_id = ?",
                  ["failed" if error else "completed", now(), error, run_id])


@contextmanager
def stage(store: Store, run_id: str, study_id: str, name: str, inputs: object) -> Iterator[str]:
    """Record a stage run: 'running' on entry, then 'completed' or 'failed' with the error and timings."""
    inputs_hash = content_hash(inputs)
    stage_run_id = content_hash(run_id, name, inputs_hash)
    started, t0 = now(), time.monotonic()
    row = {"stage_run_id": stage_run_id, "run_id": run_id, "study_id": study_id, "stage": name,
           "inputs_hash": inputs_hash, "status": "running", "started_at": started, "finished_at": None,
           "seconds": None, "error": None}
    store.upsert("stage_runs", [row])
    try:
        yield inputs_hash
    except BaseException as e:  # KeyboardInterrupt too: the row must not stay 'running'
        store.upsert("stage_runs", [{**row, "status": "failed", "finished_at": now(),
                                     "seconds": time.monotonic() - t0,
                                     "error": f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}"}])
        raise
    store.upsert("stage_runs", [{**row, "status": "completed", "finished_at": now(), "seconds": time.monotonic() - t0}])
