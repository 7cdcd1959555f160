"""Run untrusted, model-written programs against their tests and return verdicts nobody can forge.

    from setrl.sandbox import Job, Sandbox
    with Sandbox(workers=2, timeout_s=3.0, memory_mb=512, require_isolation=True) as sb:
        verdicts = sb.run([Job("a", code, "check", tests, entry_point="f")])

Layout: jobs.py (Job, Verdict, JSONL format), pool.py (the trusted parent), isolation.py (how
sandboxes start), wire.py (frames and the plain-data codec), inside_runner.py / inside_judge.py
(what runs inside the two sandboxes of each worker), cli.py (`setrl sandbox run`).
The threat model is in pool.py's and inside_judge.py's docstrings and the README.
"""

from setrl.sandbox.isolation import IsolationUnavailable, isolation_available
from setrl.sandbox.jobs import Job, Verdict, job_from_dict, job_from_problem
from setrl.sandbox.pool import Sandbox, run_jobs

__all__ = ["Job", "Verdict", "Sandbox", "run_jobs", "job_from_problem", "job_from_dict",
           "isolation_available", "IsolationUnavailable"]
