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
        try:
            db = Path(load_config(DEFAULT_PIPELINE, profile).storage.db)
        except ConfigError as e:
            fail(str(e))
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
        from rich.console import Console
        from rich.table import Table

        table = Table(show_lines=False)
        for col in df.columns:
            table.add_column(str(col))
        for row in df.itertuples(index=False):
            table.add_row(*("" if v is None else f"{v:.4g}" if isinstance(v, float) else str(v) for v in row))
        Console(width=200).print(table)


# ---- subsystem commands (each subsystem owns its sub-app; register it here) ----------


def main() -> None:
    app()


if __name__ == "__main__":
    main()
