"""Stage 2, calibrate the judge: score every configured judge / prompt variant against labelled groups
and pick the one training uses.

A calibration set is JSONL, one group per line:
    {"id", "problem": Problem.to_dict(), "responses": [str], "labels": [int], "strategies": [str]}
with ground-truth strategy labels per response (100 = degenerate). Per judge and set the stage
records: mean per-group adjusted Rand index, pairwise precision and recall (pairs pooled over
groups), degenerate-detection accuracy, failures, mean latency per group and tokens, plus a
pooled 'all' row that the selection uses (`judge.select_by`). Rows go to the `calibration` table
with a `selected` flag; `selected_judge` reads it back for training.

Calibration scores a failed group as the own_cluster rule would (every response its own
cluster), whatever the training policy: a judge that fails often is penalised, not excused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from setrl.config import DEFAULT_PIPELINE, JudgeSpec, StudyConfig
from setrl.judge import JudgeService, make_judge
from setrl.judge.base import Clustering
from setrl.judge.metrics import adjusted_rand_index, degenerate_accuracy, pair_counts
from setrl.problem import Problem
from setrl.store import Store

REPO_ROOT = DEFAULT_PIPELINE.parent
METRICS = ("ari", "precision", "recall", "degenerate_accuracy")


@dataclass(frozen=True)
class LabelledGroup:
    id: str
    problem: Problem
    responses: list[str]
    labels: list[int]


@dataclass(frozen=True)
class CalibrationResult:
    table: pd.DataFrame  # one row per (judge, calib_set), 'all' included
    selected: JudgeSpec


def resolve_path(path: str | Path) -> Path:
    """Calibration-set paths in pipeline.yaml are relative to the repo root unless absolute."""
    p = Path(path)
    return p if p.is_absolute() else REPO_ROOT / p


def load_calibration_set(path: str | Path) -> list[LabelledGroup]:
    """Read and check a calibration JSONL; errors name the file and line."""
    p = resolve_path(path)
    if not p.exists():
        raise FileNotFoundError(f"calibration set {p} does not exist (configured in judge.calibration_sets)")
    groups = []
    for n, line in enumerate(p.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            g = LabelledGroup(str(d["id"]), Problem.from_dict(d["problem"]), list(d["responses"]), [int(x) for x in d["labels"]])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{p}:{n}: not a calibration group ({type(e).__name__}: {e})") from None
        if len(g.labels) != len(g.responses):
            raise ValueError(f"{p}:{n}: {len(g.responses)} responses but {len(g.labels)} labels")
        groups.append(g)
    if not groups:
        raise ValueError(f"{p} holds no groups")
    return groups


def score(groups: list[LabelledGroup], clusterings: list[Clustering], degenerate_id: int) -> dict:
    """The calibration metrics of one judge on some groups (failed groups scored as own_cluster)."""
    aris, both, same_pred, same_label, deg_hits, total = [], 0, 0, 0, 0.0, 0
    for g, c in zip(groups, clusterings):
        pred = c.cluster_ids if c.cluster_ids is not None else list(range(len(g.responses)))
        aris.append(adjusted_rand_index(g.labels, pred))
        b, sp, sl, _ = pair_counts(g.labels, pred)
        both, same_pred, same_label = both + b, same_pred + sp, same_label + sl
        deg_hits += degenerate_accuracy(g.labels, pred, degenerate_id) * len(pred)
        total += len(pred)
    return {
        "groups": len(groups), "responses": total, "ari": float(np.mean(aris)),
        "precision": both / same_pred if same_pred else 1.0, "recall": both / same_label if same_label else 1.0,
        "degenerate_accuracy": deg_hits / total if total else 1.0,
        "failures": sum(c.failed for c in clusterings),
        "latency_s": float(np.mean([c.latency_s for c in clusterings])),
        "tokens": int(sum(c.prompt_tokens + c.completion_tokens for c in clusterings)),
    }


def calibrate(cfg: StudyConfig, store: Store, study_id: str, progress: bool = False, **judge_kwargs) -> CalibrationResult:
    """Score every candidate on every calibration set, record all rows, select by cfg.judge.select_by.

    LLM answers are cached, so re-running calibration costs no requests; judge_kwargs go to make_judge.
    """
    jc = cfg.judge
    sets = {resolve_path(p).stem: load_calibration_set(p) for p in jc.calibration_sets}
    rows = []
    for spec in jc.candidates:
        service = JudgeService(make_judge(spec, jc.degenerate_id, **judge_kwargs), store, "own_cluster", jc.degenerate_id)
        pooled_groups, pooled = [], []
        for set_name, groups in sets.items():
            clusterings = service.cluster_groups([(g.problem, g.responses) for g in groups], progress=progress)
            rows.append({"judge": spec.name, "calib_set": set_name, **score(groups, clusterings, jc.degenerate_id)})
            pooled_groups += groups
            pooled += clusterings
        rows.append({"judge": spec.name, "calib_set": "all", **score(pooled_groups, pooled, jc.degenerate_id)})
    table = pd.DataFrame(rows)
    overall = table[table.calib_set == "all"]
    # idxmax keeps the first maximum: ties go to the earlier (cheaper, by convention) candidate.
    best = overall.loc[overall[jc.select_by].idxmax(), "judge"]
    table["selected"] = table.judge == best
    table.insert(0, "study_id", study_id)
    store.replace("calibration", "study_id = ?", [study_id], table)
    selected = next(c for c in jc.candidates if c.name == best)
    return CalibrationResult(table.drop(columns="study_id"), selected)


def selected_judge(cfg: StudyConfig, store: Store | None, study_id: str) -> JudgeSpec:
    """The judge training uses: calibration's choice, or the first candidate when calibration has not run."""
    name = None if store is None else store.scalar(
        "SELECT judge FROM calibration WHERE study_id = ? AND selected AND calib_set = 'all'", [study_id])
    if name is None:
        return cfg.judge.candidates[0]
    for spec in cfg.judge.candidates:
        if spec.name == name:
            return spec
    raise ValueError(f"calibration for study '{study_id}' selected judge '{name}', which is no longer among the "
                     f"configured candidates {[c.name for c in cfg.judge.candidates]}; re-run `setrl judge calibrate`")
