"""Throughput of the offline ast judge on the shipped calibration sets (target: >= 1,000 responses/s).

    .venv/bin/python benchmarks/judge.py [--seconds 2]

Clusters every group of each calibration set that exists (data/calibration/*.jsonl) repeatedly for
about --seconds, single-threaded, and prints responses per second and microseconds per group.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from setrl.judge.ast_judge import AstJudge  # noqa: E402
from setrl.judge.calibration import REPO_ROOT, load_calibration_set  # noqa: E402

TARGET = 1000.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="time budget per calibration set")
    args = ap.parse_args()
    judge = AstJudge("ast")
    worst = float("inf")
    for path in sorted((REPO_ROOT / "data" / "calibration").glob("*.jsonl")):
        groups = load_calibration_set(path)
        n_resp, rounds, t0 = 0, 0, time.perf_counter()
        while time.perf_counter() - t0 < args.seconds or rounds == 0:
            for g in groups:
                judge.cluster(g.problem, g.responses)
                n_resp += len(g.responses)
            rounds += 1
        dt = time.perf_counter() - t0
        rate = n_resp / dt
        worst = min(worst, rate)
        print(f"{path.name:18s} {len(groups):3d} groups x {rounds:4d} rounds: {rate:8.0f} responses/s, "
              f"{1e6 * dt / (rounds * len(groups)):7.0f} us/group")
    ok = worst >= TARGET
    print(f"{'PASS' if ok else 'FAIL'}: slowest set {worst:.0f} responses/s (target >= {TARGET:.0f})")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
