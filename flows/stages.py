"""One flow per stage. Each runs its prerequisites first; completed ones come back from the cache
in milliseconds, so `train` alone on a fresh store still prepares data and calibrates the judge."""

from __future__ import annotations

from prefect import flow, get_run_logger

from setrl.config import StudyConfig, load_config
from setrl.problem import content_hash
from setrl.runs import register_study
from setrl.store import Store
from tasks.stages import calibrate_task, compare_task, evaluate_task, prepare_task, report_task, train_task


class Study:
    """A resolved config plus the cache keys of its stages.

    `epoch` is the creation time of the study's row in this DuckDB file: a deleted or new store gives
    new keys, so a cache hit always means the stage's rows really are in the store being used.
    """

    def __init__(self, pipeline: str, profile: str):
        self.pipeline, self.profile = pipeline, profile
        self.cfg: StudyConfig = load_config(pipeline, profile)
        self.epoch = register_study(Store(self.cfg.storage.db), self.cfg)

    def key(self, stage: str, *parts) -> str:
        return content_hash(stage, self.cfg.study, self.profile, self.cfg.storage.db, self.epoch, *parts, length=32)

    def prepare_key(self) -> str:
        return self.key("prepare", self.cfg.section_hash("data", "model", "sandbox"))

    def calibrate_key(self) -> str:
        return self.key("calibrate", self.cfg.section_hash("judge"))

    def train_key(self, method: str, seed: int, data: dict, judge: str) -> str:
        m = self.cfg.method(method).model_dump(mode="json")
        return self.key("train", m, seed, data, judge, self.cfg.section_hash("model", "sandbox", "judge"))

    def eval_key(self, model_id: str, model_path: str, data: dict, judge: str) -> str:
        return self.key("evaluate", model_id, model_path, data["eval"], judge, self.cfg.section_hash("eval", "model", "sandbox"))


def _refresh(task, refresh: bool):
    return task.with_options(refresh_cache=True) if refresh else task


def train_one(s: Study, method, seed: int, data: dict, judge: str, refresh: bool) -> str:
    """The training task for this method's backend on this machine (verl needs GPUs)."""
    key = s.train_key(method.name, seed, data, judge)
    if method.backend == "verl":
        from tasks.verl import verl_train_task

        return _refresh(verl_train_task, refresh)(s.pipeline, s.profile, method.name, seed, judge, cache_key=key)
    return _refresh(train_task, refresh)(s.pipeline, s.profile, method.name, seed, data, judge, cache_key=key)


@flow(name="prepare-data", log_prints=True)
def prepare_flow(profile: str = "tiny", pipeline: str = "pipeline.yaml", refresh: bool = False) -> dict:
    """Stage 1: sample the base model, keep problems in the pass band, split, dedup eval against train."""
    s = Study(pipeline, profile)
    return _refresh(prepare_task, refresh)(pipeline, profile, cache_key=s.prepare_key())


@flow(name="calibrate-judge", log_prints=True)
def calibrate_flow(profile: str = "tiny", pipeline: str = "pipeline.yaml", refresh: bool = False) -> str:
    """Stage 2: score the judge candidates on the labelled calibration sets; returns the selected judge."""
    s = Study(pipeline, profile)
    return _refresh(calibrate_task, refresh)(pipeline, profile, cache_key=s.calibrate_key())


@flow(name="train", log_prints=True)
def train_flow(method: str, seed: int = 0, profile: str = "tiny", pipeline: str = "pipeline.yaml",
               refresh: bool = False) -> str:
    """Stage 3: train one (method, seed) run (CPU trainer, or verl for backend: verl); returns the final checkpoint."""
    s = Study(pipeline, profile)
    data = prepare_task(pipeline, profile, cache_key=s.prepare_key())
    judge = calibrate_task(pipeline, profile, cache_key=s.calibrate_key())
    return train_one(s, s.cfg.method(method), seed, data, judge, refresh)


@flow(name="evaluate", log_prints=True)
def evaluate_flow(model_id: str = "base", model_path: str | None = None, method: str = "base", seed: int | None = None,
                  profile: str = "tiny", pipeline: str = "pipeline.yaml", refresh: bool = False) -> str:
    """Stage 4: evaluate one model (the base model by default) on the eval set."""
    s = Study(pipeline, profile)
    data = prepare_task(pipeline, profile, cache_key=s.prepare_key())
    judge = calibrate_task(pipeline, profile, cache_key=s.calibrate_key())
    path = model_path or s.cfg.model.path
    return _refresh(evaluate_task, refresh)(pipeline, profile, model_id, method, seed, path, judge,
                                            cache_key=s.eval_key(model_id, path, data, judge))


@flow(name="report", log_prints=True)
def report_flow(profile: str = "tiny", pipeline: str = "pipeline.yaml") -> str:
    """Stage 5: pool seeds, test methods against each other, write the report (always rebuilt: it is cheap)."""
    Study(pipeline, profile)
    compare_task(pipeline, profile)
    path = report_task(pipeline, profile)
    get_run_logger().info(f"report: {path}")
    return path
