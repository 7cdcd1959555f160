"""verl's own compute_advantage over a DataProto gives exactly setrl's pure-function advantages,
with cluster ids delivered both ways (non_tensor_batch; the v1 trainer's delivery), and the
EXPO hooks (AKL coefficient, Gaussian curriculum) inside the trainer subclass."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.verl
pytest.importorskip("verl", reason="verl optional extra not installed")
torch = pytest.importorskip("torch")

from omegaconf import OmegaConf  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.trainer.ppo import ray_trainer  # noqa: E402
from verl.trainer.ppo.v1 import utils as v1_utils  # noqa: E402

from setrl import advantages  # noqa: E402
from setrl.curriculum import akl_coef  # noqa: E402
from setrl.train import verl_backend as vb  # noqa: E402

N, G, T = 8, 3, 5  # rollouts per prompt, prompts, response tokens


def _batch(seed: int = 0, with_clusters: bool = True, shuffle: bool = True):
    """G groups of N rollouts with binary rewards on each rollout's last valid token, rows shuffled."""
    rng = np.random.default_rng(seed)
    rewards = rng.integers(0, 2, size=G * N).astype(np.float64)
    clusters = rng.choice([0, 1, 2, 3, 100], size=G * N)
    uids = np.repeat([f"u{g}" for g in range(G)], N).astype(object)
    order = rng.permutation(G * N) if shuffle else np.arange(G * N)
    rewards, clusters, uids = rewards[order], clusters[order], uids[order]
    lengths = rng.integers(1, T + 1, size=G * N)
    mask = (torch.arange(T)[None, :] < torch.as_tensor(lengths)[:, None]).float()  # (bs, T)
    tlr = torch.zeros(G * N, T)
    tlr[torch.arange(G * N), torch.as_tensor(lengths) - 1] = torch.as_tensor(rewards, dtype=torch.float32)
    nt = {"uid": uids}
    if with_clusters:
        nt[vb.CLUSTER_KEY] = clusters
    data = DataProto.from_dict(tensors={"token_level_rewards": tlr, "response_mask": mask}, non_tensors=nt)
    return data, rewards, clusters, uids, mask


def _expected(name, rewards, clusters, uids, params):
    est = advantages.get(name)
    out = np.zeros(len(rewards))
    for u in dict.fromkeys(uids):
        rows = np.flatnonzero(uids == u)
        out[rows] = est(rewards[rows], clusters[rows] if est.needs_clusters else None, **params)
    return out


def _algo(params):
    return OmegaConf.create({"setrl": {"estimator_params": params}})


@pytest.mark.parametrize("name,params", [("dr_grpo", {}), ("grpo", {}),
                                         ("poly_epo", {"set_size": 4, "aggregate": "mean"}),
                                         ("poly_epo", {"set_size": 3, "aggregate": "sum", "gate_single_cluster": True})])
def test_compute_advantage_equals_pure_functions(name, params):
    data, rewards, clusters, uids, mask = _batch()
    out = ray_trainer.compute_advantage(data, adv_estimator=f"setrl_{name}", config=_algo(params))
    want = _expected(name, rewards, clusters, uids, params)
    adv = out.batch["advantages"]
    assert torch.equal(adv, torch.as_tensor(want, dtype=torch.float32)[:, None] * mask)  # broadcast to tokens
    assert torch.equal(out.batch["returns"], adv)


def test_dr_grpo_matches_verls_builtin_grpo_without_std():
    data, *_ = _batch(seed=3, with_clusters=False)
    ours = ray_trainer.compute_advantage(data, adv_estimator="setrl_dr_grpo", config=_algo({})).batch["advantages"].clone()
    theirs = ray_trainer.compute_advantage(data, adv_estimator="grpo", norm_adv_by_std_in_grpo=False).batch["advantages"]
    assert torch.allclose(ours, theirs, atol=1e-6)


def test_v1_path_delivers_clusters_through_the_trainer_context():
    """verl's v1 `compute_advantage_for_multi_trajectories` (what PPOTrainer._compute_advantage
    calls) builds a batch with only `uid`; the ids arrive through `delivered_clusters`."""
    data, rewards, clusters, uids, mask = _batch(seed=1, with_clusters=False)
    params = {"set_size": 4, "aggregate": "mean"}
    keys = [f"{u}_{i}_0" for i, u in enumerate(uids)]
    with vb.delivered_clusters(clusters):
        out = v1_utils.compute_advantage_for_multi_trajectories(data, keys, "setrl_poly_epo", config=_algo(params))
    want = _expected("poly_epo", rewards, clusters, uids, params)
    assert torch.equal(out.batch["advantages"], torch.as_tensor(want, dtype=torch.float32)[:, None] * mask)


