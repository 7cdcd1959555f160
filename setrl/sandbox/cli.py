"""`setrl sandbox run`: verdicts for a JSONL file of jobs (format in setrl/sandbox/jobs.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import Progress, TextColumn

from setrl.sandbox.isolation import IsolationUnavailable
from setrl.sandbox.jobs import Job, Verdict, job_from_dict
from setrl.sandbox.pool import Sandbox

app = typer.Typer(help="Run untrusted programs against their tests in the sandbox.", no_args_is_help=True)

JOB_FORMAT = """One JSON object per line; "prelude" (trusted setup code) is optional in every style.
check:      {"id", "code", "test": "<defines check(candidate)>", "entry_point": "f"}
stdin:      {"id", "code", "stdin_tests": [{"input": "...", "output": "..."}]}
functional: {"id", "code", "functional_tests": [{"input": "<a JSON value per line>", "output": "<JSON>"}], "entry_point": "f"}
Output lines: {"id", "passed", "status", "reason", "seconds", "cpu_seconds"}, in input order.
A malformed line gets an "error" verdict naming the line (id "line-N" if it has none)."""


@app.callback()
def sandbox() -> None:
    """Run untrusted programs against their tests (bubblewrap isolation where available)."""


class _Malformed:
    """A line that is not a valid job; carries its ready-made verdict through the stream."""

    def __init__(self, verdict: Verdict):
        self.verdict = verdict


def _count_lines(path: Path) -> int:
    """Non-blank lines: one verdict each."""
    with open(path) as f:
        return sum(1 for line in f if line.strip())


def _read_jobs(path: Path) -> Iterator[Job | _Malformed]:
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except ValueError as e:
                yield _Malformed(Verdict(f"line-{n}", False, "error", f"line {n}: not JSON ({e})"))
                continue
            try:
                yield job_from_dict(d)
            except ValueError as e:
                job_id = str(d["id"]) if isinstance(d, dict) and "id" in d else f"line-{n}"
                yield _Malformed(Verdict(job_id, False, "error", f"line {n}: {e}"))


def _verdicts(sb: Sandbox, items: Iterator[Job | _Malformed]) -> Iterator[Verdict]:
    """Malformed lines keep their place in the output order without reaching a sandbox."""
    pending: list[Job | _Malformed] = []

    def jobs() -> Iterator[Job]:
        for item in items:
            pending.append(item)
            if isinstance(item, Job):
                yield item

    for verdict in sb.imap(jobs()):
        while isinstance(pending[0], _Malformed):
            yield pending.pop(0).verdict
        pending.pop(0)
        yield verdict
    yield from (item.verdict for item in pending)


@app.command(help=f"Run every job in --in and write one verdict per line to --out.\n\n{JOB_FORMAT}")
def run(
    in_path: Path = typer.Option(..., "--in", exists=True, dir_okay=False, help="JSONL file of jobs."),
    out_path: Path = typer.Option(..., "--out", dir_okay=False, help="JSONL file to write verdicts to ('-' for stdout)."),
    workers: int = typer.Option(2, "--workers", min=1, help="Parallel sandbox workers (about one per core)."),
    timeout: float = typer.Option(3.0, "--timeout", min=0.01, help="Wall-clock seconds per program run (per test case for stdin jobs)."),
    memory_mb: int = typer.Option(512, "--memory-mb", min=64, help="Address-space limit per program, MiB."),
    require_isolation: bool = typer.Option(False, "--require-isolation", help="Refuse to run unless bubblewrap isolation works here."),
    output_limit_mb: int = typer.Option(16, "--output-limit-mb", min=1, help="Cap on a program's stdout + stderr, MiB."),
    file_limit_mb: int = typer.Option(32, "--file-limit-mb", min=1, help="Largest file a program may write, MiB."),
    max_procs: int = typer.Option(64, "--max-procs", min=4, help="Processes per sandbox (a fork bomb stops here)."),
    progress: str = typer.Option("auto", "--progress", metavar="auto|on|off",
                                 help="Progress bar on stderr; auto: when stderr is a terminal."),
) -> None:
    if progress not in ("auto", "on", "off"):
        raise typer.BadParameter(f"{progress!r} is not one of auto, on, off", param_hint="--progress")
    try:
        sb = Sandbox(workers=workers, timeout_s=timeout, memory_mb=memory_mb, require_isolation=require_isolation,
                     output_limit_mb=output_limit_mb, file_limit_mb=file_limit_mb, max_procs=max_procs)
    except IsolationUnavailable as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    counts = {"jobs": 0, "passed": 0}
    out = sys.stdout if str(out_path) == "-" else open(out_path, "w")
    show = sys.stderr.isatty() if progress == "auto" else progress == "on"
    bar = Progress(*Progress.get_default_columns(), TextColumn("{task.fields[passed]} passed"),
                   console=Console(stderr=True), disable=not show)
    try:
        with sb, bar:
            task = bar.add_task("sandbox", total=_count_lines(in_path), passed=0)
            for verdict in _verdicts(sb, _read_jobs(in_path)):
                out.write(json.dumps(verdict.to_dict()) + "\n")
                out.flush()  # every verdict written survives Ctrl-C
                counts["jobs"] += 1
                counts["passed"] += verdict.passed
                bar.update(task, advance=1, passed=counts["passed"])
    finally:
        if out is not sys.stdout:
            out.close()
    typer.echo(f"{counts['passed']}/{counts['jobs']} passed", err=True)
