"""`setrl tiny-model ...` and `setrl tiny-data ...`: the embedded tiny family and base model."""

from __future__ import annotations

from pathlib import Path

import typer

model_app = typer.Typer(help="The tiny base model (a 0.5M-parameter Llama trained from scratch on CPU).",
                        no_args_is_help=True)
data_app = typer.Typer(help="The tiny task family (generated Python problems with unit tests).", no_args_is_help=True)


@model_app.command("train")
def train_model(
    out: Path = typer.Option(Path("data/tiny-model"), "--out", help="Output HF model directory (overwritten)."),
    steps: int = typer.Option(500, "--steps", min=1, help="SFT steps of 64 sequences (~0.2-0.4 CPU-s each)."),
    seed: int = typer.Option(0, "--seed", help="Seeds corpus, initialisation and batch order."),
    threads: int = typer.Option(2, "--threads", min=1, help="Torch threads for training (weights depend on it slightly)."),
) -> None:
    """Train the BPE tokenizer and SFT the tiny model on the TRAINING templates; save config,
    safetensors, tokenizer and training.json to --out. Regenerates the shipped data/tiny-model."""
    from setrl.tiny_model import TinyModelConfig, train

    train(out, TinyModelConfig(steps=steps, seed=seed, threads=threads), log=typer.echo)


@data_app.command("show")
def show(
    split: str = typer.Option("heldout", "--split", help="train | heldout"),
    limit: int = typer.Option(3, "--limit", min=1, help="How many problems to print."),
    seed: int = typer.Option(0, "--seed", help="Generator seed (the study uses DatasetSpec.seed, default 0)."),
    solutions: bool = typer.Option(False, "--solutions", help="Also print every reference solution (correct and buggy)."),
) -> None:
    """Print generated problems: prompt, tests and the strategies that solve them."""
    from setrl.config import DatasetSpec
    from setrl.data import tiny

    try:
        problems = tiny.load(DatasetSpec(source="tiny", split=split, limit=limit, seed=seed))
    except ValueError as e:
        typer.secho(str(e), fg=typer.colors.RED, err=True)
        raise typer.Exit(2)
    for p in problems:
        typer.secho(f"# {p.problem_id}  template={p.meta['template']}  strategies={', '.join(p.meta['strategies'])}", bold=True)
        typer.echo(p.prompt + "\n" + p.tests)
        for s in tiny.solutions(p) if solutions else []:
            typer.secho(f"## {s['strategy']} ({'correct' if s['correct'] else 'buggy'})", fg=typer.colors.CYAN)
            typer.echo(s["code"])


@data_app.command("templates")
def templates() -> None:
    """List the training and held-out templates."""
    from setrl.data import tiny

    typer.echo(f"train ({len(tiny.TRAIN_TEMPLATES)}): {', '.join(tiny.TRAIN_TEMPLATES)}")
    typer.echo(f"heldout ({len(tiny.HELDOUT_TEMPLATES)}): {', '.join(tiny.HELDOUT_TEMPLATES)}")


@data_app.command("calibration")
def calibration(
    out: Path = typer.Option(Path("data/calibration/tiny.jsonl"), "--out", help="JSONL file to write."),
    groups: int = typer.Option(24, "--groups", min=1, help="Number of labelled groups of 8 responses."),
    seed: int = typer.Option(0, "--seed", help="Seed for problems, strategies and renamings."),
) -> None:
    """Write the tiny judge-calibration set (strategy-labelled groups incl. buggy and degenerate responses)."""
    from setrl.data.tiny import write_calibration

    typer.echo(f"wrote {write_calibration(out, groups, seed)}")
