"""Stage 1 through the real tiny model and sandbox: the pass band, the split, dedup, and resume."""

from __future__ import annotations

import pytest

from setrl.config import load_config
from setrl.prepare import prepare_data, problem_set, study_id_of
from setrl.store import Store
from tests.conftest import REPO


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    cfg = load_config(REPO / "pipeline.yaml", "smoke")
    d = tmp_path_factory.mktemp("prepare")
    cfg = cfg.model_copy(update={"storage": cfg.storage.model_copy(update={"db": str(d / "db.duckdb")})})
    store = Store(cfg.storage.db)
    return cfg, store, prepare_data(cfg, store)


def test_every_training_problem_was_sampled_and_scored(prepared):
    cfg, store, data = prepared
    df = store.query("SELECT problem_id, count(*) AS n, sum(reward) AS c, count(status) AS scored "
                     "FROM rollouts WHERE purpose = 'filter' GROUP BY 1")
    assert len(df) == cfg.data.train[0].limit
    assert (df.n == cfg.data.samples_per_problem).all() and (df.scored == df.n).all()


def test_kept_problems_lie_in_the_band_and_dropped_say_why(prepared):
    cfg, store, data = prepared
    lo, hi = cfg.data.pass_band
    sets = store.query("SELECT set_name, problem_id, pass_count, reason FROM problem_sets")
    kept = sets[sets.set_name.isin(["train", "validation"])]
    assert kept.pass_count.between(lo, hi).all()
    dropped = sets[(sets.set_name == "dropped") & sets.pass_count.notna()]
    assert ((dropped.pass_count < lo) | (dropped.pass_count > hi)).all()
    assert all(("too_hard" in r) == (c < lo) for r, c in zip(dropped.reason, dropped.pass_count))
    assert len(data.validation) == cfg.data.validation_size
    assert not set(data.validation) & set(data.train)
    # counts agree with the rollouts themselves
    c = store.query("SELECT problem_id, sum(reward)::INT AS c FROM rollouts WHERE purpose = 'filter' GROUP BY 1")
    counted = dict(zip(c.problem_id, c.c))
    banded = sets[sets.pass_count.notna()]
    assert all(counted[p] == n for p, n in zip(banded.problem_id, banded.pass_count))
    assert {p.problem_id for p in problem_set(store, study_id_of(cfg), "train")} == set(data.train)


def test_eval_problems_are_disjoint_from_train(prepared):
    cfg, store, data = prepared
    assert data.eval and not set(data.eval) & (set(data.train) | set(data.validation))
    ev = problem_set(store, study_id_of(cfg), "eval")
    train_templates = {p.meta["template"] for p in problem_set(store, study_id_of(cfg), "train")}
    assert not {p.meta["template"] for p in ev} & train_templates  # held-out templates only


def test_rerun_resamples_nothing_and_gives_the_same_sets(prepared):
    cfg, store, data = prepared
    before = store.scalar("SELECT count(*) FROM rollouts")
    again = prepare_data(cfg, store)
    assert again == data
    assert store.scalar("SELECT count(*) FROM rollouts") == before


def test_band_that_keeps_too_few_problems_is_a_clear_error(prepared):
    cfg, store, _ = prepared
    narrow = cfg.model_copy(update={"data": cfg.data.model_copy(update={"pass_band": (8, 8), "validation_size": 4})})
    with pytest.raises(ValueError, match="pass band 8..8"):
        prepare_data(narrow, store)


def test_contamination_control_is_recorded(prepared):
    """LiveCodeBench as the eval set: problems released before the cutoff are dropped, and say so."""
    from setrl.config import DatasetSpec

    cfg, store, data = prepared
    lcb = DatasetSpec(source="livecodebench", split="test", path=str(REPO / "tests/fixtures/livecodebench_sample.jsonl"),
                      release_after="2025-02-01")
    cfg = cfg.model_copy(update={"data": cfg.data.model_copy(update={"eval": [lcb]})})
    again = prepare_data(cfg, store)
    assert again.train == data.train  # the filter's samples were reused
    dropped = store.query("SELECT reason FROM problem_sets WHERE set_name = 'dropped' AND reason LIKE 'eval released%'")
    assert len(dropped) >= 1 and all("before 2025-02-01" in r for r in dropped.reason)
    assert len(again.eval) >= 1


def test_interrupted_sampling_resumes_to_identical_rollouts(prepared):
    """Rows lost mid-stage (as if killed between chunks) are re-sampled to exactly the same texts."""
    cfg, store, data = prepared
    q = "SELECT rollout_id, text, reward FROM rollouts WHERE purpose = 'filter' ORDER BY rollout_id"
    before = store.query(q)
    lost = store.query("SELECT DISTINCT problem_id FROM rollouts WHERE purpose = 'filter' ORDER BY 1 LIMIT 3").problem_id
    store.execute("DELETE FROM rollouts WHERE problem_id IN (SELECT unnest(?))", [list(lost)])
    assert store.scalar("SELECT count(*) FROM rollouts WHERE purpose = 'filter'") < len(before)
    assert prepare_data(cfg, store).train == data.train
    assert store.query(q).equals(before)
