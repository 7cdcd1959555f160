"""The whole study as one DAG:

    prepare data -> calibrate judge -> train (method x seed) -> evaluate (base + every run) -> report

Run it through the server (`prefect deployment run 'full-study/tiny' --watch`), in-process
(`setrl study --profile tiny`), or as a module (`python -m flows.full_study --profile smoke`).
A new run of the same study resumes: completed stages are cache hits, and inside a stage the
library skips work units already in DuckDB (sampled groups, judged groups, checkpoints, eval problems).
"""

from __future__ import annotations

import argparse

from prefect import flow, get_run_logger
from prefect.context import get_run_context

from flows.stages import Study, _refresh, report_flow, train_one
from setrl.config import ConfigError
from setrl.runs import finish_run, start_run
from setrl.store import Store
from tasks.stages import calibrate_task, evaluate_task, prepare_task

RESUME_HINT = ("Nothing already done is lost: resume with `prefect deployment run 'full-study/{profile}'` "
               "(or `setrl study --profile {profile}`); completed stages and judged groups are reused.")


def _train(s: Study, method, seed: int, data: dict, judge: str, refresh: bool, gpu_deployment: str | None) -> str:
    if method.backend == "verl" and gpu_deployment:
        # the GPU work pool runs it; the result (checkpoint path) comes back through shared result storage
        from prefect.deployments import run_deployment

        run = run_deployment(gpu_deployment, parameters={"method": method.name, "seed": seed, "profile": s.profile,
                                                        "pipeline": s.pipeline}, as_subflow=True)
        return run.state.result()
    return train_one(s, method, seed, data, judge, refresh)


@flow(name="full-study", log_prints=True)
def full_study(profile: str = "tiny", pipeline: str = "pipeline.yaml", refresh: bool = False,
               gpu_deployment: str | None = None) -> str:
    """Run the whole study for one profile of pipeline.yaml; returns the report path."""
    logger = get_run_logger()
    try:
        s = Study(pipeline, profile)  # a broken pipeline.yaml fails here, before any work
    except ConfigError as e:
        logger.error(str(e))
        raise
    cfg, store = s.cfg, Store(s.cfg.storage.db)
    run_id = str(get_run_context().flow_run.id)
    start_run(store, cfg, run_id, orchestrator="prefect")
    try:
        data = _refresh(prepare_task, refresh)(pipeline, profile, cache_key=s.prepare_key())
        logger.info(f"data: {len(data['train'])} train, {len(data['validation'])} validation, {len(data['eval'])} eval problems")
        judge = _refresh(calibrate_task, refresh)(pipeline, profile, cache_key=s.calibrate_key())
        logger.info(f"judge selected by calibration: {judge}")

        # Runs go one after another: on a 2-core machine parallel runs only thrash; on GPUs each run is its own job.
        models = [("base", "base", None, cfg.model.path)]
        for m in cfg.methods:
            for seed in m.seeds:
                ckpt = _train(s, m, seed, data, judge, refresh, gpu_deployment)
                models.append((f"{m.name}/seed{seed}", m.name, seed, ckpt))

        for model_id, method, seed, path in models:
            _refresh(evaluate_task, refresh)(pipeline, profile, model_id, method, seed, path, judge,
                                             cache_key=s.eval_key(model_id, path, data, judge))
        report = report_flow(profile=profile, pipeline=pipeline)
    except Exception as e:
        from setrl.judge import JudgeUnavailableError

        msg = f"{type(e).__name__}: {e}"
        if isinstance(e, JudgeUnavailableError) or "JudgeUnavailableError" in msg:
            msg = f"The judge is down: {e}\n{RESUME_HINT.format(profile=profile)}"
            logger.error(msg)
        finish_run(store, run_id, error=msg)
        raise
    finish_run(store, run_id)
    logger.info(f"study complete: report at {report}; query results with `setrl sql --profile {profile} \"SELECT * FROM pass_at_k\"`")
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description="Run the setrl study DAG in this process (ephemeral Prefect API unless PREFECT_API_URL is set).")
    ap.add_argument("--profile", default="tiny", help="pipeline.yaml profile (tiny, smoke, full)")
    ap.add_argument("--pipeline", default="pipeline.yaml", help="path to pipeline.yaml")
    ap.add_argument("--refresh", action="store_true", help="ignore cached stage results and recompute")
    args = ap.parse_args()
    full_study(profile=args.profile, pipeline=args.pipeline, refresh=args.refresh)


if __name__ == "__main__":
    main()
