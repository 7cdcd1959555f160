"""verl launch plumbing that needs no verl: metrics parsing and streaming, checkpoints, datasets."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from setrl.problem import Problem
from setrl.train import verl_launch as vl
from setrl.train.verl_config import LaunchSpec

SAMPLE = Path(__file__).with_name("data") / "verl_metrics_sample.jsonl"


def test_recorded_verl_log_maps_to_train_metrics(store):
    records = vl.MetricsTail(SAMPLE).poll()
    assert [s for s, _ in records] == [0, 1, 2]
    rows = [vl.metrics_row("s/poly_epo/seed0", "s", "poly_epo", 0, s, d) for s, d in records]
    assert store.insert("train_metrics", rows) == 3
    assert store.insert("train_metrics", rows) == 0  # a resumed run re-reading old lines adds nothing
    df = store.query("SELECT * FROM train_metrics ORDER BY step")
    assert df.validation_pass1.tolist() == pytest.approx([0.2889, float("nan"), 0.3111], nan_ok=True)
    one, two = df.iloc[1], df.iloc[2]
    assert one.reward_mean == 0.371 and one.pass_rate == 0.371 and one.distinct_correct_clusters == 1.47
    assert one.judge_failures == 1 and one.judge_failure_rate == 0.03125 and one.grad_norm == 0.183
    assert one.t_sample == 88.1 and one.t_update == 41.7 and one.t_score == 2.9 and one.response_len == 611.4
    assert two.kl_coef == 0.0138 and two.kl == 0.0009  # setrl's AKL coefficient wins over verl's controller value
    assert json.loads(one.extra)["perf/max_memory_allocated_gb"] == 51.2


def test_tail_keeps_a_torn_line_for_later(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text('{"step":1,"data":{"a":1}}\n{"step":2,"da')
    tail = vl.MetricsTail(path)
    assert tail.poll() == [(1, {"a": 1})]
    with open(path, "a") as f:
        f.write('ta":{"a":2}}\n')
    assert tail.poll() == [(2, {"a": 2})] and tail.poll() == []


def _fake_checkpoint(root: Path, step: int, latest: int | None = None):
    actor = root / f"global_step_{step}" / "actor"
    actor.mkdir(parents=True)
    (actor / "model.pt").write_bytes(b"w" * step)
    (root / "latest_checkpointed_iteration.txt").write_text(str(latest if latest is not None else step))


def test_only_completed_checkpoints_count_and_register_once(tmp_path, store):
    _fake_checkpoint(tmp_path, 25)
    _fake_checkpoint(tmp_path, 50, latest=25)  # step 50 still being written
    assert vl.checkpoint_steps(tmp_path) == [25]
    ids = vl.register_checkpoints(store, "s", tmp_path, "poly_epo", 0)
    assert ids == vl.register_checkpoints(store, "s", tmp_path, "poly_epo", 0)
    assert store.scalar("SELECT count(*) FROM artifacts WHERE kind = 'checkpoint'") == 1


def test_dataset_carries_the_problem_for_the_reward_manager(tmp_path):
    pd = pytest.importorskip("pandas")
    p = Problem(source="tiny", title="t", prompt="Write f.", entry_point="f", test_style="check", tests="def check(c): pass")
    path = vl.write_dataset([p, p], tmp_path / "train.parquet", "train")
    df = pd.read_parquet(path)
    assert list(df.prompt[0]) == [{"role": "user", "content": "Write f."}]
    assert Problem.from_dict(json.loads(df.reward_model[1]["ground_truth"])) == p
    assert df.extra_info[1]["index"] == 1 and df.extra_info[1]["split"] == "train"


def test_launch_streams_metrics_while_the_process_runs(tmp_path):
    """A stand-in for verl that writes two metric lines where VERL_FILE_LOGGER_PATH says."""
    script = ("import json, os, time\n"
              "p = os.environ['VERL_FILE_LOGGER_PATH']\n"
              "for s in (1, 2):\n"
              "    open(p, 'a').write(json.dumps({'step': s, 'data': {'critic/score/mean': s / 10}}) + '\\n'); time.sleep(0.3)\n")

    class Spec(LaunchSpec):
        def command(self):
            return [sys.executable, "-c", script]

    seen: list = []
    rc = vl.launch(Spec([], {}), tmp_path / "verl.log", tmp_path / "metrics-0.jsonl", seen.extend, poll_s=0.1)
    assert rc == 0 and [s for s, _ in seen] == [1, 2]
