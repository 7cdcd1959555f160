"""The CPU trainer end to end at small size: metric rows, resume without duplicates, same seed
same result (straight vs 2 + resume 2 steps), and resume after SIGKILL mid-run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from setrl.config import DEFAULT_PIPELINE, load_config
from setrl.store import Store
from setrl.train import checkpoint
from setrl.train.cpu import make_run_key, train_run
from tests.train.tiny_model import tiny_model, tiny_problems

SEED = 3
COMPARED = ["step", "reward_mean", "pass_rate", "distinct_correct_clusters", "judge_failures", "kl", "kl_coef",
            "entropy", "response_len", "loss", "grad_norm", "validation_pass1"]


@pytest.fixture(scope="module")
def model_path(tmp_path_factory) -> Path:
    return tiny_model(tmp_path_factory.mktemp("tiny-model"))


def setup(model_path: Path):
    """The smoke profile shrunk further: 4 prompts x 4 rollouts, 48 new tokens, EXPO's KL and
    curriculum on so that their state is part of what resume must restore, two PPO epochs so that
    clipping acts, and an entropy bonus so that the policy moves even when every rollout fails."""
    cfg = load_config(DEFAULT_PIPELINE, "smoke")
    cfg = cfg.model_copy(update={"model": cfg.model.model_copy(update={"path": str(model_path), "max_new_tokens": 48, "device": "cpu"}),
                                 "sandbox": cfg.sandbox.model_copy(update={"workers": 1})})
    method = cfg.method("poly_epo").model_copy(update={
        "kl": cfg.methods[0].kl.model_copy(update={"kind": "akl"}),
        "curriculum": cfg.methods[0].curriculum.model_copy(update={"kind": "gaussian"}),
        "loss": cfg.methods[0].loss.model_copy(update={"lr": 3e-3, "ppo_epochs": 2, "entropy_coef": 0.01}),
        "checkpoint_every": 2, "validate_every": 2})
    return cfg, method, tiny_problems(12, "train"), tiny_problems(3, "heldout")


def run(model_path: Path, db: Path, out: Path, steps: int):
    cfg, method, train, val = setup(model_path)
    return train_run(cfg, method, SEED, Store(db), "s/smoke", train, val, cfg.judge.candidates[0], out,
                     steps=steps, progress=False)


def metrics(db: Path, method: str = "poly_epo"):
    df = Store(db).query("SELECT * FROM train_metrics WHERE run_key = ? ORDER BY step", [make_run_key("s/smoke", method, SEED)])
    df["extra"] = [{k: v for k, v in json.loads(e).items() if k != "samples_per_s"} if isinstance(e, str) else None for e in df.extra]
    return df


def weights(ckpt: Path) -> dict:
    return load_file(str(ckpt / "model.safetensors"))


@pytest.fixture(scope="module")
def straight(model_path, tmp_path_factory):
    d = tmp_path_factory.mktemp("straight")
    result = run(model_path, d / "db.duckdb", d / "ckpt", 4)
    return result, metrics(d / "db.duckdb")


def assert_same_run(df, ref_df, ckpt: Path, ref_ckpt: Path):
    assert df[COMPARED].equals(ref_df[COMPARED]), (df[COMPARED], ref_df[COMPARED])
    assert list(df.extra) == list(ref_df.extra)
    a, b = weights(ckpt), weights(ref_ckpt)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_straight_run_writes_one_row_per_step(straight, model_path):
    result, df = straight
    assert result.steps_done == 4 and result.resumed_from is None
    assert df.step.tolist() == [0, 1, 2, 3, 4]  # step 0: validation of the initial model only
    assert df.validation_pass1.notna().tolist() == [True, False, True, False, True]
    train_rows = df[df.step > 0]
    assert train_rows[["reward_mean", "kl_coef", "entropy", "response_len", "t_sample", "t_update"]].notna().all().all()
    assert (train_rows.kl >= 0).all() and (train_rows.kl_coef > 0).all()
    assert sorted(p.name for p in result.final_checkpoint.parent.iterdir()) == ["fingerprint.txt", "step-0002", "step-0004"]
    # the policy moved away from the base weights
    base = weights(model_path)
    assert any(not torch.equal(base[k], v) for k, v in weights(result.final_checkpoint).items() if k in base)


def test_resume_reproduces_the_straight_run_without_duplicates(straight, model_path, tmp_path):
    db, out = tmp_path / "db.duckdb", tmp_path / "ckpt"
    first = run(model_path, db, out, 2)
    assert first.steps_done == 2
    second = run(model_path, db, out, 4)
    assert second.resumed_from == 2
    again = run(model_path, db, out, 4)  # nothing left to do: no rows, same checkpoint
    assert again.resumed_from == 4 and again.final_checkpoint == second.final_checkpoint
    df = metrics(db)
    assert df.step.tolist() == [0, 1, 2, 3, 4]
    n_rollouts = Store(db).scalar("SELECT count(*) FROM rollouts WHERE purpose = 'train'")
    assert n_rollouts == 4 * 4 * 4
    assert Store(db).scalar("SELECT count(*) FROM artifacts WHERE kind = 'checkpoint'") == 2
    assert_same_run(df, straight[1], second.final_checkpoint, straight[0].final_checkpoint)


def test_sigkill_mid_run_then_resume(straight, model_path, tmp_path):
    db, out = tmp_path / "db.duckdb", tmp_path / "ckpt"
    code = ("import sys; from pathlib import Path; from tests.train.test_train import run; "
            "run(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), 4)")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", code, str(model_path), str(db), str(out)], cwd=root,
                            env={**os.environ, "PYTHONPATH": str(root)})
    deadline = time.monotonic() + 120
    while checkpoint.latest(out) is None:
        assert proc.poll() is None, "trainer exited before its first checkpoint"
        assert time.monotonic() < deadline, "no checkpoint within 120 s"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert checkpoint.load_state(checkpoint.latest(out))["step"] == 2
    result = run(model_path, db, out, 4)
    assert result.resumed_from == 2
    assert_same_run(metrics(db), straight[1], result.final_checkpoint, straight[0].final_checkpoint)


def test_partial_checkpoints_are_ignored_and_cleaned(tmp_path):
    (tmp_path / "step-0007").mkdir()  # no state.json: never completed
    (tmp_path / f"{checkpoint.TMP_PREFIX}0008-123").mkdir()
    (tmp_path / "step-0003").mkdir()
    (tmp_path / "step-0003" / "state.json").write_text('{"step": 3}')
    assert checkpoint.latest(tmp_path).name == "step-0003"
    assert checkpoint.latest(tmp_path, max_step=2) is None
    checkpoint.clean_partial(tmp_path)
    assert not any(p.name.startswith(checkpoint.TMP_PREFIX) for p in tmp_path.iterdir())


def test_changed_configuration_starts_over_instead_of_resuming(model_path, tmp_path):
    """Same method name and seed, different learning rate: old checkpoints and rows must not be reused."""
    cfg, method, train, val = setup(model_path)
    method = method.model_copy(update={"steps": 2})
    store, out, judge = Store(tmp_path / "db.duckdb"), tmp_path / "ckpt", cfg.judge.candidates[0]
    assert train_run(cfg, method, SEED, store, "s", train, val, judge, out, progress=False).resumed_from is None
    assert train_run(cfg, method, SEED, store, "s", train, val, judge, out, progress=False).resumed_from == 2
    changed = method.model_copy(update={"loss": method.loss.model_copy(update={"lr": method.loss.lr / 2})})
    fresh = train_run(cfg, changed, SEED, store, "s", train, val, judge, out, progress=False)
    assert fresh.resumed_from is None and fresh.steps_done == 2
    assert store.scalar("SELECT max(n) FROM (SELECT count(*) AS n FROM train_metrics GROUP BY step)") == 1
    # raising only `steps` extends the run instead of restarting it
    longer = train_run(cfg, changed.model_copy(update={"steps": 4}), SEED, store, "s", train, val, judge, out, progress=False)
    assert longer.resumed_from == 2 and longer.steps_done == 4
