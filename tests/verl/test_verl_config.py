"""verl-config: snapshot of the generated launch (no verl needed) and verl's own validation (verl)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from setrl.config import load_config
from setrl.train import verl_config as vc

SNAPSHOTS = Path(__file__).with_name("snapshots")
CASES = [("dr_grpo", "single", None, 1), ("poly_epo", "single", None, 1), ("poly_epo", "multi", 8, 1),
         ("poly_epo", "ray", 8, 4)]


def _spec(method: str, mode: str, gpus, nodes, **kw):
    cfg = load_config(profile="full")
    return vc.launch_spec(cfg, cfg.method(method), 0, "/runs/full/verl", mode=mode, gpus=gpus, nodes=nodes, **kw)


@pytest.mark.parametrize("method,mode,gpus,nodes", CASES)
def test_launch_matches_snapshot(method, mode, gpus, nodes):
    """The launch for pipeline.yaml's full profile; regenerate with SETRL_UPDATE_SNAPSHOTS=1."""
    text = "\n".join([f"# env {k}={v}" for k, v in sorted(_spec(method, mode, gpus, nodes).env.items())]
                     + _spec(method, mode, gpus, nodes).command()) + "\n"
    path = SNAPSHOTS / f"full_{method}_{mode}.txt"
    if os.environ.get("SETRL_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text)
    assert text == path.read_text(), f"launch changed; if intended, regenerate {path.name} with SETRL_UPDATE_SNAPSHOTS=1"


def test_modes_set_the_topology():
    single, multi, ray = _spec("dr_grpo", "single", 4, 3), _spec("dr_grpo", "multi", 4, 3), _spec("dr_grpo", "ray", 4, 3)
    assert {"trainer.n_gpus_per_node=1", "trainer.nnodes=1"} <= set(single.overrides)  # single ignores --gpus
    assert {"trainer.n_gpus_per_node=4", "trainer.nnodes=1"} <= set(multi.overrides)
    assert {"trainer.n_gpus_per_node=4", "trainer.nnodes=3"} <= set(ray.overrides)
    cmd = ray.command()
    assert cmd[:3] == ["ray", "job", "submit"] and "VERL_USE_EXTERNAL_MODULES" in cmd[4]
    assert cmd[cmd.index("--") + 1:][:3] == ["python3", "-m", "verl.trainer.main_ppo"]


def test_hydra_values_quote_what_the_grammar_needs():
    assert vc.hydra_value({"a": [1, 2], "b": None, "c": True}) == "{a:[1,2],b:null,c:true}"
    assert vc.hydra_value("http://127.0.0.1:8001/v1") == "'http://127.0.0.1:8001/v1'"
    assert vc.hydra_value("Qwen/Qwen3-4B-Base") == "Qwen/Qwen3-4B-Base"


def test_kl_kinds_map_to_verl():
    cfg = load_config(profile="full")
    m = cfg.method("poly_epo")
    akl = vc.overrides_for(cfg, m.model_copy(update={"kl": m.kl.model_copy(update={"kind": "akl"})}), 0, "o", "d")
    assert "algorithm.use_kl_in_reward=true" in akl and "algorithm.kl_penalty=low_var_kl" in akl
    fixed = vc.overrides_for(cfg, m.model_copy(update={"kl": m.kl.model_copy(update={"kind": "fixed"})}), 0, "o", "d")
    assert "actor_rollout_ref.actor.use_kl_loss=true" in fixed and "actor_rollout_ref.actor.kl_loss_coef=0.02" in fixed


def test_cpu_backend_method_is_refused():
    cfg = load_config(profile="tiny")
    with pytest.raises(ValueError, match="backend: verl"):
        vc.launch_spec(cfg, cfg.methods[0], 0, "o")


@pytest.mark.verl
@pytest.mark.parametrize("mode", ["single", "multi", "ray"])
def test_verl_accepts_the_generated_config(mode):
    """Hydra compose of verl's ppo_trainer + validate_config + name lookups, all on CPU."""
    pytest.importorskip("verl", reason="verl optional extra not installed")
    for method in ("dr_grpo", "poly_epo"):
        config = vc.validate(_spec(method, mode, 8, 2))
        assert config.algorithm.adv_estimator == f"setrl_{method}"
        assert config.reward.reward_manager.name == "setrl_group"
    assert dict(config.algorithm.setrl.estimator_params) == {"set_size": 4, "aggregate": "mean"}
    assert config.setrl.judge.kind == "ast" and config.setrl.curriculum.kind == "uniform"


@pytest.mark.verl
def test_verl_rejects_a_bad_override():
    pytest.importorskip("verl", reason="verl optional extra not installed")
    spec = _spec("dr_grpo", "single", None, 1)
    bad = vc.LaunchSpec(spec.overrides + ["trainer.no_such_key=1"], spec.env)
    with pytest.raises(Exception, match="no_such_key"):
        vc.validate(bad)
