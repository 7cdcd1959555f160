"""`setrl judge ...`: cluster groups from a file with any judge, and run the calibration stage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from setrl.config import DEFAULT_PIPELINE, ConfigError, JudgeSpec, load_config

app = typer.Typer(help="Strategy-clustering judges: cluster rollout groups, calibrate judges against labelled sets.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)


def _fail(msg: str) -> None:
    typer.secho(msg, fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


@app.command()
def cluster(
    judge: str = typer.Option("ast", "--judge", help="Judge kind: ast (offline structural) | openai (LLM via an OpenAI-compatible API)."),
    inp: Path = typer.Option(..., "--in", help='JSONL of groups: {"id", "problem": <Problem dict or prompt text>, "responses": [...]}.'),
    out: Path = typer.Option(..., "--out", help='JSONL written: {"id", "cluster_ids": [...], "failed", "cached", "rationales"}.'),
    model: Optional[str] = typer.Option(None, "--model", help="LLM for --judge openai (gpt-4.1-mini, Qwen/Qwen3-4B-Instruct-2507...)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="Chat-completions endpoint (default: the OpenAI API)."),
    prompt: str = typer.Option("v1", "--prompt", help="Prompt version: setrl/judge/prompts/<prompt>.md."),
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", help="Environment variable holding the API key."),
    timeout: float = typer.Option(60.0, "--timeout", help="Per-request timeout in seconds."),
    retries: int = typer.Option(5, "--retries", help="Retries on transient errors and malformed answers."),
    concurrency: int = typer.Option(4, "--concurrency", help="Requests in flight at once."),
    policy: str = typer.Option("own_cluster", "--policy", help="On failure: own_cluster | skip | fail."),
    db: Optional[Path] = typer.Option(None, "--db", help="DuckDB cache (default: the profile's storage.db)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Judge without reading or writing the DuckDB cache."),
    profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Profile whose storage.db is the default --db."),
) -> None:
    """Cluster each group's responses by strategy (degenerate responses get id 100)."""
    from setrl.judge import JudgeService, JudgeUnavailableError, make_judge
    from setrl.problem import Problem
    from setrl.store import Store

    try:
        spec = JudgeSpec(name=judge if judge == "ast" else f"{judge}:{model}", kind=judge, model=model, base_url=base_url,
                         api_key_env=api_key_env, prompt=prompt, timeout_s=timeout, max_retries=retries, concurrency=concurrency)
        if db is None and not no_cache:
            db = Path(load_config(DEFAULT_PIPELINE, profile).storage.db)
        service = JudgeService(make_judge(spec), None if no_cache else Store(db), policy)
    except (ValueError, ConfigError) as e:  # pydantic errors are ValueErrors
        _fail(str(e))
    ids, groups = [], []
    for n, line in enumerate(inp.read_text().splitlines(), 1):
        if not line.strip():
            continue
        d = json.loads(line)
        p = d.get("problem")
        problem = Problem.from_dict(p) if isinstance(p, dict) else Problem("cli", "", str(p or ""), "", "check", "")
        ids.append(d.get("id", n))
        groups.append((problem, list(d["responses"])))
    try:
        results = service.cluster_groups(groups, progress=True)
    except JudgeUnavailableError as e:
        _fail(str(e))
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as f:
        for gid, c in zip(ids, results):
            f.write(json.dumps({"id": gid, "cluster_ids": c.cluster_ids, "failed": c.failed, "cached": c.cached,
                                "rationales": c.rationales}) + "\n")
    s = service.stats
    typer.echo(f"{len(results)} groups -> {out}  (requests {s['requests']}, cache hits {s['cache_hits']}, "
               f"failures {s['failures']}, failure rate {s['failure_rate']:.1%})", err=True)


@app.command()
def calibrate(
    profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Profile whose judge candidates and calibration sets to use."),
    pipeline: Path = typer.Option(DEFAULT_PIPELINE, "--pipeline", help="Path to pipeline.yaml."),
    db: Optional[Path] = typer.Option(None, "--db", help="DuckDB file (default: the profile's storage.db)."),
) -> None:
    """Score every judge candidate on the calibration sets, record the table and the selected judge."""
    from rich.console import Console
    from rich.table import Table

    from setrl.judge.calibration import calibrate as run_calibration
    from setrl.prepare import study_id_of
    from setrl.store import Store

    try:
        cfg = load_config(pipeline, profile)
        store = Store(db or cfg.storage.db)
        result = run_calibration(cfg, store, study_id_of(cfg), progress=True)
    except (ConfigError, FileNotFoundError, ValueError) as e:
        _fail(str(e))
    table = Table(title=f"judge calibration, profile {cfg.profile} (selected by {cfg.judge.select_by})")
    cols = ["judge", "calib_set", "groups", "responses", "ari", "precision", "recall", "degenerate_accuracy",
            "failures", "latency_s", "tokens", "selected"]
    for c in cols:
        table.add_column(c)
    for row in result.table[cols].itertuples(index=False):
        table.add_row(*(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row))
    Console(width=200).print(table)
    typer.echo(f"selected judge: {result.selected.name}")
