"""Stage 1, prepare data: sample the base model on every training problem, keep the problems whose
pass count lies in the configured band, split off validation, deduplicate eval against train.

Work is saved per chunk of problems (rollouts keyed by content hash), so an interrupted stage
resumes without re-sampling what it already scored. Everything dropped is recorded with why.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from setrl.config import StudyConfig
from setrl.problem import Problem, content_hash
from setrl.store import Store

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class PreparedData:
    train: list[str]
    validation: list[str]
    eval: list[str]
    dropped: int


def study_id_of(cfg: StudyConfig) -> str:
    """Rows of one study share this id; a profile is one study."""
    return f"{cfg.study}/{cfg.profile}"


def save_problems(store: Store, problems: list[Problem]) -> None:
    store.insert("problems", [
        {**p.to_dict(), "tests": p.tests, "meta": p.meta} for p in problems
    ])


def problems_by_id(store: Store, ids: list[str]) -> list[Problem]:
    """Problems in the order of `ids` (the order a stage was given them)."""
    if not ids:
        return []
    df = store.query("SELECT * FROM problems WHERE problem_id IN (SELECT unnest(?))", [list(ids)])
    by_id = {}
    for row in df.to_dict("records"):
        row["tests"] = json.loads(row["tests"])
        row["meta"] = json.loads(row["meta"]) if row["meta"] else {}
        by_id[row["problem_id"]] = Problem.from_dict(row)
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise KeyError(f"problems not in the store: {missing[:5]}{'...' if len(missing) > 5 else ''}")
    return [by_id[i] for i in ids]


def problem_set(store: Store, study_id: str, set_name: str) -> list[Problem]:
    ids = store.query("SELECT problem_id FROM problem_sets WHERE study_id = ? AND set_name = ? ORDER BY problem_id",
                      [study_id, set_name]).problem_id.tolist()
    return problems_by_id(store, ids)


def _load_all(specs) -> tuple[list[Problem], list[tuple[Problem, str]]]:
    """Problems of all specs (deduplicated by id), plus those a release-date filter removed and why."""
    from setrl.data import load_problems
    from setrl.data.dedup import filter_by_release

    seen, out, too_old = set(), [], []
    for spec in specs:
        if spec.release_after:  # contamination control is recorded, not only logged
            everything = load_problems(spec.model_copy(update={"release_after": None, "limit": None}))
            recent = {p.problem_id for p in filter_by_release(everything, spec.release_after)}
            too_old += [(p, f"released {p.meta.get('release_date') or 'on an unknown date'}, before {spec.release_after}")
                        for p in everything if p.problem_id not in recent]
        for p in load_problems(spec):
            if p.problem_id not in seen:
                seen.add(p.problem_id)
                out.append(p)
    return out, too_old


def sample_and_score(cfg: StudyConfig, store: Store, study_id: str, problems: list[Problem], n: int,
                     purpose: str, model_id: str, model_path: str, seed: int,
                     progress: Progress | None = None) -> dict[str, list[dict]]:
    """Sample `n` completions per problem and score them in the sandbox; returns rollout rows per problem.

    Problems that already have `n` rollouts for (purpose, model_id) are read back, not re-sampled.
    """
    from setrl.generation import make_generator, program_from_completion
    from setrl.sandbox import Sandbox, job_from_problem

    def key(p: Problem, i: int) -> str:
        return content_hash(purpose, model_id, p.problem_id, seed, i)

    done = store.query(
        "SELECT problem_id, count(*) AS k FROM rollouts WHERE study_id = ? AND purpose = ? AND model_id = ? GROUP BY 1",
        [study_id, purpose, model_id])
    complete = set(done.problem_id[done.k >= n])
    # Chunks are fixed over the whole problem list (enough prompts to fill one generate batch) and
    # seeded by their content, so a resumed stage samples exactly what an uninterrupted one would.
    chunk = max(1, cfg.model.batch_size // n)
    chunks = [problems[i:i + chunk] for i in range(0, len(problems), chunk)]
    todo = [c for c in chunks if any(p.problem_id not in complete for p in c)]
    generator = make_generator(cfg.model, path=model_path) if todo else None
    sb = Sandbox(**cfg.sandbox.model_dump()) if todo else None
    finished = len(problems) - sum(len(c) for c in todo)
    try:
        for part in todo:
            chunk_seed = seed + int(content_hash([p.problem_id for p in part]), 16) % 100_000
            groups = generator.sample([p.prompt for p in part], n, temperature=cfg.model.temperature,
                                      top_p=cfg.model.top_p, max_new_tokens=cfg.model.max_new_tokens, seed=chunk_seed)
            jobs, rows = [], []
            for p, comps in zip(part, groups):
                for i, c in enumerate(comps):
                    rid = key(p, i)
                    jobs.append(job_from_problem(p, program_from_completion(p, c.text), rid))
                    rows.append({"rollout_id": rid, "study_id": study_id, "purpose": purpose, "model_id": model_id,
                                 "problem_id": p.problem_id, "sample_idx": i, "text": c.text, "n_tokens": c.n_tokens,
                                 "finish_reason": c.finish_reason})
            for row, v in zip(rows, sb.run(jobs)):
                row.update(reward=float(v.passed), status=v.status, reason=v.reason)
            store.insert("rollouts", rows)
            finished += len(part)
            if progress:
                progress(finished, len(problems), f"sampled {purpose} groups")
    finally:
        if sb is not None:
            sb.close()
    df = store.query("SELECT * FROM rollouts WHERE study_id = ? AND purpose = ? AND model_id = ? ORDER BY problem_id, sample_idx",
                     [study_id, purpose, model_id])
    out: dict[str, list[dict]] = {}
    for row in df.to_dict("records"):
        out.setdefault(row["problem_id"], []).append(row)
    return out


def _validation_pick(ids: list[str], k: int, seed: int) -> set[str]:
    """Deterministic pick independent of input order: the k ids with the smallest salted hash."""
    ranked = sorted(ids, key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())
    return set(ranked[:k])


def prepare_data(cfg: StudyConfig, store: Store, progress: Progress | None = None, seed: int = 0) -> PreparedData:
    """Run stage 1 and record the train / validation / eval / dropped sets in `problem_sets`."""
    from setrl.data.dedup import deduplicate

    study_id = study_id_of(cfg)
    d = cfg.data
    train_all, _ = _load_all(d.train)
    eval_all, too_old = _load_all(d.eval)
    if not train_all:
        raise ValueError("data.train loaded no problems: check the sources in pipeline.yaml")
    if not eval_all:
        raise ValueError("data.eval loaded no problems: check the sources in pipeline.yaml")
    save_problems(store, train_all + eval_all + [p for p, _ in too_old])

    rollouts = sample_and_score(cfg, store, study_id, train_all, d.samples_per_problem, "filter", "base",
                                cfg.model.path, seed, progress)
    lo, hi = d.pass_band
    kept, sets = [], []
    for p in train_all:
        c = int(sum(r["reward"] for r in rollouts[p.problem_id]))
        if c < lo or c > hi:
            reason = "too_hard" if c < lo else "too_easy"
            sets.append({"study_id": study_id, "set_name": "dropped", "problem_id": p.problem_id, "pass_count": c,
                         "reason": f"{reason}: {c}/{d.samples_per_problem} passes outside band {lo}..{hi}"})
        else:
            kept.append((p, c))
    if len(kept) <= d.validation_size:
        raise ValueError(f"only {len(kept)} training problems lie in the pass band {lo}..{hi}; "
                         f"need more than validation_size={d.validation_size} (widen the band or add problems)")
    val = _validation_pick([p.problem_id for p, _ in kept], d.validation_size, seed)
    for p, c in kept:
        sets.append({"study_id": study_id, "set_name": "validation" if p.problem_id in val else "train",
                     "problem_id": p.problem_id, "pass_count": c, "reason": None})

    for p, why in too_old:
        sets.append({"study_id": study_id, "set_name": "dropped", "problem_id": p.problem_id, "pass_count": None,
                     "reason": f"eval {why}"})
    eval_kept, removed = deduplicate(eval_all, train_all, threshold=d.near_duplicate_threshold)
    for r in removed:
        sets.append({"study_id": study_id, "set_name": "dropped", "problem_id": r["problem_id"], "pass_count": None,
                     "reason": f"eval {r['reason']} of train {r.get('matched_id')} (similarity {r.get('similarity', 1.0):.2f})"})
    for p in eval_kept:
        sets.append({"study_id": study_id, "set_name": "eval", "problem_id": p.problem_id, "pass_count": None, "reason": None})
    store.replace("problem_sets", "study_id = ?", [study_id], sets)
    by_set: dict[str, list[str]] = {}
    for s in sets:
        by_set.setdefault(s["set_name"], []).append(s["problem_id"])
    return PreparedData(train=sorted(by_set.get("train", [])), validation=sorted(by_set.get("validation", [])),
                        eval=sorted(by_set.get("eval", [])), dropped=len(by_set.get("dropped", [])))
