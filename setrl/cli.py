"""The `setrl` command line. Every subcommand has --help; subsystems add their own sub-apps."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from setrl.config import DEFAULT_PIPELINE, ConfigError, load_config, profiles, to_json

app = typer.Typer(
    help="setrl: exploration-RL studies on code generation (GRPO vs Poly-EPO), results in DuckDB.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def fail(msg: str, code: int = 2) -> None:
    typer.secho(msg, fg=typer.colors.RED, err=True)
    raise typer.Exit(code)


def config_or_exit(pipeline: Path, profile: str | None):
    """The resolved config, or exit 2 with the error naming the bad key (never a traceback)."""
    try:
        return load_config(pipeline, profile)
    except ConfigError as e:
        fail(str(e))


@app.command()
def validate(
    pipeline: Path = typer.Argument(DEFAULT_PIPELINE, help="Path to pipeline.yaml."),
    profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Profile to resolve (default: the file's default_profile). 'all' checks every profile."),
) -> None:
    """Validate pipeline.yaml and print the resolved config (or an error naming the bad key)."""
    try:
        names = profiles(pipeline) if profile == "all" else [profile]
        for name in names:
            cfg = load_config(pipeline, name)
            typer.echo(to_json(cfg) if profile != "all" else f"profile {cfg.profile}: ok (config hash {cfg.config_hash()})")
    except ConfigError as e:
        fail(str(e))


@app.command()
def sql(
    query: str = typer.Argument(..., help="SQL to run, e.g. \"SELECT * FROM pass_at_k\"."),
    db: Optional[Path] = typer.Option(None, "--db", help="DuckDB file (default: the profile's storage.db)."),
    profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Profile whose storage.db to open when --db is not given."),
    fmt: str = typer.Option("table", "--format", "-f", help="table | csv | json"),
) -> None:
    """Query the results store read-only (safe while a study is running)."""
    from setrl.store import Store

    if fmt not in ("table", "csv", "json"):
        fail(f"--format must be table, csv or json, not '{fmt}'")
    if db is None:
        db = Path(config_or_exit(DEFAULT_PIPELINE, profile).storage.db)
    try:
        df = Store(db, read_only=True).query(query)
    except FileNotFoundError as e:
        fail(str(e))
    except Exception as e:  # duckdb parser/binder errors: show them, not a traceback
        fail(f"query failed: {e}")
    if fmt == "csv":
        df.to_csv(sys.stdout, index=False)
    elif fmt == "json":
        typer.echo(json.dumps(json.loads(df.to_json(orient="records", date_format="iso")), indent=2))
    else:
        _print_frame(df)


EXAMPLE_QUERIES = {
    "pass@k per method with CI (seeds pooled)":
        "SELECT method, k, round(pass_at_k,3) AS pass_at_k, round(ci_low,3) AS lo, round(ci_high,3) AS hi "
        "FROM pass_at_k WHERE model_id = method ORDER BY method, k",
    "distinct correct clusters per step per method (mean over seeds)":
        "SELECT method, step, avg(distinct_correct_clusters) AS clusters, avg(reward_mean) AS reward "
        "FROM train_metrics GROUP BY ALL ORDER BY method, step",
    "paired bootstrap tests":
        "SELECT method_a, method_b, k, round(diff,3) AS diff, round(p_value,3) AS p FROM significance ORDER BY k",
    "stage timings of the last run":
        "SELECT stage, status, round(seconds,1) AS s, error FROM stage_runs "
        "WHERE run_id = (SELECT run_id FROM runs ORDER BY started_at DESC LIMIT 1) ORDER BY started_at",
}


def _print_frame(df) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(show_lines=False)
    for col in df.columns:
        table.add_column(str(col))
    for row in df.itertuples(index=False):
        table.add_row(*("" if v is None or (isinstance(v, float) and v != v) else f"{v:.4g}" if isinstance(v, float)
                        else str(v) for v in row))
    Console(width=200).print(table)


@app.command()
def summary(
    profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Profile whose results to summarise."),
    pipeline: Path = typer.Option(DEFAULT_PIPELINE, "--pipeline", help="Path to pipeline.yaml."),
) -> None:
    """Print the study's summary table and SQL to dig further."""
    from setrl.prepare import study_id_of
    from setrl.report import summary_table
    from setrl.store import Store

    cfg = config_or_exit(pipeline, profile)
    if not Path(cfg.storage.db).exists():
        fail(f"no results yet at {cfg.storage.db}: run the study first")
    store = Store(cfg.storage.db, read_only=True)
    typer.echo(f"Study {study_id_of(cfg)}: report at {Path(cfg.storage.artifacts) / 'report' / 'report.md'}")
    _print_frame(summary_table(store, study_id_of(cfg)))
    typer.echo("\nDig further with SQL (read-only, safe while a study runs):")
    for what, q in EXAMPLE_QUERIES.items():
        typer.echo(f"  # {what}\n  setrl sql --profile {cfg.profile} \"{q}\"")


@app.command()
def study(
    profile: str = typer.Option("tiny", "--profile", "-p", help="Profile of pipeline.yaml to run (tiny, smoke, full)."),
    pipeline: Path = typer.Option(DEFAULT_PIPELINE, "--pipeline", help="Path to pipeline.yaml."),
    refresh: bool = typer.Option(False, "--refresh", help="Ignore cached stage results and recompute every stage."),
) -> None:
    """Run the whole study DAG in this process (ephemeral Prefect API; no server needed).

    Same flow, caching and store as `prefect deployment run full-study/<profile>`; re-running resumes.
    """
    config_or_exit(pipeline, profile)
    from flows.full_study import full_study  # the composition layer; setrl's library itself stays Prefect-free

    report = full_study(profile=profile, pipeline=str(pipeline), refresh=refresh)
    typer.echo(f"report: {report}")
    summary(profile=profile, pipeline=pipeline)


@app.command()
def report(
    profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Profile whose results to report."),
    pipeline: Path = typer.Option(DEFAULT_PIPELINE, "--pipeline", help="Path to pipeline.yaml."),
) -> None:
    """Rebuild the Markdown report and plots from the store (no Prefect needed)."""
    from setrl.prepare import study_id_of
    from setrl.report import build_report
    from setrl.store import Store

    cfg = config_or_exit(pipeline, profile)
    r = build_report(Store(cfg.storage.db), study_id_of(cfg), Path(cfg.storage.artifacts) / "report")
    typer.echo(f"report: {r.path}\nplots: {', '.join(str(p) for p in r.plots.values()) or 'none yet'}")


# ---- subsystem commands (each subsystem owns its sub-app; register it here) ----------

from setrl.train import cli as _train_cli  # noqa: E402  (torch is imported only when a command runs)

app.command("train")(_train_cli.train)
app.command("eval")(_train_cli.eval_cmd)

from setrl.train import verl_cli as _verl_cli  # noqa: E402  (verl is imported only with --validate)

app.command("verl-config")(_verl_cli.verl_config)

from setrl.judge import cli as judge_cli  # noqa: E402

app.add_typer(judge_cli.app, name="judge")

from setrl.sandbox import cli as sandbox_cli  # noqa: E402

app.add_typer(sandbox_cli.app, name="sandbox")

from setrl import tiny_cli  # noqa: E402  (torch/transformers load only when a command runs)

app.add_typer(tiny_cli.model_app, name="tiny-model")
app.add_typer(tiny_cli.data_app, name="tiny-data")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
