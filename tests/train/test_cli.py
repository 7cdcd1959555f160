"""`setrl train` and `setrl eval` at the smallest size, through the real CLI."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from setrl.cli import app
from setrl.config import DEFAULT_PIPELINE, write_variant
from tests.train.tiny_model import tiny_model


def test_train_then_eval_commands(tmp_path):
    model = tiny_model(tmp_path / "model")
    pipeline = write_variant(DEFAULT_PIPELINE, tmp_path / "pipeline.yaml", "smoke", {
        "model": {"path": str(model), "max_new_tokens": 32},
        "data": {"train": [{"source": "tiny", "split": "train", "limit": 8}],
                 "eval": [{"source": "tiny", "split": "heldout", "limit": 2}], "validation_size": 2},
        "eval": {"n": 4, "ks": [1, 2, 4], "bootstrap": 20},
        "storage": {"db": str(tmp_path / "db.duckdb"), "artifacts": str(tmp_path / "artifacts")}})
    runner = CliRunner()
    res = runner.invoke(app, ["train", "--pipeline", str(pipeline), "--profile", "smoke", "--method", "dr_grpo", "--steps", "1"])
    assert res.exit_code == 0, res.output
    assert "run exploration-rl-code/smoke/dr_grpo/seed0: 1 steps" in res.output
    ckpt = tmp_path / "artifacts" / "train" / "dr_grpo" / "seed0" / "step-0001"
    assert (ckpt / "state.json").exists()

    res = runner.invoke(app, ["eval", "--pipeline", str(pipeline), "--profile", "smoke", "--model", str(ckpt), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)  # stdout only: model loading draws progress bars on stderr
    assert out["model_id"].startswith("path:") and out["problems"] == 2
    assert [r["k"] for r in out["pass_at_k"]] == [1, 2, 4]
    assert set(out["difficulty_band"]) >= {"pass@1", "in_band"}

    res = runner.invoke(app, ["train", "--pipeline", str(pipeline), "--profile", "smoke", "--method", "nope"])
    assert res.exit_code == 2 and "no method 'nope'" in res.output
