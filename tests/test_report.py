"""The report stage: plots and tables come from the store, and only from it."""

from __future__ import annotations

from setrl.report import build_report, summary_table

SID = "study/tiny"


def fill(store):
    rows = []
    for method, base in (("base", 0.1), ("dr_grpo", 0.3), ("poly_epo", 0.25)):
        for k in (1, 2, 4, 8):
            p = min(1.0, base * k ** 0.5)
            rows.append({"study_id": SID, "model_id": method, "method": method, "k": k, "pass_at_k": p,
                         "ci_low": p - 0.05, "ci_high": p + 0.05, "n_problems": 10})
    store.insert("pass_at_k", rows)
    store.insert("train_metrics", [
        {"run_key": f"{SID}/{m}/seed{s}", "study_id": SID, "method": m, "seed": s, "step": step,
         "reward_mean": 0.5 + 0.01 * step, "distinct_correct_clusters": 2.0 - 0.05 * step * (m == "dr_grpo"),
         "judge_failure_rate": 0.0, "validation_pass1": 0.2 if step % 5 == 0 else None}
        for m in ("dr_grpo", "poly_epo") for s in (0, 1) for step in range(1, 11)])
    store.insert("eval_problems", [
        {"study_id": SID, "model_id": f"{m}/seed{s}", "method": m, "seed": s, "problem_id": f"p{i}", "n": 8, "c": i % 3,
         "distinct_correct_clusters": i % 2}
        for m in ("dr_grpo", "poly_epo") for s in (0, 1) for i in range(10)])
    store.insert("significance", [{"study_id": SID, "method_a": "poly_epo", "method_b": "dr_grpo", "k": 8,
                                   "diff": -0.05, "ci_low": -0.1, "ci_high": 0.01, "p_value": 0.2}])
    store.insert("calibration", [{"study_id": SID, "judge": "ast", "calib_set": "tiny", "groups": 24, "ari": 0.93,
                                  "selected": True}])


def test_report_has_every_section_and_plot(store, tmp_path):
    fill(store)
    r = build_report(store, SID, tmp_path / "report")
    assert set(r.plots) == {"pass_at_k", "training", "validation"}
    for path in r.plots.values():
        assert path.read_bytes()[:4] == b"\x89PNG" and path.stat().st_size > 10_000
    text = r.path.read_text()
    for section in ("## Summary", "## pass@k", "## Paired bootstrap", "## Training", "## Judge calibration"):
        assert section in text
    assert "| poly_epo | dr_grpo | 8 | -0.05 |" in text
    assert "![pass@k](pass_at_k.png)" in text


def test_summary_pools_seeds_per_method(store):
    fill(store)
    df = summary_table(store, SID).set_index("method")
    assert list(df.index) == ["base", "dr_grpo", "poly_epo"]
    assert df.loc["dr_grpo", "seeds"] == 2 and df.loc["dr_grpo", "k_max"] == 8
    assert df.loc["dr_grpo", "pass_at_1"] == 0.3
    assert df.loc["poly_epo", "distinct_correct_clusters"] == 0.5


def test_empty_store_gives_a_report_without_plots(store, tmp_path):
    r = build_report(store, SID, tmp_path)
    assert r.plots == {} and "## Summary" in r.path.read_text()
