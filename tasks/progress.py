"""Progress for long stages: a Prefect progress artifact plus a text progress bar in the run logs."""

from __future__ import annotations

import re
import time

from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.logging import get_run_logger


class StageProgress:
    """Callable `(done, total, what)`; throttled so a fast loop does not flood the API."""

    def __init__(self, stage: str, min_interval_s: float = 2.0):
        self.stage = stage
        self.key = re.sub(r"[^a-z0-9-]+", "-", f"progress-{stage}".lower()).strip("-")
        self.min_interval_s = min_interval_s
        self.artifact_id = None
        self.last_update = 0.0
        self.last_logged_decile = -1
        self.logger = get_run_logger()

    def __call__(self, done: int, total: int, what: str = "") -> None:
        frac = done / total if total else 1.0
        now = time.monotonic()
        if self.artifact_id is None:
            self.artifact_id = create_progress_artifact(100 * frac, key=self.key, description=f"{self.stage}: {what}")
        elif now - self.last_update >= self.min_interval_s or done >= total:
            update_progress_artifact(self.artifact_id, 100 * frac, description=f"{self.stage}: {what} {done}/{total}")
        else:
            return
        self.last_update = now
        decile = int(frac * 10)
        if decile != self.last_logged_decile:
            self.last_logged_decile = decile
            bar = "#" * decile + "." * (10 - decile)
            self.logger.info(f"{self.stage} [{bar}] {100 * frac:5.1f}%  {done}/{total} {what}")
