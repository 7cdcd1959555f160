"""One Prefect task per study stage. Each loads the config by (pipeline, profile), calls the library,
and records the stage run in DuckDB.

Caching: every expensive task takes a `cache_key` the flow computes from the stage's config sections, the
store's copy of the study and the upstream outputs, so a NEW run of the same study skips completed
stages (Prefect's default key includes the run id, which would redo them). Inside a stage the
library resumes work units from DuckDB (sampled groups, judged groups, checkpoints, eval problems).
"""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.context import get_run_context

from setrl.config import StudyConfig, load_config
from setrl.prepare import problem_set, study_id_of
from setrl.runs import stage
from setrl.store import Store
from tasks.progress import StageProgress


def by_cache_key(context, parameters: dict) -> str:
    return parameters["cache_key"]


def judge_is_down(task, task_run, state) -> bool:
    """Retry a stage only when the judge was unreachable: other failures are bugs, not weather."""
    from setrl.judge import JudgeUnavailableError

    try:
        state.result()
    except JudgeUnavailableError:
        return True
    except BaseException:
        return False
    return False


def _open(pipeline: str, profile: str) -> tuple[StudyConfig, Store, str, str]:
    cfg = load_config(pipeline, profile)
    ctx = get_run_context()
    run_id = str(getattr(getattr(ctx, "task_run", None), "flow_run_id", None) or "local")
    return cfg, Store(cfg.storage.db), study_id_of(cfg), run_id


@task(name="prepare-data", cache_key_fn=by_cache_key, persist_result=True)
def prepare_task(pipeline: str, profile: str, cache_key: str) -> dict:
    """Sample the base model per training problem, filter by pass band, split, dedup eval against train."""
    from setrl.prepare import prepare_data

    cfg, store, study_id, run_id = _open(pipeline, profile)
    with stage(store, run_id, study_id, "prepare", cache_key):
        data = prepare_data(cfg, store, progress=StageProgress("prepare-data"))
    create_table_artifact(key="prepared-data", table=[
        {"set": "train", "problems": len(data.train)}, {"set": "validation", "problems": len(data.validation)},
        {"set": "eval", "problems": len(data.eval)}, {"set": "dropped", "problems": data.dropped}],
        description=f"{study_id}: problems per set (dropped: outside the pass band or duplicates of train)")
    return {"train": data.train, "validation": data.validation, "eval": data.eval}


@task(name="calibrate-judge", cache_key_fn=by_cache_key, persist_result=True,
      retries=1, retry_delay_seconds=5, retry_condition_fn=judge_is_down)
def calibrate_task(pipeline: str, profile: str, cache_key: str) -> str:
    """Score every judge candidate on the labelled calibration sets and select the best."""
    from setrl.judge.calibration import calibrate

    cfg, store, study_id, run_id = _open(pipeline, profile)
    with stage(store, run_id, study_id, "calibrate", cache_key):
        result = calibrate(cfg, store, study_id)
    create_table_artifact(key="judge-calibration", table=result.table.round(4).to_dict("records"),
                          description=f"judge calibration; selected: {result.selected.name}")
    return result.selected.name


@task(name="train", cache_key_fn=by_cache_key, persist_result=True,
      retries=1, retry_delay_seconds=5, retry_condition_fn=judge_is_down)
def train_task(pipeline: str, profile: str, method: str, seed: int, data: dict, judge: str, cache_key: str) -> str:
    """Train one (method, seed) run from the base model; resumes from its last checkpoint."""
    from setrl.train.cpu import train_run

    cfg, store, study_id, run_id = _open(pipeline, profile)
    m = cfg.method(method)
    judge_spec = next(j for j in cfg.judge.candidates if j.name == judge)
    out_dir = Path(cfg.storage.artifacts) / "train" / method / f"seed{seed}"
    progress = StageProgress(f"train-{method}-seed{seed}")
    with stage(store, run_id, study_id, f"train:{method}:seed{seed}", cache_key):
        result = train_run(cfg, m, seed, store, study_id, problem_set(store, study_id, "train"),
                           problem_set(store, study_id, "validation"), judge_spec, out_dir,
                           progress=False, on_step=lambda step, _metrics: progress(step, m.steps, "steps"))
    return str(result.final_checkpoint)


@task(name="evaluate", cache_key_fn=by_cache_key, persist_result=True,
      retries=1, retry_delay_seconds=5, retry_condition_fn=judge_is_down)
def evaluate_task(pipeline: str, profile: str, model_id: str, method: str, seed: int | None, model_path: str,
                  judge: str, cache_key: str) -> str:
    """Sample n per eval problem, score, cluster, and store per-problem counts and pass@k with CIs."""
    from setrl.evaluate import evaluate_model

    cfg, store, study_id, run_id = _open(pipeline, profile)
    judge_spec = next(j for j in cfg.judge.candidates if j.name == judge)
    with stage(store, run_id, study_id, f"evaluate:{model_id}", cache_key):
        evaluate_model(cfg, store, study_id, model_id, method, seed, model_path,
                       problem_set(store, study_id, "eval"), judge_spec, progress=StageProgress(f"evaluate-{model_id}"))
    return model_id


@task(name="compare", cache_policy=NO_CACHE)
def compare_task(pipeline: str, profile: str) -> None:
    """Pool seeds per method and run paired bootstrap tests between every pair of methods (and base)."""
    from setrl.evaluate import pooled_pass_at_k, significance

    cfg, store, study_id, run_id = _open(pipeline, profile)
    methods = ["base"] + [m.name for m in cfg.methods]
    with stage(store, run_id, study_id, "compare", cfg.section_hash("eval")):
        for m in methods:
            pooled_pass_at_k(store, study_id, m, cfg.eval.ks, n_boot=cfg.eval.bootstrap, ci=cfg.eval.ci)
        for i, a in enumerate(methods):
            for b in methods[i + 1:]:
                significance(store, study_id, b, a, cfg.eval.ks, n_boot=cfg.eval.bootstrap, ci=cfg.eval.ci)


@task(name="report", cache_policy=NO_CACHE)
def report_task(pipeline: str, profile: str) -> str:
    """Write the Markdown report with its plots; register them as artifacts in DuckDB and Prefect."""
    from setrl.report import build_report

    cfg, store, study_id, run_id = _open(pipeline, profile)
    with stage(store, run_id, study_id, "report", run_id):
        report = build_report(store, study_id, Path(cfg.storage.artifacts) / "report")
        store.register_artifact(study_id, "report", "report.md", report.path)
        for name, path in report.plots.items():
            store.register_artifact(study_id, "plot", name, path)
    plots = "\n".join(f"- {name}: `{path.resolve()}`" for name, path in report.plots.items())
    create_markdown_artifact(key="study-report", markdown=report.markdown + f"\n\n## Plot files\n\n{plots}\n",
                             description=f"setrl report for {study_id}")
    return str(report.path)
