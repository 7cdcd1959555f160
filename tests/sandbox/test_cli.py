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
    for word in ("--workers", "--timeout", "--require-isolation", "stdin_tests", "functional_tests"):
        assert word in result.output
