"""What every generation backend returns, and helpers they share."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Callable, Iterator, Literal, Protocol


@dataclass
class Completion:
    """One sampled completion. `token_ids` are the generated tokens (EOS included when the model
    emitted it; empty when a server does not return ids); `n_tokens` counts them."""

    text: str
    token_ids: list[int] = field(default_factory=list)
    n_tokens: int = 0
    finish_reason: Literal["stop", "length"] = "stop"


class Generator(Protocol):
    last_throughput: float | None

    def sample(self, prompts: list[str], n: int, *, temperature: float = 1.0, top_p: float = 1.0,
               max_new_tokens: int = 128, stop: list[str] | None = None, seed: int | None = None,
               progress: bool = False) -> list[list[Completion]]:
        """n completions for each prompt, in prompt order; same seed, same samples."""
        ...


def apply_stop(text: str, stop: list[str] | None) -> str | None:
    """`text` cut before the earliest stop string, or None when none occurs."""
    hits = [text.index(s) for s in (stop or []) if s and s in text]
    return text[:min(hits)] if hits else None


@contextlib.contextmanager
def progress_bar(total: int, label: str, enabled: bool) -> Iterator[Callable[[int], None]]:
    """A rich progress bar (completions done, rate) when enabled; a no-op callback otherwise."""
    if not enabled:
        yield lambda k: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn())
    with Progress(*columns, transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda k: bar.advance(task, k)
