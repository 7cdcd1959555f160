"""Stand-ins for subsystems that may not have landed yet (generation, sandbox, judge service,
tiny data/model). `install()` registers a stand-in only for a module that cannot be imported,
so once the real module exists the tests run against it."""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import torch


@dataclass
class Completion:
    text: str
    token_ids: list
    n_tokens: int
    finish_reason: str


class TransformersGenerator:
    def __init__(self, model_or_path, tokenizer=None, device="auto", batch_size=64):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.model = AutoModelForCausalLM.from_pretrained(model_or_path) if isinstance(model_or_path, (str, Path)) else model_or_path
        self.tok = tokenizer or AutoTokenizer.from_pretrained(model_or_path)
        self.last_throughput = None

    @torch.no_grad()
    def sample(self, prompts, n=1, temperature=1.0, top_p=1.0, max_new_tokens=32, stop=None, seed=0, progress=False):
        torch.manual_seed(seed)
        out = []
        for prompt in prompts:
            ids = torch.tensor([self.tok(prompt, add_special_tokens=False)["input_ids"]] * n)
            kw = dict(do_sample=True, temperature=temperature, top_k=0, top_p=top_p) if temperature > 0 else dict(do_sample=False)
            gen = self.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=max_new_tokens,
                                      pad_token_id=self.tok.eos_token_id, **kw)[:, ids.shape[1]:]
            group = []
            for row in gen.tolist():
                if self.tok.eos_token_id in row:
                    row = row[:row.index(self.tok.eos_token_id) + 1]
                group.append(Completion(self.tok.decode(row, skip_special_tokens=True), row, len(row), "stop"))
            out.append(group)
        return out


def make_generator(model_cfg, path=None):
    return TransformersGenerator(path or model_cfg.path)


def program_from_completion(problem, text):
    return text


@dataclass
class Verdict:
    passed: bool
    status: str
    reason: str | None = None


class Sandbox:
    """Passes a program when its text has an even number of 'a' characters: arbitrary but
    deterministic, so rewards vary within a group and the policy gradient is non-zero."""

    def __init__(self, workers=1, timeout_s=1.0, memory_mb=256, require_isolation=False):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def run(self, jobs):
        return [Verdict(code.count("a") % 2 == 0, "ok") for _, code in jobs]


def job_from_problem(problem, code, id):
    return (id, code)


@dataclass
class Clustering:
    cluster_ids: list | None
    rationales: list | None = None
    failed: bool = False
    error: str | None = None
    cached: bool = False


class JudgeService:
    def __init__(self, judge, store, policy="own_cluster", degenerate_id=100):
        pass

    def cluster_groups(self, groups):
        return [Clustering([len(r) % 3 for r in responses]) for _, responses in groups]


def make_judge(spec):
    return None


def _missing(name: str, attr: str) -> bool:
    try:
        return not hasattr(importlib.import_module(name), attr)
    except ImportError:
        return True


def install() -> None:
    here = sys.modules[__name__]
    for name, attrs in {"setrl.generation": ("TransformersGenerator", "make_generator", "program_from_completion", "Completion"),
                        "setrl.sandbox": ("Sandbox", "job_from_problem"),
                        "setrl.judge": ("JudgeService", "make_judge")}.items():
        if _missing(name, attrs[0]):
            mod = types.ModuleType(name)
            for a in attrs:
                setattr(mod, a, getattr(here, a))
            sys.modules[name] = mod


def tiny_problems(n: int, split: str = "train"):
    """Problems from setrl.data.tiny when it exists, else synthetic ones (the stand-in sandbox
    does not read tests)."""
    try:
        from setrl.config import DatasetSpec
        from setrl.data import load_problems

        return load_problems(DatasetSpec(source="tiny", split=split, limit=n))
    except (ImportError, ModuleNotFoundError):
        from setrl.problem import Problem

        return [Problem("tiny", f"p{i}", f"def f{i}(x):\n", f"f{i}", "check", f"def check(c): pass  # {split}")
                for i in range(n)]


def fresh_tiny_model(path: Path) -> Path:
    """A randomly initialised 2-layer Llama with a byte-level BPE tokenizer, saved as an HF dir."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = ["def f(x):\n    return sum(x)\n", "for i in range(10):\n    total += i\n"] * 20
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=300, special_tokens=["<eos>"],
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<eos>", pad_token="<eos>")
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256,
                      tie_word_embeddings=True, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    LlamaForCausalLM(cfg).save_pretrained(path)
    fast.save_pretrained(path)
    return path
