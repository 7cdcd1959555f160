"""The LLM judge through the real `openai` client against a real local HTTP server that fails on demand."""

from __future__ import annotations

import pytest

from setrl.config import JudgeSpec
from setrl.judge import JudgeService, JudgeUnavailableError, make_judge
from setrl.judge.ast_judge import AstJudge
from setrl.judge.calibration import load_calibration_set
from tests.support.fake_chat_server import FakeChatServer

GROUPS = load_calibration_set("data/calibration/leetcode.jsonl")
BATCH = [(g.problem, g.responses) for g in GROUPS[:6]]


@pytest.fixture
def server():
    with FakeChatServer() as s:
        yield s


def judge_for(server, **kw):
    spec = JudgeSpec(**{"name": "fake", "kind": "openai", "model": "fake-judge", "base_url": server.url,
                        "timeout_s": 2.0, "max_retries": 3, "concurrency": 2, **kw})
    return make_judge(spec, backoff_s=0.01, max_backoff_s=0.05)


def expected(problem, responses):
    return AstJudge("x").cluster(problem, responses).cluster_ids


def outcomes(store):
    return store.query("SELECT outcome, count(*) AS n FROM judge_calls GROUP BY 1").set_index("outcome").n.to_dict()


def test_answer_is_parsed(server):
    p, r = BATCH[0]
    c = judge_for(server).cluster(p, r)
    assert c.cluster_ids == expected(p, r) and not c.failed
    assert c.prompt_tokens > 0 and len(c.rationales) == len(r)


@pytest.mark.parametrize("mode", ["503", "429", "500", "down"])
def test_transient_errors_are_retried(server, mode):
    server.control(mode=mode, count=2)
    p, r = BATCH[0]
    c = judge_for(server).cluster(p, r)
    assert c.cluster_ids == expected(p, r)
    assert server.stats()["requests"] == 3
    assert [x["outcome"] for x in c.calls][:2] == ([f"http_{mode}"] * 2 if mode != "down" else ["connection"] * 2)


def test_hang_past_timeout_is_retried(server):
    server.control(mode="hang", count=1, seconds=10)
    p, r = BATCH[0]
    c = judge_for(server, timeout_s=0.5).cluster(p, r)
    assert [x["outcome"] for x in c.calls] == ["timeout", "ok"]
    assert c.cluster_ids == expected(p, r)


@pytest.mark.parametrize("mode", ["malformed", "incomplete", "wrong_keys", "non_int"])
def test_malformed_answers_are_retried_then_recorded_as_failure(server, store, mode):
    server.control(mode=mode, count=1)
    p, r = BATCH[0]
    assert judge_for(server).cluster(p, r).cluster_ids == expected(p, r)
    server.control(mode=mode)  # never recovers
    service = JudgeService(judge_for(server, max_retries=2), store, "own_cluster")
    (c,) = service.cluster_groups([BATCH[1]])
    assert c.failed and c.cluster_ids == list(range(len(BATCH[1][1])))
    assert "malformed" in c.error
    assert outcomes(store) == {"malformed": 3}
    assert service.stats["failure_rate"] == 1.0
    assert store.scalar("SELECT failed FROM judgments") is True


def test_cache_second_run_sends_nothing(server, store):
    first = JudgeService(judge_for(server), store).cluster_groups(BATCH)
    assert server.stats()["requests"] == len(BATCH)
    service = JudgeService(judge_for(server), store)  # a new run: nothing in memory
    second = service.cluster_groups(BATCH)
    assert server.stats()["requests"] == len(BATCH)
    assert service.stats["requests"] == 0 and service.stats["cache_hits"] == len(BATCH)
    assert [c.cluster_ids for c in second] == [c.cluster_ids for c in first]
    assert all(c.cached for c in second) and not any(c.cached for c in first)
    # a different prompt version is a different cache key
    JudgeService(judge_for(server, prompt="v2"), store).cluster_groups(BATCH[:1])
    assert server.stats()["requests"] == len(BATCH) + 1


def test_duplicate_groups_in_a_batch_are_sent_once(server, store):
    out = JudgeService(judge_for(server), store).cluster_groups([BATCH[0], BATCH[0]])
    assert server.stats()["requests"] == 1 and out[0].cluster_ids == out[1].cluster_ids


def test_policy_own_cluster_and_skip(server, store):
    server.control(mode="503")
    own = JudgeService(judge_for(server, max_retries=1), store, "own_cluster")
    c = own.cluster_groups(BATCH[:2])
    assert all(x.failed for x in c) and c[0].cluster_ids == list(range(len(BATCH[0][1])))
    assert own.stats["failures"] == 2 and own.stats["failure_rate"] == 1.0
    skip = JudgeService(judge_for(server, max_retries=1), store, "skip")
    assert [x.cluster_ids for x in skip.cluster_groups(BATCH[:2])] == [None, None]
    # failures are recorded but never served from the cache: once the server is back, they are judged
    server.control(mode="ok")
    back = JudgeService(judge_for(server), store, "fail").cluster_groups(BATCH[:2])
    assert [x.cluster_ids for x in back] == [expected(*g) for g in BATCH[:2]]
    assert store.scalar("SELECT count(*) FROM judgments WHERE failed") == 0


def test_outage_mid_batch_loses_nothing_and_resumes(server, store):
    server.control(mode="down", after=3)  # answers 3 requests, then the endpoint is gone
    service = JudgeService(judge_for(server, concurrency=1, max_retries=2), store, "fail")
    with pytest.raises(JudgeUnavailableError, match="re-run the stage"):
        service.cluster_groups(BATCH)
    assert store.scalar("SELECT count(*) FROM judgments WHERE NOT failed") == 3
    before = server.stats()["requests"]
    server.control(mode="ok")
    resumed = JudgeService(judge_for(server), store, "fail")
    out = resumed.cluster_groups(BATCH)
    assert server.stats()["requests"] - before == len(BATCH) - 3  # only what was not judged
    assert resumed.stats["cache_hits"] == 3
    assert [c.cluster_ids for c in out] == [expected(*g) for g in BATCH]


def test_connection_refused_raises_under_fail(server, store):
    server.stop()  # nothing listens on the port any more
    service = JudgeService(judge_for(server, max_retries=1), store, "fail")
    with pytest.raises(JudgeUnavailableError, match="unavailable"):
        service.cluster_groups(BATCH[:2])
    assert outcomes(store)["connection"] >= 2


def test_non_transient_error_is_not_retried(server, store):
    # A 404 (wrong base_url path) is a configuration error: one request, no retries.
    spec = JudgeSpec(name="bad", kind="openai", model="m", base_url=server.url + "/nope", max_retries=3)
    bad = JudgeService(make_judge(spec, backoff_s=0.01), store, "skip")
    (c,) = bad.cluster_groups(BATCH[:1])
    assert c.failed and c.cluster_ids is None and "404" in c.error
    assert bad.stats["requests"] == 1 and server.stats()["requests"] == 0
