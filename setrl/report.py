"""Stage 5, report: plots and tables from the store, written as Markdown beside PNG files.

Reads only DuckDB (pass_at_k, significance, train_metrics, eval_problems, calibration), so a
report can be rebuilt at any time: `setrl report --profile tiny`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on servers and CI
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from setrl.store import Store  # noqa: E402


@dataclass(frozen=True)
class Report:
    markdown: str
    path: Path
    plots: dict[str, Path]


def summary_table(store: Store, study_id: str) -> pd.DataFrame:
    """One row per model (base and each method, seeds pooled): pass@1, pass@k_max, diversity, training summary."""
    return store.query("""
        WITH p AS (
            SELECT model_id, method, k, pass_at_k, ci_low, ci_high FROM pass_at_k
            WHERE study_id = ? AND (model_id = method)
        ), kmax AS (SELECT max(k) AS k FROM p)
        SELECT p1.method,
               (SELECT count(DISTINCT coalesce(seed, -1)) FROM eval_problems e WHERE e.study_id = ? AND e.method = p1.method) AS seeds,
               round(p1.pass_at_k, 3) AS pass_at_1,
               (SELECT k FROM kmax) AS k_max,
               round(pk.pass_at_k, 3) AS pass_at_k_max,
               printf('[%.3f, %.3f]', pk.ci_low, pk.ci_high) AS ci_k_max,
               (SELECT round(avg(distinct_correct_clusters), 2) FROM eval_problems e
                 WHERE e.study_id = ? AND e.method = p1.method) AS distinct_correct_clusters,
               (SELECT round(avg(judge_failure_rate), 3) FROM train_metrics t
                 WHERE t.study_id = ? AND t.method = p1.method) AS judge_failure_rate
        FROM p p1 JOIN p pk ON pk.method = p1.method AND pk.k = (SELECT k FROM kmax)
        WHERE p1.k = 1
        ORDER BY (p1.method <> 'base'), p1.method
    """, [study_id, study_id, study_id, study_id])


def _plot_pass_at_k(df: pd.DataFrame, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for method, g in df.groupby("method", sort=False):
        g = g.sort_values("k")
        (line,) = ax.plot(g.k, g.pass_at_k, marker="o", ms=3, label=method, ls="--" if method == "base" else "-")
        ax.fill_between(g.k, g.ci_low, g.ci_high, alpha=0.15, color=line.get_color())
    ax.set_xscale("log", base=2)
    ks = sorted(df.k.unique())
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.set_xlabel("k")
    ax.set_ylabel("pass@k (bootstrap CI over problems)")
    ax.set_title("pass@k on the evaluation set")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _plot_training(df: pd.DataFrame, columns: list[tuple[str, str]], path: Path) -> None:
    """Mean over seeds per step with the min..max spread of the seeds as a band."""
    fig, axes = plt.subplots(1, len(columns), figsize=(5.2 * len(columns), 3.8), squeeze=False)
    for ax, (col, label) in zip(axes[0], columns):
        for method, g in df.groupby("method", sort=False):
            per_step = g.groupby("step")[col].agg(["mean", "min", "max"]).dropna()
            if per_step.empty:
                continue
            smooth = per_step.rolling(5, min_periods=1).mean()  # 8-prompt batches are noisy
            (line,) = ax.plot(smooth.index, smooth["mean"], label=f"{method} ({g.seed.nunique()} seeds)")
            ax.fill_between(smooth.index, smooth["min"], smooth["max"], alpha=0.2, color=line.get_color())
        ax.set_xlabel("training step")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _md_table(df: pd.DataFrame) -> str:
    if df.empty:
        return "_(none)_"
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join("" if pd.isna(v) else f"{v:.4g}" if isinstance(v, float) else str(v) for v in row) + " |")
    return "\n".join(lines)


def build_report(store: Store, study_id: str, out_dir: str | Path) -> Report:
    """Write report.md and its plots under out_dir; return the Markdown and the plot paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plots: dict[str, Path] = {}

    pak = store.query("SELECT method, k, pass_at_k, ci_low, ci_high FROM pass_at_k "
                      "WHERE study_id = ? AND model_id = method ORDER BY (method <> 'base'), method, k", [study_id])
    if not pak.empty:
        plots["pass_at_k"] = out / "pass_at_k.png"
        _plot_pass_at_k(pak, plots["pass_at_k"])

    tm = store.query("SELECT * FROM train_metrics WHERE study_id = ? ORDER BY method, seed, step", [study_id])
    if not tm.empty:
        plots["training"] = out / "training.png"
        _plot_training(tm, [("distinct_correct_clusters", "distinct correct clusters / prompt"),
                            ("reward_mean", "train reward")], plots["training"])
        if tm.validation_pass1.notna().any():
            plots["validation"] = out / "validation.png"
            _plot_training(tm, [("validation_pass1", "held-out validation pass@1")], plots["validation"])

    calib = store.query("SELECT judge, calib_set, groups, round(ari, 3) AS ari, round(precision, 3) AS precision, "
                        "round(recall, 3) AS recall, round(degenerate_accuracy, 3) AS degenerate_accuracy, failures, "
                        "round(latency_s, 3) AS latency_s, tokens, selected FROM calibration WHERE study_id = ? "
                        "ORDER BY calib_set, judge", [study_id])
    sig = store.query("SELECT method_a, method_b, k, round(diff, 4) AS diff, round(ci_low, 4) AS ci_low, "
                      "round(ci_high, 4) AS ci_high, round(p_value, 4) AS p_value FROM significance "
                      "WHERE study_id = ? ORDER BY method_a, method_b, k", [study_id])
    sets = store.query("SELECT set_name, count(*) AS problems FROM problem_sets WHERE study_id = ? GROUP BY 1 ORDER BY 1",
                       [study_id])

    md = [f"# setrl report: {study_id}", "",
          "## Summary (seeds pooled)", "", _md_table(summary_table(store, study_id)), "",
          "## Data", "", _md_table(sets), ""]
    if "pass_at_k" in plots:
        md += ["## pass@k", "", "![pass@k](pass_at_k.png)", "",
               _md_table(pak.pivot_table(index="k", columns="method", values="pass_at_k").reset_index()), ""]
    md += ["## Paired bootstrap tests over problems (method_a - method_b)", "", _md_table(sig), ""]
    if "training" in plots:
        md += ["## Training", "", "![training](training.png)", ""]
    if "validation" in plots:
        md += ["![validation](validation.png)", ""]
    md += ["## Judge calibration", "", _md_table(calib), ""]
    text = "\n".join(md)
    path = out / "report.md"
    path.write_text(text)
    return Report(markdown=text, path=path, plots=plots)
