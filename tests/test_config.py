"""pipeline.yaml: every shipped profile resolves; broken variants fail naming the key path and why."""

from __future__ import annotations

import copy

import pytest
import yaml

from setrl.config import ConfigError, load_config, profiles, read_raw, resolve
from tests.conftest import REPO

PIPELINE = REPO / "pipeline.yaml"


@pytest.mark.parametrize("profile", ["tiny", "smoke", "full"])
def test_shipped_profiles_resolve(profile):
    cfg = load_config(PIPELINE, profile)
    assert cfg.profile == profile
    assert cfg.methods and all(max(cfg.eval.ks) <= cfg.eval.n for _ in [0])


def test_profiles_listed_and_default_is_tiny():
    assert set(profiles(PIPELINE)) >= {"tiny", "smoke", "full"}
    assert load_config(PIPELINE).profile == "tiny"


def test_profile_overrides_merge_key_by_key():
    smoke = load_config(PIPELINE, "smoke")
    tiny = load_config(PIPELINE, "tiny")
    assert smoke.eval.n == 8 and tiny.eval.n == 64
    # keys the smoke profile does not mention come from base
    assert smoke.model.path == tiny.model.path
    assert smoke.judge == tiny.judge
    full = load_config(PIPELINE, "full")
    assert full.model.path == "Qwen/Qwen3-4B-Base" and full.model.temperature == tiny.model.temperature


def _broken(mutate, profile="tiny"):
    raw = copy.deepcopy(read_raw(PIPELINE))
    mutate(raw)
    with pytest.raises(ConfigError) as e:
        resolve(raw, profile)
    return str(e.value)


def test_unknown_key_names_its_path():
    msg = _broken(lambda r: r["base"]["eval"].update(nn=3))
    assert "eval.nn" in msg and "unknown key" in msg


def test_wrong_type_names_its_path():
    msg = _broken(lambda r: r["base"]["methods"][0].update(steps="many"))
    assert "methods.0.steps" in msg and "integer" in msg


def test_k_larger_than_n():
    msg = _broken(lambda r: r["profiles"]["smoke"]["eval"].update(ks=[1, 16]), profile="smoke")
    assert "eval" in msg and "[16]" in msg and "n=8" in msg


def test_empty_method_list():
    msg = _broken(lambda r: r["base"].update(methods=[]))
    assert "methods is empty" in msg


def test_unknown_estimator_lists_valid_ones():
    msg = _broken(lambda r: r["base"]["methods"][1].update(estimator="poly_epoo"))
    assert "methods.1.estimator" in msg and "poly_epoo" in msg and "dr_grpo" in msg


def test_set_size_larger_than_rollouts():
    msg = _broken(lambda r: r["base"]["methods"][1]["estimator_params"].update(set_size=9))
    assert "set_size (9) exceeds rollouts (8)" in msg


def test_pass_band_outside_samples():
    msg = _broken(lambda r: r["base"]["data"].update(pass_band=[1, 20]))
    assert "data: pass_band [1, 20]" in msg and "samples_per_problem (16)" in msg


def test_unknown_profile_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="unknown profile 'gpu'.*tiny"):
        load_config(PIPELINE, "gpu")
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("base: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)


def test_config_hash_changes_with_content():
    raw = read_raw(PIPELINE)
    a = resolve(raw, "tiny")
    raw2 = yaml.safe_load(yaml.safe_dump(raw))
    raw2["base"]["eval"]["bootstrap"] = 500
    b = resolve(raw2, "tiny")
    assert a.config_hash() != b.config_hash()
    assert a.section_hash("data") == b.section_hash("data")
    assert a.section_hash("eval") != b.section_hash("eval")
