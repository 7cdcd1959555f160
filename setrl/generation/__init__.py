"""Sampling completions: one interface, two backends.

- `TransformersGenerator`: in-process HF `generate` with KV cache (CPU or CUDA); accepts the
  trainer's in-memory policy or a model directory.
- `OpenAIGenerator`: any OpenAI-compatible completions server (`vllm serve`, SGLang).

Both return, per prompt, n `Completion`s (text, token ids, token count, finish reason) and set
`last_throughput` (completions/s). `make_generator` builds the one a `ModelConfig` asks for.
"""

from __future__ import annotations

from pathlib import Path

from setrl.config import ModelConfig
from setrl.generation.extract import program_from_completion
from setrl.generation.openai_backend import OpenAIGenerator
from setrl.generation.transformers_backend import TransformersGenerator
from setrl.generation.types import Completion, Generator

REPO_ROOT = Path(__file__).resolve().parents[2]

__all__ = ["Completion", "Generator", "TransformersGenerator", "OpenAIGenerator", "make_generator",
           "program_from_completion"]


def _local_path(path: str) -> str:
    """Relative model directories are relative to the repo root when not found from the cwd
    (pipeline.yaml says data/tiny-model wherever the command runs); hub ids pass through."""
    p = Path(path)
    if p.is_absolute() or p.exists() or not (REPO_ROOT / p).exists():
        return path
    return str(REPO_ROOT / p)


def make_generator(model_cfg: ModelConfig, path: str | None = None) -> Generator:
    """The configured backend for `path` (a trained checkpoint) or, by default, `model_cfg.path`."""
    target = path or model_cfg.path
    if model_cfg.generation_backend == "transformers":
        return TransformersGenerator(_local_path(target), device=model_cfg.device, batch_size=model_cfg.batch_size)
    if not model_cfg.base_url:
        raise ValueError("model.generation_backend=openai needs model.base_url (e.g. http://127.0.0.1:8000/v1)")
    return OpenAIGenerator(model_cfg.base_url, model=target)
