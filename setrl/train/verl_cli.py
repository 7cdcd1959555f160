"""`setrl verl-config`: print the verl launch for a profile's verl-backed methods (and check it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from setrl.config import DEFAULT_PIPELINE, ConfigError, load_config

app = typer.Typer(help="verl backend commands.", no_args_is_help=True, add_completion=False)


@app.command("verl-config")
def verl_config(
    profile: str = typer.Option("full", "--profile", "-p", help="Profile whose verl methods to launch."),
    pipeline: Path = typer.Option(DEFAULT_PIPELINE, "--pipeline", help="Path to pipeline.yaml."),
    mode: str = typer.Option("single", "--mode", help="single (1 GPU) | multi (1 node, --gpus GPUs) | ray (--nodes x --gpus via ray job submit)."),
    gpus: Optional[int] = typer.Option(None, "--gpus", help="GPUs per node (multi/ray; default 8)."),
    nodes: int = typer.Option(1, "--nodes", help="Nodes in the Ray cluster (ray mode)."),
    method: Optional[str] = typer.Option(None, "--method", help="One method (default: every method with backend: verl)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed (default: the method's first)."),
    judge: Optional[str] = typer.Option(None, "--judge", help="Judge candidate name (default: the first; the study uses the calibrated one)."),
    out_dir: Optional[str] = typer.Option(None, "--out-dir", help="Run directory (default: <storage.artifacts>/verl/<method>/seed<k>)."),
    ray_address: str = typer.Option("http://127.0.0.1:8265", "--ray-address", help="Ray dashboard address for ray mode."),
    validate: bool = typer.Option(True, "--validate/--no-validate", help="Check with Hydra compose + verl's validate_config (needs verl; CPU only)."),
    as_json: bool = typer.Option(False, "--json", help="Print {method: {command, env, overrides}} as JSON."),
) -> None:
    """Turn pipeline.yaml into verl's launch command and Hydra overrides."""
    from setrl.train.verl_config import launch_spec
    from setrl.train.verl_config import validate as validate_spec

    if mode not in ("single", "multi", "ray"):
        raise typer.BadParameter("--mode must be single, multi or ray")
    try:
        cfg = load_config(pipeline, profile)
    except ConfigError as e:
        typer.secho(str(e), fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    methods = [cfg.method(method)] if method else [m for m in cfg.methods if m.backend == "verl"]
    if not methods:
        typer.secho(f"profile '{profile}' has no method with backend: verl", fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    judge_spec = next((c for c in cfg.judge.candidates if c.name == judge), None) if judge else None
    if judge and judge_spec is None:
        raise typer.BadParameter(f"no judge candidate '{judge}'; configured: {[c.name for c in cfg.judge.candidates]}")
    out: dict[str, dict] = {}
    for m in methods:
        s = seed if seed is not None else m.seeds[0]
        run_dir = out_dir or f"{cfg.storage.artifacts}/verl/{m.name}/seed{s}"
        try:
            spec = launch_spec(cfg, m, s, run_dir, mode=mode, gpus=gpus, nodes=nodes, judge=judge_spec,
                               ray_address=ray_address)
        except ValueError as e:
            typer.secho(str(e), fg=typer.colors.RED, err=True)
            raise typer.Exit(2)
        if validate:
            try:
                validate_spec(spec)
            except ImportError as e:
                typer.secho(f"cannot validate without verl ({e}); install the verl extra or pass --no-validate",
                            fg=typer.colors.RED, err=True)
                raise typer.Exit(3)
            except Exception as e:
                typer.secho(f"{m.name}: verl rejected the config: {e}", fg=typer.colors.RED, err=True)
                raise typer.Exit(1)
        out[m.name] = {"command": spec.command(), "env": spec.env, "overrides": spec.overrides}
        if not as_json:
            typer.echo(f"# {m.name} seed {s} ({mode}){' - validated by verl' if validate else ''}")
            typer.echo(spec.shell())
            typer.echo("")
    if as_json:
        typer.echo(json.dumps(out, indent=2))
