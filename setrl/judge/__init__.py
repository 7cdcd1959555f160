"""Strategy-clustering judges for Poly-EPO's diversity term.

    judge = make_judge(spec)                                  # JudgeSpec from pipeline.yaml
    service = JudgeService(judge, store, policy="own_cluster")
    clusterings = service.cluster_groups([(problem, responses), ...])

Judges are registered by kind: `ast` (offline structural signature, the default) and `openai`
(an LLM behind any OpenAI-compatible endpoint). See service.py for the cache and failure policies
and calibration.py for how the training judge is chosen.
"""

from __future__ import annotations

from setrl.config import JudgeSpec
from setrl.judge.base import (DEGENERATE, Clustering, Judge, JudgeError, JudgeTransientError,
                              JudgeUnavailableError)
from setrl.judge.service import JudgeService


def _ast(spec: JudgeSpec, degenerate_id: int, **_):
    from setrl.judge.ast_judge import AstJudge

    return AstJudge(spec.name, degenerate_id)


def _openai(spec: JudgeSpec, degenerate_id: int, **kwargs):
    from setrl.judge.openai_judge import OpenAIJudge

    return OpenAIJudge(spec, degenerate_id, **kwargs)


JUDGES = {"ast": _ast, "openai": _openai}


def make_judge(spec: JudgeSpec, degenerate_id: int = DEGENERATE, **kwargs) -> Judge:
    """Build the judge a spec describes. kwargs go to the judge (openai: backoff_s, max_backoff_s, client)."""
    if spec.kind not in JUDGES:
        raise ValueError(f"unknown judge kind '{spec.kind}'; valid: {', '.join(JUDGES)}")
    return JUDGES[spec.kind](spec, degenerate_id, **kwargs)


__all__ = ["DEGENERATE", "Clustering", "Judge", "JudgeError", "JudgeService", "JudgeSpec", "JudgeTransientError",
           "JudgeUnavailableError", "JUDGES", "make_judge"]
