"""`setrl sandbox run`: all three styles, malformed lines, order, --help."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from setrl.sandbox.cli import app


def test_cli_runs_jobs_and_reports_malformed_lines(tmp_path):
    lines = [
        json.dumps({"id": "a", "code": "def f(x):\n    return x + 1\n", "test": "def check(c):\n    assert c(1) == 2\n", "entry_point": "f"}),
        "{not json",
        json.dumps({"id": "b", "code": "print(int(input()) * 2)", "stdin_tests": [{"input": "4\n", "output": "8\n"}]}),
        json.dumps({"id": "c", "code": "def g(a):\n    return a\n", "functional_tests": [{"input": "[1]", "output": "[2]"}], "entry_point": "g"}),
        json.dumps({"id": "d", "code": "x = 1"}),
        "",
        json.dumps({"id": "e", "code": "while True: pass", "test": "def check(c): pass", "entry_point": "f"}),
    ]
    src, out = tmp_path / "jobs.jsonl", tmp_path / "verdicts.jsonl"
    src.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(app, ["run", "--in", str(src), "--out", str(out), "--workers", "2", "--timeout", "0.5"])
    assert result.exit_code == 0, result.output
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [v["id"] for v in got] == ["a", "line-2", "b", "c", "d", "e"]
    by_id = {v["id"]: v for v in got}
    assert by_id["a"]["passed"] and by_id["b"]["passed"]
    assert by_id["c"]["status"] == "failed"
    assert by_id["line-2"]["status"] == "error" and "line 2" in by_id["line-2"]["reason"]
    assert by_id["d"]["status"] == "error" and "line 5" in by_id["d"]["reason"]
    assert by_id["e"]["status"] == "timeout"
    assert set(got[0]) >= {"id", "passed", "status", "reason", "seconds"}


def test_cli_help_documents_the_format():
    result = CliRunner().invoke(app, ["run", "--help"])
    assert result.exit_code == 0
    for word in ("--workers", "--timeout", "--require-isolation", "--output-limit-mb", "--max-procs", "--progress",
                 "stdin_tests", "functional_tests"):
        assert word in result.output


def test_limits_from_the_cli_and_from_the_config(tmp_path):
    # 2 MiB of output and a 20-process spawn: fine under the defaults, stopped by tighter limits
    # given on the command line or in the study config's sandbox section.
    from setrl.config import SandboxConfig
    from setrl.sandbox import Job, Sandbox

    loud = {"id": "loud", "code": "print('x' * (2 << 20))\ndef f(x):\n    return 2\n",
            "test": "def check(c):\n    assert c(1) == 2\n", "entry_point": "f"}
    spawn = {"id": "spawn", "code": ("import subprocess\nprocs = [subprocess.Popen(['sleep', '1']) for _ in range(20)]\n"
                                     "def f(x):\n    return 2\n"),
             "test": "def check(c):\n    assert c(1) == 2\n", "entry_point": "f"}
    src = tmp_path / "jobs.jsonl"
    src.write_text(json.dumps(loud) + "\n" + json.dumps(spawn) + "\n")
    statuses = {}
    for name, flags in (("default", []), ("tight", ["--output-limit-mb", "1", "--max-procs", "8"])):
        out = tmp_path / f"{name}.jsonl"
        result = CliRunner().invoke(app, ["run", "--in", str(src), "--out", str(out), "--timeout", "3", *flags])
        assert result.exit_code == 0, result.output
        statuses[name] = [json.loads(line)["status"] for line in out.read_text().splitlines()]
    assert statuses["default"] == ["passed", "passed"], statuses
    assert statuses["tight"][0] == "output_limit" and statuses["tight"][1] != "passed", statuses

    jobs = [Job(j["id"], j["code"], "check", j["test"], j["entry_point"]) for j in (loud, spawn)]
    with Sandbox(**SandboxConfig(output_limit_mb=1, max_procs=8, timeout_s=3).model_dump()) as sb:
        verdicts = sb.run(jobs)
    assert verdicts[0].status == "output_limit" and not verdicts[1].passed, verdicts


def test_progress_bar_on_request_and_off_when_not_a_terminal(tmp_path):
    src = tmp_path / "jobs.jsonl"
    good = {"id": "a", "code": "def f(x):\n    return x + 1\n", "test": "def check(c):\n    assert c(1) == 2\n", "entry_point": "f"}
    src.write_text("\n".join(json.dumps({**good, "id": str(i)}) for i in range(3)) + "\n\n{broken\n")
    shown = CliRunner().invoke(app, ["run", "--in", str(src), "--out", str(tmp_path / "a.jsonl"), "--progress", "on"])
    quiet = CliRunner().invoke(app, ["run", "--in", str(src), "--out", str(tmp_path / "b.jsonl")])
    assert shown.exit_code == quiet.exit_code == 0
    assert "100%" in shown.output and "3 passed" in shown.output  # 4 lines done: 3 jobs + 1 malformed
    assert "100%" not in quiet.output and quiet.output.strip() == "3/4 passed"
    bad = CliRunner().invoke(app, ["run", "--in", str(src), "--out", str(tmp_path / "c.jsonl"), "--progress", "yes"])
    assert bad.exit_code == 2 and "--progress" in bad.output and not (tmp_path / "c.jsonl").exists()
