"""setrl inside verl 0.9.1: advantage estimators, cluster-id delivery, EXPO hooks.

Importing this module (verl does it in every Ray process when launched with
`VERL_USE_EXTERNAL_MODULES=setrl.train.verl_backend`) does four things:

1. registers every setrl estimator in verl's registry as `setrl_<name>` (prefixed so
   `grpo` never collides with verl's own);
2. wraps `compute_advantage` in `verl.trainer.ppo.ray_trainer` and
   `verl.trainer.ppo.v1.utils`: verl 0.9.1 hands custom estimators only
   `token_level_rewards`, `response_mask`, `index` and `config`, never the per-rollout
   extras, so for estimators that read judge clusters the wrapper calls them itself with
   `non_tensor_batch` (cluster ids in `CLUSTER_KEY`);
3. replaces the v1 "sync" trainer with `SetrlSyncTrainer`, which copies the reward
   manager's cluster ids out of each trajectory's `extra_fields["reward_extra_info"]`
   (where the v1 agent loop leaves them) into that wrapper, sets the accuracy-conditioned
   KL coefficient and feeds the Gaussian curriculum sampler;
4. registers the group-level reward manager (`setrl.train.verl_reward`).

setrl settings that verl has no field for travel in the Hydra config under `setrl.*`
(see `setrl.train.verl_config`).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
from enum import Enum
from typing import Any, Iterator

import numpy as np
import torch
from torch.utils.data import Sampler

from verl.trainer.ppo import core_algos
from verl.trainer.ppo import ray_trainer as _ray_trainer

from setrl import advantages
from setrl.curriculum import GaussianCurriculum, akl_coef
from setrl.train import verl_reward  # noqa: F401  (registers the reward manager)

logger = logging.getLogger(__name__)

PREFIX = "setrl_"
CLUSTER_KEY = "cluster_id"  # reward extra-info key, also the non_tensor_batch key the estimators read
CURRICULUM_FILE = "setrl_curriculum.json"

# Cluster ids (bs,) for the batch whose advantage is being computed, set by the v1 trainer:
# its compute path builds the DataProto itself, so the ids cannot ride in non_tensor_batch.
_DELIVERED: contextvars.ContextVar[np.ndarray | None] = contextvars.ContextVar("setrl_clusters", default=None)


def verl_name(name: str) -> str:
    return PREFIX + name


def _setrl_cfg(config) -> dict:
    """The `setrl` block of a verl config (the algorithm config carries it too), as a plain dict."""
    if config is None:
        return {}
    block = config.get("setrl", None) if hasattr(config, "get") else getattr(config, "setrl", None)
    if block is None:
        return {}
    try:
        from omegaconf import OmegaConf

        return OmegaConf.to_container(block, resolve=True) if OmegaConf.is_config(block) else dict(block)
    except ImportError:
        return dict(block)


def _groups(index) -> list[np.ndarray]:
    """Row positions of each uid, groups in order of first appearance."""
    order: dict[Any, list[int]] = {}
    for row, uid in enumerate(index):
        order.setdefault(uid, []).append(row)
    return [np.asarray(rows) for rows in order.values()]


def group_advantages(name: str, scores: np.ndarray, index, clusters: np.ndarray | None,
                     params: dict) -> tuple[np.ndarray, int]:
    """Per-row advantages (bs,) and how many groups fell back to Dr.GRPO.

    scores (bs,) sequence rewards; index (bs,) group uid per row; clusters (bs,) judge ids,
    where a group with any id < 0 was not clustered (judge policy "skip") and gets Dr.GRPO
    advantages, exactly as setrl's CPU trainer does.
    """
    est = advantages.get(name)
    fallback = advantages.get("dr_grpo")
    if est.needs_clusters and clusters is None:
        # Loud, not a silent Dr.GRPO: a missing delivery would make Poly-EPO a baseline run.
        raise ValueError(f"advantage estimator {name!r} needs judge cluster ids in non_tensor_batch[{CLUSTER_KEY!r}]; "
                         "was the setrl reward manager (reward.reward_manager.name=setrl_group) used?")
    out = np.zeros(len(scores))
    skipped = 0
    for rows in _groups(index):
        if est.needs_clusters:
            ids = np.asarray(clusters[rows], dtype=np.int64)
            if (ids < 0).any():
                out[rows] = fallback(scores[rows])
                skipped += 1
                continue
            out[rows] = est(scores[rows], ids, **params)
        else:
            out[rows] = est(scores[rows], **params)
    return out, skipped


def _make_verl_estimator(name: str):
    def estimator(token_level_rewards: torch.Tensor, response_mask: torch.Tensor, index=None, config=None,
                  non_tensor_batch: dict | None = None, **_: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """setrl estimator `{name}`: (bs, T) rewards -> (bs, T) advantages = returns.

        The sequence reward is the token sum; the per-rollout advantage is broadcast to every
        response token. Parameters come from `config.setrl.estimator_params`.
        """
        if index is None:
            raise ValueError(f"{verl_name(name)} needs the group index (non_tensor_batch['uid'])")
        scores = token_level_rewards.sum(dim=-1).detach().cpu().double().numpy()  # (bs,)
        clusters = None
        if non_tensor_batch is not None and CLUSTER_KEY in non_tensor_batch:
            clusters = np.asarray(non_tensor_batch[CLUSTER_KEY], dtype=np.int64)
        params = _setrl_cfg(config).get("estimator_params", {}) or {}
        adv, _ = group_advantages(name, scores, index, clusters, params)
        adv_t = torch.as_tensor(adv, dtype=torch.float32, device=response_mask.device).unsqueeze(-1) * response_mask
        return adv_t, adv_t

    estimator.__name__ = verl_name(name)
    estimator.__doc__ = (estimator.__doc__ or "").replace("{name}", name) + "\n" + advantages.get(name).doc
    return estimator


_VERL_FNS = {verl_name(n): _make_verl_estimator(n) for n in advantages.names()}
for _name, _fn in _VERL_FNS.items():
    core_algos.register_adv_est(_name)(_fn)
NEEDS_CLUSTERS = frozenset(verl_name(n) for n in advantages.names() if advantages.get(n).needs_clusters)


def _plain_name(adv_estimator) -> str:
    return adv_estimator.value if isinstance(adv_estimator, Enum) else str(adv_estimator)


_original_compute_advantage = _ray_trainer.compute_advantage


def compute_advantage(data, adv_estimator, gamma: float = 1.0, lam: float = 1.0, num_repeat: int = 1,
                      norm_adv_by_std_in_grpo: bool = True, config=None):
    """verl's `compute_advantage`, except that cluster-reading setrl estimators also get
    `non_tensor_batch` (with ids delivered by the v1 trainer when the batch lacks them)."""
    name = _plain_name(adv_estimator)
    if name not in NEEDS_CLUSTERS:
        return _original_compute_advantage(data, adv_estimator, gamma=gamma, lam=lam, num_repeat=num_repeat,
                                           norm_adv_by_std_in_grpo=norm_adv_by_std_in_grpo, config=config)
    if "response_mask" not in data.batch.keys():
        data.batch["response_mask"] = _ray_trainer.compute_response_mask(data)
    delivered = _DELIVERED.get()
    if CLUSTER_KEY not in data.non_tensor_batch and delivered is not None:
        if len(delivered) != len(data):
            raise ValueError(f"{len(delivered)} delivered cluster ids for a batch of {len(data)}")
        data.non_tensor_batch[CLUSTER_KEY] = np.asarray(delivered, dtype=np.int64)
    adv, ret = _VERL_FNS[name](token_level_rewards=data.batch["token_level_rewards"],
                               response_mask=data.batch["response_mask"], index=data.non_tensor_batch["uid"],
                               config=config, non_tensor_batch=data.non_tensor_batch)
    data.batch["advantages"] = adv
    data.batch["returns"] = ret
    return data


@contextlib.contextmanager
def delivered_clusters(ids: np.ndarray | None) -> Iterator[None]:
    """Make `ids` (bs,) the cluster ids of the next `compute_advantage` call in this context."""
    token = _DELIVERED.set(None if ids is None else np.asarray(ids, dtype=np.int64))
    try:
        yield
    finally:
        _DELIVERED.reset(token)


def _install_compute_advantage() -> None:
    # Both trainers import the function by name, so the wrapper must replace each binding.
    _ray_trainer.compute_advantage = compute_advantage
    from verl.trainer.ppo.v1 import utils as v1_utils

    v1_utils.compute_advantage = compute_advantage


_install_compute_advantage()


# ---------------------------------------------------------------- EXPO: curriculum sampler


class GaussianCurriculumSampler(Sampler[int]):
    """A torch Sampler drawing dataset rows from a `GaussianCurriculum`.

    It draws one batch of `batch_size` distinct rows at a time, lazily, so with
    `dataloader_num_workers=0` every batch sees the accuracies updated after the last step.
    One epoch yields len(dataset) // batch_size * batch_size rows (verl drops the last partial batch).
    """

    def __init__(self, n_rows: int, batch_size: int, ema: float, mu: float, sigma: float, seed: int):
        self.curriculum = GaussianCurriculum(n_rows, ema=ema, mu=mu, sigma=sigma, seed=seed)
        self.batch_size = int(batch_size)

    def __len__(self) -> int:
        return self.curriculum.n_questions // self.batch_size * self.batch_size

    def __iter__(self) -> Iterator[int]:
        for _ in range(len(self) // self.batch_size):
            yield from self.curriculum.sample(self.batch_size).tolist()

    def update(self, rows, mean_rewards) -> None:
        self.curriculum.update(rows, mean_rewards)


def prompt_means(index, uids, scores: np.ndarray) -> tuple[list[int], list[float]]:
    """Dataset row and mean reward of every prompt group in the batch: index (bs,) dataset
    rows, uids (bs,) group ids, scores (bs,) rewards."""
    rows, means = [], []
    for members in _groups(uids):
        rows.append(int(np.asarray(index)[members[0]]))
        means.append(float(scores[members].mean()))
    return rows, means


# ---------------------------------------------------------------- the v1 trainer


def clusters_from_extra_fields(extra_fields) -> np.ndarray | None:
    """Cluster ids (bs,) from the trajectories' `extra_fields["reward_extra_info"]`; None when
    no row carries one (a non-setrl reward manager)."""
    ids, seen = [], False
    for fields in extra_fields:
        info = (fields or {}).get("reward_extra_info", {}) or {}
        if CLUSTER_KEY in info:
            seen = True
        ids.append(int(info.get(CLUSTER_KEY, -1)))
    return np.asarray(ids, dtype=np.int64) if seen else None


def _judge_metrics(extra_fields, uids, scores: np.ndarray, degenerate: set[int]) -> dict[str, float]:
    """Per-step diversity and judge-health metrics under the `setrl/` prefix."""
    infos = [((f or {}).get("reward_extra_info", {}) or {}) for f in extra_fields]
    distinct, failures, groups = [], 0, _groups(uids)
    for rows in groups:
        ids = [infos[r].get(CLUSTER_KEY, -1) for r in rows]
        correct = {i for r, i in zip(rows, ids) if scores[r] >= 1 and i >= 0 and i not in degenerate}
        distinct.append(len(correct))
        failures += int(any(bool(infos[r].get("judge_failed", False)) for r in rows))
    return {
        "setrl/distinct_correct_clusters": float(np.mean(distinct)) if distinct else 0.0,
        "setrl/judge_failures": float(failures),
        "setrl/judge_failure_rate": failures / max(len(groups), 1),
        "setrl/pass_rate": float((scores >= 1).mean()) if len(scores) else 0.0,
    }


def _v1_trainer_cls():
    from verl.trainer.ppo.v1.trainer_base import TRAINER_REGISTRY
    from verl.trainer.ppo.v1.trainer_sync import PPOTrainerSync

    class SetrlSyncTrainer(PPOTrainerSync):
        """verl's sync trainer plus setrl's hooks (cluster delivery, AKL, Gaussian curriculum)."""

        # ---- EXPO / metrics hooks: plain methods so tests can drive them without Ray
        def setrl_after_rewards(self, scores: np.ndarray, uids, rows, extra_fields, metrics: dict) -> np.ndarray | None:
            """Runs once per step before the advantage: returns the batch's cluster ids (or None),
            sets the AKL coefficient and updates the curriculum with per-prompt mean reward."""
            cfg = _setrl_cfg(self.config)
            kl = cfg.get("kl", {}) or {}
            if kl.get("kind") == "akl" and self.config.algorithm.use_kl_in_reward:
                acc = float(np.mean(scores >= 1)) if len(scores) else 0.0
                self.kl_ctrl_in_reward.value = akl_coef(float(kl.get("beta", 0.02)), acc)
                metrics["setrl/kl_coef"] = self.kl_ctrl_in_reward.value
            sampler = getattr(self, "setrl_sampler", None)
            if sampler is not None and rows is not None:
                sampler.update(*prompt_means(rows, uids, scores))
            metrics.update(_judge_metrics(extra_fields, uids, scores, set(cfg.get("degenerate", [100]))))
            return clusters_from_extra_fields(extra_fields)

        def _init_dataloader(self):
            super()._init_dataloader()
            cur = _setrl_cfg(self.config).get("curriculum", {}) or {}
            if cur.get("kind") != "gaussian":
                self.setrl_sampler = None
                return
            from torchdata.stateful_dataloader import StatefulDataLoader
            from verl.utils.dataset.rl_dataset import collate_fn

            gen_batch_size = self.config.data.get("gen_batch_size", None) or self.config.data.train_batch_size
            self.setrl_sampler = GaussianCurriculumSampler(
                len(self.train_dataset), gen_batch_size, ema=cur.get("ema", 0.9), mu=cur.get("mu", 0.5),
                sigma=cur.get("sigma", 0.35), seed=int(self.config.data.get("seed", 0) or 0))
            # Same loader as verl's, with the curriculum as sampler; num_workers=0 is set by
            # verl_config so no batch is drawn before the previous step's accuracies land.
            self.train_dataloader = StatefulDataLoader(
                dataset=self.train_dataset, batch_size=gen_batch_size,
                num_workers=self.config.data["dataloader_num_workers"], drop_last=True,
                collate_fn=collate_fn, sampler=self.setrl_sampler)
            self.train_dataloader_it = None

        def _compute_advantage(self, batch, metrics: dict):
            import transfer_queue as tq

            data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id,
                                   select_fields=["uid", "rm_scores", "extra_fields", "index"])
            extra = list(data.pop("extra_fields").tolist())
            uids = list(data.pop("uid").tolist())
            rows = np.asarray(data.pop("index").tolist()) if "index" in data.keys() else None
            scores = data.to_padded_tensor()["rm_scores"].sum(dim=-1).double().numpy()  # (bs,)
            ids = self.setrl_after_rewards(scores, uids, rows, extra, metrics)
            with delivered_clusters(ids):
                return super()._compute_advantage(batch, metrics)

        def _save_checkpoint(self):
            super()._save_checkpoint()
            if getattr(self, "setrl_sampler", None) is not None:
                folder = os.path.join(self.config.trainer.default_local_dir, f"global_step_{self.global_steps}")
                with open(os.path.join(folder, CURRICULUM_FILE), "w") as f:
                    json.dump(self.setrl_sampler.curriculum.state_dict(), f)

        def _load_checkpoint(self):
            super()._load_checkpoint()
            sampler = getattr(self, "setrl_sampler", None)
            if sampler is None or self.global_steps == 0:
                return
            from verl.utils.checkpoint.checkpoint_manager import find_latest_ckpt_path

            folder = find_latest_ckpt_path(self.config.trainer.default_local_dir)
            path = os.path.join(folder or "", CURRICULUM_FILE)
            if folder and os.path.exists(path):
                with open(path) as f:
                    sampler.curriculum.load_state_dict(json.load(f))

    # Replace, not add: verl's code tests `trainer_mode == "sync"` in several places, so a
    # new mode name would change its behaviour; register_trainer refuses a second class.
    TRAINER_REGISTRY["sync"] = SetrlSyncTrainer
    return SetrlSyncTrainer


SetrlSyncTrainer = _v1_trainer_cls()
