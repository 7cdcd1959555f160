"""pipeline.yaml -> verl's launch command and Hydra overrides (no verl import unless validating).

    spec = launch_spec(cfg, cfg.method("poly_epo"), seed=0, mode="single", out_dir=...)
    spec.command()        # ["python3", "-m", "verl.trainer.main_ppo", "algorithm.adv_estimator=...", ...]
    validate(spec)        # Hydra compose of verl's ppo_trainer + verl's validate_config, on CPU

Modes: single (one GPU), multi (one node, --gpus GPUs), ray (--nodes nodes of --gpus GPUs
behind a running Ray cluster, submitted with `ray job submit`). Every override is derived
from the typed config; the mapping's reasons sit next to each line.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from setrl.config import JudgeSpec, MethodConfig, StudyConfig

Mode = Literal["single", "multi", "ray"]
BACKEND_MODULE = "setrl.train.verl_backend"
REWARD_MANAGER = "setrl_group"
# Loss aggregation: setrl's names -> verl's loss_agg_mode.
AGG = {"token-sum-norm": "seq-mean-token-sum-norm", "token-mean": "token-mean", "seq-mean": "seq-mean-token-mean"}


@dataclass(frozen=True)
class LaunchSpec:
    """Everything needed to start one verl run: overrides, environment and how to submit it."""

    overrides: list[str]
    env: dict[str, str]
    mode: Mode = "single"
    ray_address: str = "http://127.0.0.1:8265"
    working_dir: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def command(self) -> list[str]:
        """argv; in ray mode a `ray job submit` whose runtime env carries setrl's variables."""
        main = ["python3", "-m", "verl.trainer.main_ppo", *self.overrides]
        if self.mode != "ray":
            return main
        runtime_env: dict[str, Any] = {"env_vars": self.env}
        if self.working_dir:
            runtime_env["working_dir"] = self.working_dir
        return ["ray", "job", "submit", f"--address={self.ray_address}",
                f"--runtime-env-json={json.dumps(runtime_env, sort_keys=True)}", "--", *main]

    def shell(self) -> str:
        """The command as one copy-pasteable shell line (environment first outside ray mode)."""
        import shlex

        env = [] if self.mode == "ray" else [f"{k}={shlex.quote(v)}" for k, v in sorted(self.env.items())]
        return " \\\n  ".join([" ".join(env + [shlex.quote(a) for a in self.command()[:3]])] +
                              [shlex.quote(a) for a in self.command()[3:]])


_BARE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/]*$")


