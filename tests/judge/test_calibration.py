"""Calibration picks the best judge by the configured metric and training reads the choice back; CLI."""

from __future__ import annotations

import json
import socket

import pytest
from typer.testing import CliRunner

from setrl.cli import app
from setrl.config import DEFAULT_PIPELINE, JudgeConfig, JudgeSpec, load_config
from setrl.judge.calibration import calibrate, load_calibration_set, selected_judge
from tests.support.fake_chat_server import FakeChatServer

LEETCODE = "data/calibration/leetcode.jsonl"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(candidates, select_by="ari"):
    cfg = load_config(DEFAULT_PIPELINE, "tiny")
    return cfg.model_copy(update={"judge": JudgeConfig(candidates=candidates, calibration_sets=[LEETCODE], select_by=select_by)})


def test_shipped_leetcode_set_is_labelled():
    groups = load_calibration_set(LEETCODE)
    assert len(groups) >= 12 and all(len(g.responses) == 8 for g in groups)
    for g in groups:
        assert 100 in g.labels and len(set(g.labels) - {100}) >= 2  # degenerates and several strategies


def test_calibrate_records_and_selects(store):
    with FakeChatServer() as server:
        dead = JudgeSpec(name="dead-api", kind="openai", model="m", base_url=f"http://127.0.0.1:{free_port()}/v1",
                         max_retries=0, timeout_s=1)
        fake = JudgeSpec(name="fake-llm", kind="openai", model="m", base_url=server.url, max_retries=0)
        cfg = config([dead, JudgeSpec(name="ast"), fake])
        assert selected_judge(cfg, store, "s/tiny").name == "dead-api"  # not calibrated yet: the first candidate
        result = calibrate(cfg, store, "s/tiny")
        requests = server.stats()["requests"]
        again = calibrate(cfg, store, "s/tiny")
        assert server.stats()["requests"] == requests == 12  # the second calibration is all cache hits
    t = result.table.set_index(["judge", "calib_set"])
    assert set(t.index) == {(j, s) for j in ("dead-api", "ast", "fake-llm") for s in ("leetcode", "all")}
    assert t.loc[("dead-api", "all"), "failures"] == 12
    assert t.loc[("ast", "all"), "ari"] > t.loc[("dead-api", "all"), "ari"]
    # the fake server answers with the ast clustering, so the two tie: the earlier candidate wins
    assert t.loc[("fake-llm", "all"), "ari"] == pytest.approx(t.loc[("ast", "all"), "ari"])
    assert t.loc[("fake-llm", "all"), "tokens"] > 0
    assert result.selected.name == "ast" and again.selected.name == "ast"
    rows = store.query("SELECT judge, calib_set, selected FROM calibration WHERE study_id = 's/tiny'")
    assert len(rows) == 6 and set(rows[rows.selected].judge) == {"ast"}
    assert selected_judge(cfg, store, "s/tiny").name == "ast"
    # a stale choice (candidate removed from the config) is an error, not a silent fallback
    with pytest.raises(ValueError, match="re-run"):
        selected_judge(config([dead]), store, "s/tiny")


def test_select_by_another_metric(store):
    # A judge that is down scores every response its own cluster, which has precision 1 by definition:
    # select_by=precision prefers it over ast (why ari is the default).
    with FakeChatServer() as server:
        server.control(mode="down")
        bad = JudgeSpec(name="own", kind="openai", model="m", base_url=server.url, max_retries=0)
        result = calibrate(config([JudgeSpec(name="ast"), bad], select_by="precision"), store, "s")
    assert result.selected.name == "own"


def test_cli_cluster_ast_and_openai(tmp_path):
    groups = load_calibration_set(LEETCODE)[:3]
    inp = tmp_path / "groups.jsonl"
    inp.write_text("".join(json.dumps({"id": g.id, "problem": g.problem.to_dict(), "responses": g.responses}) + "\n" for g in groups))
    runner = CliRunner()
    out = tmp_path / "ast.jsonl"
    r = runner.invoke(app, ["judge", "cluster", "--judge", "ast", "--in", str(inp), "--out", str(out), "--no-cache"])
    assert r.exit_code == 0, r.output
    ast_rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["id"] for x in ast_rows] == [g.id for g in groups] and all(len(x["cluster_ids"]) == 8 for x in ast_rows)
    with FakeChatServer() as server:
        args = ["judge", "cluster", "--judge", "openai", "--model", "m", "--base-url", server.url, "--in", str(inp),
                "--db", str(tmp_path / "c.duckdb")]
        r = runner.invoke(app, args + ["--out", str(tmp_path / "llm.jsonl")])
        assert r.exit_code == 0, r.output
        r = runner.invoke(app, args + ["--out", str(tmp_path / "llm2.jsonl")])
        assert server.stats()["requests"] == 3  # second invocation served from the cache
    llm = [json.loads(x) for x in (tmp_path / "llm2.jsonl").read_text().splitlines()]
    assert [x["cluster_ids"] for x in llm] == [x["cluster_ids"] for x in ast_rows] and all(x["cached"] for x in llm)
    r = runner.invoke(app, ["judge", "cluster", "--judge", "openai", "--in", str(inp), "--out", str(out), "--no-cache"])
    assert r.exit_code == 2 and "needs a model" in r.output
