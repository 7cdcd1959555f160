"""Evaluation stage: per-problem rows, pass@k curve, resume per problem, seed pooling, paired tests."""

from __future__ import annotations

import pandas as pd
import pytest

from setrl.config import DEFAULT_PIPELINE, load_config
from setrl.store import Store
from setrl.evaluate import difficulty_band, evaluate_model, pooled_pass_at_k, significance
from tests.train.tiny_model import tiny_model, tiny_problems


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    return tiny_model(tmp_path_factory.mktemp("tiny-model"))


def test_evaluate_model_writes_rows_and_resumes_per_problem(model_path, tmp_path):
    cfg = load_config(DEFAULT_PIPELINE, "smoke")
    cfg = cfg.model_copy(update={"model": cfg.model.model_copy(update={"path": str(model_path), "max_new_tokens": 48}),
                                 "eval": cfg.eval.model_copy(update={"n": 4, "ks": [1, 2, 4], "bootstrap": 50})})
    store = Store(tmp_path / "db.duckdb")
    problems = tiny_problems(3, "heldout")
    args = (cfg, store, "s/smoke", "base", "base", None, model_path)
    curve = evaluate_model(*args, problems[:2], cfg.judge.candidates[0], progress=False)
    assert curve.k.tolist() == [1, 2, 4] and (curve.n_problems == 2).all()
    assert curve.pass_at_k.is_monotonic_increasing
    assert ((curve.ci_low <= curve.pass_at_k) & (curve.pass_at_k <= curve.ci_high)).all()
    assert store.scalar("SELECT count(*) FROM rollouts WHERE purpose = 'eval'") == 8

    curve = evaluate_model(*args, problems, cfg.judge.candidates[0], progress=False)
    assert (curve.n_problems == 3).all()
    # only the new problem was sampled
    assert store.scalar("SELECT count(*) FROM rollouts WHERE purpose = 'eval'") == 12
    rows = store.query("SELECT * FROM eval_problems")
    assert len(rows) == 3 and (rows.n == 4).all() and rows.c.between(0, 4).all()
    assert (rows.distinct_correct_clusters <= rows.c).all()  # 0 for problems without a correct sample
    assert store.scalar("SELECT count(*) FROM pass_at_k WHERE model_id = 'base'") == 3


def _fake_eval(store: Store, method: str, seed: int, cs: list[int], n: int = 8):
    store.insert("eval_problems", [{"study_id": "s", "model_id": f"{method}/seed{seed}", "method": method, "seed": seed,
                                    "problem_id": f"p{i}", "n": n, "c": c, "distinct_correct_clusters": min(c, 2)}
                                   for i, c in enumerate(cs)])


def test_pooling_adds_seed_samples_and_significance_pairs_problems(tmp_path):
    store = Store(tmp_path / "db.duckdb")
    _fake_eval(store, "a", 0, [8, 4, 0, 2] * 5)
    _fake_eval(store, "a", 1, [6, 4, 2, 2] * 5)
    _fake_eval(store, "b", 0, [1, 0, 0, 1] * 5)
    pooled = pooled_pass_at_k(store, "s", "a", [1, 16], n_boot=200)
    # seeds pooled: per problem n = 16, c = c_0 + c_1; pass@1 = mean c / n
    assert pooled.set_index("k").pass_at_k[1] == pytest.approx((14 + 8 + 2 + 4) / 16 / 4)
    assert store.scalar("SELECT count(*) FROM pass_at_k WHERE model_id = 'a'") == 2
    with pytest.raises(ValueError, match="no eval_problems"):
        pooled_pass_at_k(store, "s", "missing", [1])
    sig = significance(store, "s", "a", "b", [1, 8], n_boot=500)
    assert (sig["diff"] > 0).all() and (sig.ci_low > 0).all() and (sig.p_value < 0.05).all()
    assert store.scalar("SELECT count(*) FROM significance") == 2


def test_difficulty_band():
    curve = pd.DataFrame({"k": [1, 8, 64], "pass_at_k": [0.2, 0.6, 0.9]})
    assert difficulty_band(curve)["in_band"]
    assert not difficulty_band(curve.assign(pass_at_k=[0.6, 0.9, 0.99]))["in_band"]
    assert not difficulty_band(curve.assign(pass_at_k=[0.01, 0.1, 0.3]))["in_band"]