def hydra_value(v: Any) -> str:
    """A Python value in Hydra's override grammar (dicts and lists inline, odd strings quoted)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple, set, frozenset)):
        items = sorted(v) if isinstance(v, (set, frozenset)) else v
        return "[" + ",".join(hydra_value(x) for x in items) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{hydra_value(x)}" for k, x in v.items()) + "}"
    s = str(v)
    if _BARE.match(s) and s not in ("null", "true", "false"):
        return s
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def setrl_block(cfg: StudyConfig, method: MethodConfig, judge: JudgeSpec | None, db: str | None) -> dict[str, Any]:
    """The `setrl.*` settings verl has no field for; read by the reward manager and the trainer."""
    from setrl import advantages

    needs = advantages.get(method.estimator).needs_clusters
    # The offline AST judge costs milliseconds, so every method gets its diversity metric;
    # an LLM judge runs only where the advantage needs it (as in the CPU trainer).
    use_judge = judge is not None and (needs or judge.kind == "ast")
    return {
        "estimator": method.estimator,
        "kl": {"kind": method.kl.kind, "beta": method.kl.beta},
        "curriculum": method.curriculum.model_dump(),
        "judge": judge.model_dump(exclude_none=True) if use_judge else None,
        "failure_policy": cfg.judge.failure_policy,
        "degenerate_id": cfg.judge.degenerate_id,
        "degenerate": sorted(method.estimator_params.get("degenerate", [cfg.judge.degenerate_id])),
        "sandbox": cfg.sandbox.model_dump(),
        "db": db,
    }


def overrides_for(cfg: StudyConfig, method: MethodConfig, seed: int, out_dir: str, data_dir: str,
                  n_gpus: int = 1, nnodes: int = 1, judge: JudgeSpec | None = None, db: str | None = None,
                  max_prompt_length: int = 2048) -> list[str]:
    """Hydra overrides for one (method, seed) run of `cfg` on nnodes x n_gpus GPUs."""
    m, loss = cfg.model, method.loss
    resp = m.max_new_tokens
    seq = max_prompt_length + resp
    o: dict[str, Any] = {
        # data: the prepare stage's problems, written as verl parquet files by verl_launch
        "data.train_files": f"{data_dir}/train.parquet",
        "data.val_files": f"{data_dir}/validation.parquet",
        "data.train_batch_size": method.prompts_per_step,
        "data.max_prompt_length": max_prompt_length,
        "data.max_response_length": resp,
        "data.filter_overlong_prompts": True,
        # 0 workers: the Gaussian curriculum must not have batches drawn ahead of its updates
        "data.dataloader_num_workers": 0,
        "data.seed": seed,
        "actor_rollout_ref.model.path": m.path,
        "actor_rollout_ref.model.use_remove_padding": True,
        "actor_rollout_ref.model.enable_gradient_checkpointing": True,
        "actor_rollout_ref.actor.optim.lr": loss.lr,
        "actor_rollout_ref.actor.grad_clip": loss.grad_clip,
        "actor_rollout_ref.actor.clip_ratio_low": loss.clip_low if loss.clip_low is not None else 1e9,
        "actor_rollout_ref.actor.clip_ratio_high": loss.clip_high if loss.clip_high is not None else 1e9,
        "actor_rollout_ref.actor.entropy_coeff": loss.entropy_coef,
        "actor_rollout_ref.actor.ppo_epochs": loss.ppo_epochs,
        # token-sum / max response length (Dr.GRPO): the loss Poly-EPO's reference uses too
        "actor_rollout_ref.actor.loss_agg_mode": AGG[loss.agg],
        # one optimiser step per training step: the whole batch is one mini-batch (on-policy)
        "actor_rollout_ref.actor.ppo_mini_batch_size": method.prompts_per_step,
        # token-budgeted micro-batches instead of a fixed count: 4k-token code answers vary a lot
        "actor_rollout_ref.actor.use_dynamic_bsz": True,
        "actor_rollout_ref.actor.ppo_max_token_len_per_gpu": 2 * seq,
        "actor_rollout_ref.ref.log_prob_use_dynamic_bsz": True,
        "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu": 4 * seq,
        "actor_rollout_ref.rollout.log_prob_use_dynamic_bsz": True,
        "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu": 4 * seq,
        "actor_rollout_ref.rollout.name": "vllm",
        "actor_rollout_ref.rollout.n": method.rollouts,
        "actor_rollout_ref.rollout.temperature": m.temperature,
        "actor_rollout_ref.rollout.top_p": m.top_p,
        "actor_rollout_ref.rollout.tensor_model_parallel_size": 1,
        "actor_rollout_ref.rollout.gpu_memory_utilization": 0.6,
        # validation is held-out pass@1 at temperature 0 (the replication's protocol)
        "actor_rollout_ref.rollout.val_kwargs.n": 1,
        "actor_rollout_ref.rollout.val_kwargs.do_sample": False,
        "actor_rollout_ref.rollout.val_kwargs.temperature": 0.0,
        "algorithm.adv_estimator": f"setrl_{method.estimator}",
        "algorithm.norm_adv_by_std_in_grpo": False,
        "+algorithm.setrl": {"estimator_params": _plain(method.estimator_params)},
        # group-level scoring: one reward worker, so a prompt's N rollouts meet on it
        "reward.reward_manager.source": "register",
        "reward.reward_manager.name": REWARD_MANAGER,
        "reward.num_workers": 1,
        "trainer.total_training_steps": method.steps,
        "trainer.total_epochs": 10_000,  # total_training_steps is the limit, not epochs
        "trainer.save_freq": method.checkpoint_every,
        # a full HF model in every checkpoint (global_step_N/actor/huggingface): evaluation loads or serves it
        "actor_rollout_ref.actor.checkpoint.save_contents": ["model", "optimizer", "extra", "hf_model"],
        "trainer.test_freq": method.validate_every,
        "trainer.val_before_train": True,
        "trainer.logger": ["console", "file"],
        "trainer.project_name": "setrl",
        "trainer.experiment_name": f"{cfg.study}-{method.name}-seed{seed}",
        "trainer.default_local_dir": f"{out_dir}/checkpoints",
        "trainer.resume_mode": "auto",
        "trainer.n_gpus_per_node": n_gpus,
        "trainer.nnodes": nnodes,
        "+setrl": setrl_block(cfg, method, judge, db),
    }
    o.update(_kl_overrides(method))
    return [f"{k}={hydra_value(v)}" for k, v in o.items()]


def _kl_overrides(method: MethodConfig) -> dict[str, Any]:
    kind, beta = method.kl.kind, method.kl.beta
    if kind == "fixed":  # k3 ("low_var_kl") inside the loss, as setrl's CPU trainer does
        return {"actor_rollout_ref.actor.use_kl_loss": True, "actor_rollout_ref.actor.kl_loss_coef": beta,
                "actor_rollout_ref.actor.kl_loss_type": "low_var_kl", "algorithm.use_kl_in_reward": False}
    if kind == "akl":
        # verl's loss coefficient is a static scalar inside the workers; the driver-side in-reward
        # KL controller is the one place a per-step beta can be set (SetrlSyncTrainer sets it).
        return {"actor_rollout_ref.actor.use_kl_loss": False, "algorithm.use_kl_in_reward": True,
                "algorithm.kl_penalty": "low_var_kl", "algorithm.kl_ctrl.type": "fixed",
                "algorithm.kl_ctrl.kl_coef": beta}
    return {"actor_rollout_ref.actor.use_kl_loss": False, "algorithm.use_kl_in_reward": False}


def _plain(d: dict) -> dict:
    return json.loads(json.dumps(d, default=sorted))


def launch_spec(cfg: StudyConfig, method: MethodConfig, seed: int, out_dir: str | Path, mode: Mode = "single",
                gpus: int | None = None, nodes: int = 1, data_dir: str | Path | None = None,
                judge: JudgeSpec | None = None, db: str | None = None,
                ray_address: str = "http://127.0.0.1:8265", working_dir: str | None = None) -> LaunchSpec:
    """The launch for one run. gpus defaults to 1 (single) or 8 (multi, ray); nodes only for ray."""
    if method.backend != "verl":
        raise ValueError(f"method '{method.name}' has backend={method.backend!r}; verl-config needs backend: verl")
    if mode == "single":
        gpus, nodes = 1, 1
    elif mode == "multi":
        gpus, nodes = gpus or 8, 1
    elif mode == "ray":
        gpus = gpus or 8
    else:
        raise ValueError(f"mode must be single, multi or ray, got {mode!r}")
    if nodes < 1 or gpus < 1:
        raise ValueError("need at least one node and one GPU")
    out_dir = str(out_dir)
    data_dir = str(data_dir or f"{out_dir}/data")
    judge = judge or cfg.judge.candidates[0]
    overrides = overrides_for(cfg, method, seed, out_dir, data_dir, n_gpus=gpus, nnodes=nodes, judge=judge,
                              db=db if db is not None else cfg.storage.db)
    env = {"VERL_USE_EXTERNAL_MODULES": BACKEND_MODULE, "VERL_FILE_LOGGER_PATH": f"{out_dir}/metrics.jsonl"}
    return LaunchSpec(overrides, env, mode, ray_address, working_dir)


def validate(spec: LaunchSpec) -> Any:
    """Compose verl's ppo_trainer config with `spec.overrides` and run verl's validate_config
    (both CPU-only). Returns the composed config; raises on an invalid override or value."""
    import os

    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    import verl.trainer.main_ppo as main_ppo
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    config_dir = os.path.join(os.path.dirname(main_ppo.__file__), "config")
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        config = compose(config_name="ppo_trainer", overrides=list(spec.overrides))
    # verl prints its verdict on stdout; keep stdout for our output (`--json` must stay parseable).
    with contextlib.redirect_stdout(sys.stderr):
        validate_config(config=config, use_reference_policy=need_reference_policy(config),
                        use_critic=need_critic(config))
    # verl's checks do not look names up; resolve the estimator and reward manager the way the
    # trainer and reward workers will, with setrl's backend imported as VERL_USE_EXTERNAL_MODULES does.
    import setrl.train.verl_backend  # noqa: F401
    from verl.trainer.ppo.core_algos import get_adv_estimator_fn
    from verl.trainer.ppo.reward import resolve_reward_manager_cls

    get_adv_estimator_fn(config.algorithm.adv_estimator)
    resolve_reward_manager_cls(config)
    return config
