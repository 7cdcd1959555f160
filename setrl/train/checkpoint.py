"""Resumable checkpoints: `<out_dir>/step-XXXX/` holds the HF model and tokenizer, the optimizer
state and `state.json` (step, run key, curriculum state).

A checkpoint is written into a hidden temporary directory and renamed into place, so a run
killed mid-save never leaves a `step-XXXX` directory that looks complete; `latest` only sees
renamed ones. No RNG state is saved: the trainer reseeds every step from (seed, step), which
already makes a resumed run draw the same numbers as an uninterrupted one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import torch

STEP_DIR = re.compile(r"^step-(\d+)$")
TMP_PREFIX = ".tmp-step-"


def step_dir(out_dir: Path, step: int) -> Path:
    return Path(out_dir) / f"step-{step:04d}"


def latest(out_dir: Path, max_step: int | None = None) -> Path | None:
    """The complete checkpoint with the highest step (at most `max_step`), or None."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        return None
    found = [(int(m.group(1)), p) for p in out_dir.iterdir() if (m := STEP_DIR.match(p.name)) and (p / "state.json").exists()]
    found = [(s, p) for s, p in found if max_step is None or s <= max_step]
    return max(found)[1] if found else None


def clean_partial(out_dir: Path) -> None:
    """Remove temporary directories left by a run killed while saving."""
    out_dir = Path(out_dir)
    if out_dir.is_dir():
        for p in out_dir.iterdir():
            if p.name.startswith(TMP_PREFIX):
                shutil.rmtree(p, ignore_errors=True)


def save(out_dir: Path, step: int, model, tokenizer, optimizer, state: dict) -> Path:
    """Write step `step` atomically; an existing checkpoint for that step is kept as is."""
    final = step_dir(out_dir, step)
    if (final / "state.json").exists():
        return final
    tmp = Path(out_dir) / f"{TMP_PREFIX}{step:04d}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    torch.save(optimizer.state_dict(), tmp / "optimizer.pt")
    (tmp / "state.json").write_text(json.dumps({"step": step, **state}, indent=1))
    if final.exists():  # a directory without state.json: debris from an older layout or a crash
        shutil.rmtree(final)
    os.replace(tmp, final)
    return final


def load_state(path: Path) -> dict:
    return json.loads((Path(path) / "state.json").read_text())


def load_optimizer(path: Path, optimizer, device) -> None:
    optimizer.load_state_dict(torch.load(Path(path) / "optimizer.pt", map_location=device, weights_only=True))


def claim(out_dir: Path, fingerprint: str) -> bool:
    """Tie `out_dir` to one run configuration. Returns True when checkpoints of a DIFFERENT
    configuration were there and have been removed (resuming from them would silently mix runs)."""
    out_dir = Path(out_dir)
    marker = out_dir / "fingerprint.txt"
    stale = marker.exists() and marker.read_text().strip() != fingerprint
    if stale:
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    marker.write_text(fingerprint + "\n")
    return stale
