"""`setrl train` and `setrl eval`: run the training or evaluation stage by hand, outside Prefect.

Both use study_id = "<study>/<profile>" and load problems straight from the profile's data specs
(the orchestrated pipeline passes its filtered sets instead).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from setrl.config import DEFAULT_PIPELINE, ConfigError, StudyConfig, load_config


def _fail(msg: str) -> None:
    typer.secho(msg, fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


def _setup(pipeline: Path, profile: Optional[str], db: Optional[Path]):
    from setrl.store import Store

    try:
        cfg = load_config(pipeline, profile)
    except ConfigError as e:
        _fail(str(e))
    study_id = f"{cfg.study}/{cfg.profile}"
    return cfg, Store(db or cfg.storage.db), study_id


def _judge_spec(cfg: StudyConfig, store, study_id: str):
    """The calibrated judge when calibration has run for this study, else the first candidate."""
    from setrl.judge.calibration import selected_judge

    return selected_judge(cfg, store, study_id)


def _load(specs) -> list:
    from setrl.data import load_problems

    return [p for spec in specs for p in load_problems(spec)]


def train(
    method: str = typer.Option(..., "--method", "-m", help="Method name from the profile's methods."),
    profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Profile (default: the file's default_profile)."),
    steps: Optional[int] = typer.Option(None, "--steps", min=1, help="Steps to train (default: the method's steps)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed (default: the method's first seed)."),
    db: Optional[Path] = typer.Option(None, "--db", help="DuckDB file (default: the profile's storage.db)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Checkpoint directory (default: <artifacts>/train/<method>/seed<k>). A rerun resumes from it."),
    pipeline: Path = typer.Option(DEFAULT_PIPELINE, "--pipeline", help="Path to pipeline.yaml."),
) -> None:
    """Train one method from the base model (resumes from the last checkpoint in --out)."""
    from setrl.train.cpu import make_run_key, train_run

    cfg, store, study_id = _setup(pipeline, profile, db)
    try:
        m = cfg.method(method)
    except KeyError as e:
        _fail(str(e.args[0]))
    seed = m.seeds[0] if seed is None else seed
    n_val = cfg.data.validation_size
    train_problems = _load(cfg.data.train)
    # Outside the pipeline there is no filter stage: the validation problems are the first
    # validation_size held-out problems.
    validation = _load(cfg.data.eval)[:n_val]
    out = out or Path(cfg.storage.artifacts) / "train" / m.name / f"seed{seed}"
    result = train_run(cfg, m, seed, store, study_id, train_problems, validation, _judge_spec(cfg, store, study_id),
                       out, steps=steps)
    run_key = make_run_key(study_id, m.name, seed)
    summary = store.query("SELECT count(reward_mean) AS steps, avg(reward_mean) AS reward_mean, "
                          "sum(t_sample + t_score + t_judge + t_update) AS step_seconds FROM train_metrics WHERE run_key = ?", [run_key])
    typer.echo(f"run {run_key}: {result.steps_done} steps"
               + (f" (resumed from step {result.resumed_from})" if result.resumed_from is not None else "")
               + f", final checkpoint {result.final_checkpoint}")
    typer.echo(summary.to_string(index=False))


def eval_cmd(
    model: Optional[Path] = typer.Option(None, "--model", help="HF model directory (default: the profile's model.path)."),
    profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Profile (default: the file's default_profile)."),
    split: Optional[str] = typer.Option(None, "--split", help="Override the split of the profile's eval sets (tiny: heldout|train)."),
    model_id: Optional[str] = typer.Option(None, "--model-id", help="Row key in eval tables (default: 'base' for the profile's model, else 'path:<dir>')."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    db: Optional[Path] = typer.Option(None, "--db", help="DuckDB file (default: the profile's storage.db)."),
    pipeline: Path = typer.Option(DEFAULT_PIPELINE, "--pipeline", help="Path to pipeline.yaml."),
) -> None:
    """Evaluate a model: pass@k with bootstrap CIs over the eval problems, and the difficulty-band check."""
    from setrl.evaluate import difficulty_band, evaluate_model

    cfg, store, study_id = _setup(pipeline, profile, db)
    path = Path(model or cfg.model.path)
    if model_id is None:
        model_id = "base" if path.resolve() == Path(cfg.model.path).resolve() else f"path:{path.resolve()}"
    specs = [s.model_copy(update={"split": split}) for s in cfg.data.eval] if split else cfg.data.eval
    problems = _load(specs)
    curve = evaluate_model(cfg, store, study_id, model_id, "base" if model_id == "base" else model_id, None, path,
                           problems, _judge_spec(cfg, store, study_id), progress=not as_json)
    band = difficulty_band(curve)
    diversity = store.scalar("SELECT avg(distinct_correct_clusters) FROM eval_problems WHERE study_id = ? AND model_id = ?",
                             [study_id, model_id])
    if as_json:
        typer.echo(json.dumps({"study_id": study_id, "model_id": model_id, "problems": len(problems),
                               "pass_at_k": curve.to_dict("records"), "distinct_correct_clusters": diversity,
                               "difficulty_band": band}, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{model_id} on {len(problems)} problems (n={cfg.eval.n}, T={cfg.eval.temperature})")
    for col in ("k", "pass@k", f"{cfg.eval.ci:.0%} CI"):
        table.add_column(col, justify="right")
    for r in curve.itertuples(index=False):
        table.add_row(str(r.k), f"{r.pass_at_k:.3f}", f"[{r.ci_low:.3f}, {r.ci_high:.3f}]")
    console = Console()
    console.print(table)
    if diversity is not None:
        console.print(f"distinct correct strategies per problem: {diversity:.2f}")
    k_max = band["k_max"]
    console.print(f"difficulty band: pass@1 {band['pass@1']:.3f} in {band['pass1_band']} and pass@{k_max} "
                  f"{band[f'pass@{k_max}']:.3f} < {band['pass_kmax_below']}: " + ("[green]IN BAND[/]" if band["in_band"] else "[red]OUT OF BAND[/]"))

