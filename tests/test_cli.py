"""The `setrl` command line: --help everywhere, validate's messages, sql's formats."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from typer.testing import CliRunner

from setrl.cli import app
from tests.conftest import REPO

runner = CliRunner()


def command_paths(group=app, prefix=()):
    import typer.main

    click_group = typer.main.get_command(group)

    def walk(cmd, path):
        yield path
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(sub, path + (name,))

    return list(walk(click_group, prefix))


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "setrl")
def test_every_command_has_help(path):
    out = runner.invoke(app, [*path, "--help"])
    assert out.exit_code == 0, out.output
    assert "Usage:" in out.output and len(out.output) > 200


def test_validate_prints_resolved_config():
    out = runner.invoke(app, ["validate", str(REPO / "pipeline.yaml"), "--profile", "smoke"])
    assert out.exit_code == 0
    cfg = json.loads(out.output)
    assert cfg["profile"] == "smoke" and cfg["eval"]["n"] == 8


def test_validate_rejects_a_broken_variant_with_the_key_path(tmp_path):
    raw = yaml.safe_load((REPO / "pipeline.yaml").read_text())
    raw["base"]["methods"][0]["rolouts"] = 8
    bad = tmp_path / "pipeline.yaml"
    bad.write_text(yaml.safe_dump(raw))
    proc = subprocess.run([sys.executable, "-m", "setrl.cli", "validate", str(bad), "--profile", "tiny"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "methods.0.rolouts: unknown key" in proc.stderr and "Traceback" not in proc.stderr


def test_sql_formats_and_errors(store):
    store.insert("pass_at_k", [{"study_id": "s", "model_id": "m", "method": "m", "k": k, "pass_at_k": k / 10}
                               for k in (1, 2)])
    db = str(store.path)
    as_json = runner.invoke(app, ["sql", "--db", db, "--format", "json", "SELECT k, pass_at_k FROM pass_at_k ORDER BY k"])
    assert json.loads(as_json.output) == [{"k": 1, "pass_at_k": 0.1}, {"k": 2, "pass_at_k": 0.2}]
    as_csv = runner.invoke(app, ["sql", "--db", db, "--format", "csv", "SELECT k FROM pass_at_k ORDER BY k"])
    assert as_csv.output.split() == ["k", "1", "2"]
    table = runner.invoke(app, ["sql", "--db", db, "SELECT method, k FROM pass_at_k"])
    assert "method" in table.output and table.exit_code == 0
    bad = runner.invoke(app, ["sql", "--db", db, "SELECT nope FROM pass_at_k"])
    assert bad.exit_code == 2 and "query failed" in bad.output
    missing = runner.invoke(app, ["sql", "--db", db + ".missing", "SELECT 1"])
    assert missing.exit_code == 2 and "no DuckDB store" in missing.output
    # read-only: a write through `setrl sql` is refused and changes nothing
    write = runner.invoke(app, ["sql", "--db", db, "DELETE FROM pass_at_k"])
    assert write.exit_code == 2 and store.scalar("SELECT count(*) FROM pass_at_k") == 2
