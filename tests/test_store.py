"""The DuckDB store: idempotent writes, artifacts, readers while a writer works, lock retries."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from setrl.store import Store, StoreLockedError


def test_schema_has_the_core_tables(store):
    tables = set(store.query("SELECT table_name FROM information_schema.tables").table_name)
    assert {"studies", "runs", "stage_runs", "problems", "rollouts", "judgments", "train_metrics",
            "eval_problems", "pass_at_k", "artifacts", "calibration", "significance"} <= tables


def test_insert_is_idempotent_on_primary_key(store):
    row = {"rollout_id": "r1", "study_id": "s", "purpose": "train", "problem_id": "p", "sample_idx": 0,
           "text": "x", "reward": 1.0}
    assert store.insert("rollouts", [row]) == 1
    assert store.insert("rollouts", [row, {**row, "rollout_id": "r2"}]) == 1
    assert store.scalar("SELECT count(*) FROM rollouts") == 2


def test_upsert_replaces_and_json_roundtrips(store):
    store.upsert("stage_runs", [{"stage_run_id": "a", "stage": "prepare", "status": "running"}])
    store.upsert("stage_runs", [{"stage_run_id": "a", "stage": "prepare", "status": "completed"}])
    assert store.query("SELECT status FROM stage_runs").status.tolist() == ["completed"]
    store.insert("judgments", [{"cache_key": "k", "cluster_ids": [0, 1, 100], "rationales": ["a", "b", "c"]}])
    df = store.query("SELECT cluster_ids, rationales->>'$[2]' AS r2 FROM judgments")
    assert list(df.cluster_ids[0]) == [0, 1, 100] and df.r2[0] == "c"


def test_replace_is_scoped(store):
    rows = [{"study_id": s, "set_name": "train", "problem_id": p} for s in ("a", "b") for p in ("p1", "p2")]
    store.insert("problem_sets", rows)
    store.replace("problem_sets", "study_id = ?", ["a"], [{"study_id": "a", "set_name": "eval", "problem_id": "p3"}])
    df = store.query("SELECT study_id, set_name, problem_id FROM problem_sets ORDER BY ALL")
    assert df.values.tolist() == [["a", "eval", "p3"], ["b", "train", "p1"], ["b", "train", "p2"]]


def test_register_artifact_hashes_files_and_dirs(store, tmp_path):
    f = tmp_path / "plot.png"
    f.write_bytes(b"\x89PNG" + b"0" * 100)
    d = tmp_path / "ckpt"
    d.mkdir()
    (d / "model.safetensors").write_bytes(b"w" * 1000)
    (d / "config.json").write_text("{}")
    a1 = store.register_artifact("s", "plot", "pass_at_k", f)
    assert store.register_artifact("s", "plot", "pass_at_k", f) == a1  # same content, same row
    store.register_artifact("s", "checkpoint", "step-2", d)
    df = store.query("SELECT kind, bytes, length(sha256) AS h FROM artifacts ORDER BY kind")
    assert df.values.tolist() == [["checkpoint", 1002, 64], ["plot", 104, 64]]
    f.write_bytes(b"changed")
    assert store.register_artifact("s", "plot", "pass_at_k", f) != a1


HOLD_LOCK = """
import duckdb, sys, time
con = duckdb.connect(sys.argv[1])
con.execute("INSERT INTO runs (run_id) VALUES ('from-other-process')")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
"""


def test_locked_file_is_retried_not_a_crash(store):
    """Another process holding the file: our writes wait for it, then succeed."""
    p = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(store.path), "1.5"], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "locked"
    t0 = time.monotonic()
    store.insert("runs", [{"run_id": "mine"}])
    assert time.monotonic() - t0 > 0.5  # it really waited for the other process
    p.wait(timeout=10)
    assert sorted(store.query("SELECT run_id FROM runs").run_id) == ["from-other-process", "mine"]


def test_lock_timeout_gives_a_clear_error(store):
    p = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(store.path), "5"], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "locked"
        impatient = Store(store.path, lock_timeout_s=0.5, read_only=True)
        with pytest.raises(StoreLockedError, match="stayed locked"):
            impatient.query("SELECT count(*) FROM runs")
    finally:
        p.kill()
        p.wait()


def test_reader_in_other_process_sees_committed_rows(store):
    store.insert("runs", [{"run_id": "r1", "status": "running"}])
    out = subprocess.run([sys.executable, "-m", "setrl.cli", "sql", "--db", str(store.path), "--format", "csv",
                          "SELECT run_id, status FROM runs"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["run_id,status", "r1,running"]
