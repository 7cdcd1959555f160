"""End to end through a real Prefect server (the test harness), real DuckDB, the smoke profile.

1. A judge outage mid-study, then resume: results identical to an uninterrupted run, zero repeated
   judge requests for groups already judged, no duplicate rows.
2. The flow process killed during training, then resume from the last checkpoint.
3. A broken pipeline.yaml fails before any work with a clear message.

Flows run as subprocesses (`python -m flows.full_study`) against the harness's API, as a worker
would run them, so a SIGKILL really kills the flow process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from setrl.config import load_config, write_variant
from setrl.store import Store
from tests.conftest import REPO
from tests.support.fake_chat_server import FakeChatServer

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def prefect_api(tmp_path_factory):
    results = tmp_path_factory.mktemp("prefect-results")
    os.environ["PREFECT_RESULTS_LOCAL_STORAGE_PATH"] = str(results)
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
    from prefect.settings import PREFECT_API_URL
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield {"PREFECT_API_URL": PREFECT_API_URL.value(), "PREFECT_RESULTS_LOCAL_STORAGE_PATH": str(results)}


def run_study(pipeline: Path, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flows.full_study", "--profile", "smoke", "--pipeline", str(pipeline)],
                          cwd=REPO, env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout)


def smoke_variant(tmp: Path, name: str, **overrides) -> Path:
    d = tmp / name
    d.mkdir()
    storage = {"storage": {"db": str(d / "study.duckdb"), "artifacts": str(d / "artifacts")}}
    return write_variant(REPO / "pipeline.yaml", d / "pipeline.yaml", "smoke", {**storage, **overrides})


def llm_judge(url: str) -> dict:
    """The smoke study judged by an LLM (the fake server) whose outage must stop the study."""
    return {"judge": {"candidates": [{"name": "llm", "kind": "openai", "model": "fake-judge", "base_url": url,
                                      "api_key_env": "FAKE_JUDGE_KEY", "max_retries": 2, "timeout_s": 5}],
                      "calibration_sets": ["data/calibration/leetcode.jsonl"], "failure_policy": "fail"}}


RESULT_QUERIES = {
    "pass_at_k": "SELECT model_id, k, round(pass_at_k, 9) FROM pass_at_k ORDER BY ALL",
    "train": "SELECT run_key, step, round(reward_mean, 9), round(distinct_correct_clusters, 9), round(loss, 6) "
             "FROM train_metrics ORDER BY ALL",
    "eval": "SELECT model_id, problem_id, n, c, distinct_correct_clusters FROM eval_problems ORDER BY ALL",
    "judgments": "SELECT cache_key, cluster_ids FROM judgments WHERE NOT failed ORDER BY ALL",
}

UNIQUE_KEYS = {"train_metrics": "run_key, step", "rollouts": "rollout_id", "eval_problems": "study_id, model_id, problem_id",
               "pass_at_k": "study_id, model_id, k", "judgments": "cache_key", "problem_sets": "study_id, set_name, problem_id"}


def _plain(v):
    """Comparable cell: arrays as lists, NaN as None (NaN != NaN would fail equal results)."""
    if hasattr(v, "tolist"):
        return v.tolist()
    return None if isinstance(v, float) and v != v else v


def results(db: Path) -> dict:
    store = Store(db, read_only=True)
    return {name: [[_plain(v) for v in row] for row in store.query(q).itertuples(index=False)]
            for name, q in RESULT_QUERIES.items()}


def assert_no_duplicates(db: Path) -> None:
    store = Store(db, read_only=True)
    for table, key in UNIQUE_KEYS.items():
        dup = store.scalar(f"SELECT count(*) FROM (SELECT {key} FROM {table} GROUP BY ALL HAVING count(*) > 1)")
        assert dup == 0, f"duplicate rows in {table}"


def test_judge_outage_then_resume_matches_uninterrupted_run(prefect_api, tmp_path):
    env = {**prefect_api, "FAKE_JUDGE_KEY": "sk-test"}
    with FakeChatServer() as ref_server:
        ref = smoke_variant(tmp_path, "reference", **llm_judge(ref_server.url))
        done = run_study(ref, env)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with FakeChatServer() as server:
        flaky = smoke_variant(tmp_path, "outage", **llm_judge(server.url))
        calibration_groups = 12
        server.control(mode="down", after=calibration_groups + 6)  # dies mid-training
        failed = run_study(flaky, env)
        assert failed.returncode != 0
        assert "judge is down" in (failed.stdout + failed.stderr).lower()
        db = Path(load_config(flaky, "smoke").storage.db)
        judged_before = Store(db, read_only=True).scalar("SELECT count(*) FROM judgments WHERE NOT failed")
        assert judged_before >= calibration_groups + 6  # everything answered before the outage was kept

        server.control(mode="ok")
        resumed = run_study(flaky, env)
        assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]

    calls = Store(db, read_only=True).query(
        "SELECT cache_key, count(*) AS answered FROM judge_calls WHERE outcome = 'ok' GROUP BY 1")
    assert len(calls) > judged_before
    assert calls.answered.max() == 1, "a group that was already judged was sent to the judge again"
    assert_no_duplicates(db)
    assert results(db) == results(Path(load_config(ref, "smoke").storage.db))


def test_killed_during_training_resumes_from_checkpoint(prefect_api, tmp_path):
    pipeline = smoke_variant(tmp_path, "killed")
    cfg = load_config(pipeline, "smoke")
    first = cfg.methods[0]
    ckpt_root = Path(cfg.storage.artifacts) / "train" / first.name / f"seed{first.seeds[0]}"
    proc = subprocess.Popen([sys.executable, "-m", "flows.full_study", "--profile", "smoke", "--pipeline", str(pipeline)],
                            cwd=REPO, env={**os.environ, **prefect_api}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 400
    while time.monotonic() < deadline and proc.poll() is None:
        if ckpt_root.exists() and any(p.name.startswith("step-") for p in ckpt_root.iterdir()):
            break
        time.sleep(0.2)
    assert proc.poll() is None, "the study ended before its first checkpoint: nothing to kill"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    saved = sorted(p for p in ckpt_root.iterdir() if p.name.startswith("step-"))
    assert saved, "no checkpoint was written before the kill"
    first_ckpt, first_mtime = saved[0], saved[0].stat().st_mtime

    resumed = run_study(pipeline, prefect_api)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert first_ckpt.stat().st_mtime == first_mtime, "the resumed run redid steps already checkpointed"
    store = Store(cfg.storage.db, read_only=True)
    steps = store.query("SELECT method, seed, count(*) AS n, max(step) AS last FROM train_metrics GROUP BY ALL")
    assert len(steps) == sum(len(m.seeds) for m in cfg.methods)
    # one row per step 0..last (step 0: validation of the base model), none duplicated
    assert (steps.n == steps["last"] + 1).all() and set(steps["last"]) == {m.steps for m in cfg.methods}
    assert_no_duplicates(cfg.storage.db)
    assert store.scalar("SELECT count(*) FROM pass_at_k WHERE model_id = method") > 0


def test_broken_pipeline_fails_before_any_work(prefect_api, tmp_path):
    pipeline = smoke_variant(tmp_path, "broken")
    raw = yaml.safe_load(pipeline.read_text())
    raw["profiles"]["smoke"]["eval"]["ks"] = [1, 2, 4, 8, 16]  # k=16 > n=8 samples
    pipeline.write_text(yaml.safe_dump(raw))
    out = run_study(pipeline, prefect_api, timeout=120)
    assert out.returncode != 0
    err = out.stdout + out.stderr
    assert "profile smoke" in err and "eval" in err and "[16]" in err and "n=8" in err
    assert not (tmp_path / "broken" / "study.duckdb").exists(), "work started despite the invalid config"