def test_missing_clusters_fail_loudly_and_skipped_groups_fall_back_to_dr_grpo():
    data, *_ = _batch(seed=2, with_clusters=False)
    with pytest.raises(ValueError, match="needs judge cluster ids"):
        ray_trainer.compute_advantage(data, adv_estimator="setrl_poly_epo", config=_algo({"set_size": 4}))
    data, rewards, clusters, uids, mask = _batch(seed=2, shuffle=False)
    data.non_tensor_batch[vb.CLUSTER_KEY][:N] = -1  # group u0: judge policy "skip"
    out = ray_trainer.compute_advantage(data, adv_estimator="setrl_poly_epo", config=_algo({"set_size": 4}))
    got = out.batch["advantages"].sum(-1) / mask.sum(-1)
    assert np.allclose(got[:N].numpy(), advantages.get("dr_grpo")(rewards[:N]), atol=1e-6)
    assert np.allclose(got[N:].numpy(), _expected("poly_epo", rewards[N:], clusters[N:], uids[N:], {"set_size": 4}), atol=1e-6)


def _trainer(kl_kind="akl", curriculum="gaussian", n_rows=10):
    """A SetrlSyncTrainer without Ray: only what the hooks read."""
    trainer = object.__new__(vb.SetrlSyncTrainer)
    trainer.config = OmegaConf.create({
        "algorithm": {"use_kl_in_reward": kl_kind == "akl"},
        "setrl": {"kl": {"kind": kl_kind, "beta": 0.02}, "curriculum": {"kind": curriculum}, "degenerate": [100]},
    })
    trainer.kl_ctrl_in_reward = type("Fixed", (), {"value": 0.02})()
    trainer.setrl_sampler = vb.GaussianCurriculumSampler(n_rows, batch_size=2, ema=0.9, mu=0.5, sigma=0.35, seed=0)
    return trainer


def test_trainer_hook_sets_akl_coef_updates_curriculum_and_returns_clusters():
    trainer = _trainer()
    uids = ["a"] * 4 + ["b"] * 4
    rows = [3] * 4 + [7] * 4
    scores = np.array([1, 1, 1, 0, 0, 0, 0, 0], dtype=float)
    extra = [{"reward_extra_info": {"cluster_id": c, "judge_failed": i >= 4}} for i, c in enumerate([0, 0, 1, 100, 2, 2, 3, 3])]
    metrics: dict = {}
    ids = trainer.setrl_after_rewards(scores, uids, rows, extra, metrics)
    assert ids.tolist() == [0, 0, 1, 100, 2, 2, 3, 3]
    assert trainer.kl_ctrl_in_reward.value == pytest.approx(akl_coef(0.02, 3 / 8))
    assert metrics["setrl/kl_coef"] == trainer.kl_ctrl_in_reward.value
    acc = trainer.setrl_sampler.curriculum.acc
    assert acc[3] == pytest.approx(0.9 * 0.5 + 0.1 * 0.75) and acc[7] == pytest.approx(0.45) and acc[0] == 0.5
    assert metrics["setrl/distinct_correct_clusters"] == 1.0  # a: {0, 1}; b: none correct -> mean 1
    assert metrics["setrl/judge_failures"] == 1 and metrics["setrl/judge_failure_rate"] == 0.5


def test_trainer_hook_leaves_fixed_kl_alone_and_passes_no_clusters_without_them():
    trainer = _trainer(kl_kind="fixed")
    metrics: dict = {}
    assert trainer.setrl_after_rewards(np.ones(2), ["a", "a"], [0, 0], [{}, {}], metrics) is None
    assert trainer.kl_ctrl_in_reward.value == 0.02 and "setrl/kl_coef" not in metrics


def test_gaussian_sampler_draws_distinct_batches_and_follows_updates():
    sampler = vb.GaussianCurriculumSampler(10, batch_size=4, ema=0.9, mu=0.5, sigma=0.35, seed=0)
    drawn = list(sampler)
    assert len(drawn) == len(sampler) == 8 and len(set(drawn[:4])) == 4
    sampler.update(list(range(9)), [1.0] * 9)
    for _ in range(60):  # question 9 stays at 0.5 accuracy: the only one near the Gaussian's centre
        sampler.update(list(range(9)), [1.0] * 9)
    probs = sampler.curriculum.probs()
    assert probs[9] == probs.max() and probs[9] > 2.5 * probs[0]  # exp(0.25 / (2 * 0.35**2)) ~ 2.8
