"""The group-level reward manager on a tiny DataProto, through the real sandbox and the AST judge."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest

pytestmark = pytest.mark.verl
pytest.importorskip("verl", reason="verl optional extra not installed")
torch = pytest.importorskip("torch")

from omegaconf import OmegaConf  # noqa: E402
from verl import DataProto  # noqa: E402

from setrl.problem import Problem  # noqa: E402
from setrl.train import verl_reward as vr  # noqa: E402

PROBLEM = Problem(source="tiny", title="add", prompt="Write add(a, b).", entry_point="add", test_style="check",
                  tests="def check(candidate):\n    assert candidate(2, 3) == 5\n")
ANSWERS = [
    "```python\ndef add(a, b):\n    return a + b\n```",                       # correct, direct
    "```python\ndef add(a, b):\n    return sum([a, b])\n```",                 # correct, another strategy
    "```python\ndef add(a, b):\n    return a - b\n```",                       # wrong
    "I am not sure.",                                                         # no code: degenerate
]


class CharTokenizer:
    """Token id = character code: enough for the manager's decode."""

    eos_token = ""

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(int(i)) for i in ids)


def _rows(texts, uid="p0", split="train"):
    width = max(len(t) for t in texts)
    responses = torch.zeros(len(texts), width, dtype=torch.long)
    attention = torch.zeros(len(texts), 1 + width, dtype=torch.long)
    for i, t in enumerate(texts):
        responses[i, : len(t)] = torch.tensor([ord(c) for c in t])
        attention[i, : 1 + len(t)] = 1
    gt = json.dumps(PROBLEM.to_dict())
    return DataProto.from_dict(
        tensors={"prompts": torch.ones(len(texts), 1, dtype=torch.long), "responses": responses, "attention_mask": attention},
        non_tensors={"uid": np.array([uid] * len(texts), dtype=object),
                     "reward_model": np.array([{"ground_truth": gt}] * len(texts), dtype=object),
                     "extra_info": np.array([{"split": split}] * len(texts), dtype=object)})


@pytest.fixture(scope="module")
def scorer(tmp_path_factory):
    pytest.importorskip("setrl.judge", reason="setrl.judge not available")
    spec = {"sandbox": {"workers": 2, "timeout_s": 5.0, "memory_mb": 512, "require_isolation": False},
            "judge": {"name": "ast", "kind": "ast"}, "failure_policy": "own_cluster", "degenerate_id": 100,
            "db": str(tmp_path_factory.mktemp("db") / "judge.duckdb")}
    s = vr.GroupScorer(spec)
    yield s
    s.close()


def _manager(scorer, n=len(ANSWERS)):
    config = OmegaConf.create({"actor_rollout_ref": {"rollout": {"n": n}}, "setrl": {"group_timeout_s": 30}})
    return vr.SetrlGroupRewardManager(config, CharTokenizer(), scorer=scorer)


def test_group_reaches_the_judge_and_reports_clusters(scorer):
    manager = _manager(scorer)
    data = _rows(ANSWERS)

    async def all_rollouts():  # verl calls run_single once per trajectory, concurrently
        return await asyncio.gather(*(manager.run_single(data[i:i + 1]) for i in range(len(ANSWERS))))

    out = manager.loop.run_until_complete(all_rollouts())
    scores = [o["reward_score"] for o in out]
    info = [o["reward_extra_info"] for o in out]
    assert scores == [1.0, 1.0, 0.0, 0.0]
    ids = [i["cluster_id"] for i in info]
    assert ids[3] == 100 and ids[0] != ids[1] and all(i >= 0 for i in ids)  # judged as one group
    assert not any(i["judge_failed"] for i in info) and info[2]["sandbox_status"] != "passed"


def test_short_group_is_scored_after_the_timeout(scorer):
    manager = _manager(scorer, n=8)
    manager.group_timeout_s = 0.2
    data = _rows(ANSWERS[:2], uid="short")

    async def two():
        return await asyncio.gather(*(manager.run_single(data[i:i + 1]) for i in range(2)))

    out = manager.loop.run_until_complete(two())
    assert [o["reward_score"] for o in out] == [1.0, 1.0]


def test_validation_rows_skip_the_judge(scorer):
    manager = _manager(scorer)
    out = manager.loop.run_until_complete(manager.run_single(_rows(ANSWERS[:1], split="validation")))
    assert out["reward_score"] == 1.0 and out["reward_extra_info"]["cluster_id"] == vr.NOT_CLUSTERED


def test_score_batch_groups_by_uid(scorer):
    gt = json.dumps(PROBLEM.to_dict())
    infos = vr.score_batch(scorer, ["a", "b", "a", "b"], [gt] * 4, [ANSWERS[0], ANSWERS[2], ANSWERS[1], ANSWERS[3]])
    assert [i["score"] for i in infos] == [1.0, 0.0, 1.0, 0.0]
    assert infos[3]["cluster_id"] == 100
