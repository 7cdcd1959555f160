"""In-process sampling with Hugging Face `generate` (KV cache), on CPU or one CUDA device."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import torch

from setrl.generation.types import Completion, apply_stop, progress_bar


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


@contextlib.contextmanager
def _sampling_state(model, device: torch.device, seed: int | None):
    """Eval mode, one CPU thread, and (when seeded) a private RNG stream; all restored after.

    One torch thread was measured fastest for CPU decoding of the tiny model (two threads were 3x
    slower per step: the matrices are too small to split). Forking the RNG keeps a seeded call
    from disturbing the caller's (the trainer's) random state.
    """
    was_training, threads = model.training, torch.get_num_threads()
    model.eval()
    if device.type == "cpu":
        torch.set_num_threads(1)
    devices = [device] if device.type == "cuda" else []
    try:
        with torch.random.fork_rng(devices=devices, enabled=seed is not None), torch.no_grad():
            yield
    finally:
        torch.set_num_threads(threads)
        model.train(was_training)


class TransformersGenerator:
    """Sample completions from a causal LM given in memory (the trainer's policy) or by path."""

    def __init__(self, model_or_path, tokenizer=None, device: str = "auto", batch_size: int = 64):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if isinstance(model_or_path, (str, Path)):
            self.device = resolve_device(device)
            self.model = AutoModelForCausalLM.from_pretrained(str(model_or_path)).to(self.device)
            self.tokenizer = tokenizer or AutoTokenizer.from_pretrained(str(model_or_path))
        else:
            if tokenizer is None:
                raise ValueError("an in-memory model needs its tokenizer")
            self.model, self.tokenizer = model_or_path, tokenizer
            # Never move a caller's model behind its back: "auto" means wherever it already is.
            self.device = next(self.model.parameters()).device if device == "auto" else resolve_device(device)
            self.model.to(self.device)
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.tokenizer.padding_side = "left"  # decoder-only: new tokens must follow the prompt directly
        self.batch_size = batch_size
        self.last_throughput: float | None = None  # completions per second of the last sample()

    def sample(self, prompts: list[str], n: int, *, temperature: float = 1.0, top_p: float = 1.0,
               max_new_tokens: int = 128, stop: list[str] | None = None, seed: int | None = None,
               progress: bool = False) -> list[list[Completion]]:
        """n completions per prompt. With a seed, the same call returns the same samples: batch b
        is drawn under torch seed (seed + b), and batches are fixed by (prompts, n, batch_size)."""
        rows = [p for p in prompts for _ in range(n)]   # prompt i's samples are rows i*n .. i*n+n-1
        flat: list[Completion] = []
        eos = self.tokenizer.eos_token_id
        sampling = {"do_sample": True, "temperature": temperature, "top_p": top_p, "top_k": 0} if temperature > 0 \
            else {"do_sample": False}
        start = time.perf_counter()
        with _sampling_state(self.model, self.device, seed), progress_bar(len(rows), "sampling", progress) as advance:
            for b, lo in enumerate(range(0, len(rows), self.batch_size)):
                chunk = rows[lo:lo + self.batch_size]
                enc = self.tokenizer(chunk, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
                if seed is not None:
                    torch.manual_seed(seed + b)
                out = self.model.generate(**enc, max_new_tokens=max_new_tokens, eos_token_id=eos,
                                          pad_token_id=self.tokenizer.pad_token_id, **sampling)
                new = out[:, enc["input_ids"].shape[1]:].tolist()   # (B, <= max_new_tokens)
                flat += [self._completion(ids, eos, stop) for ids in new]
                advance(len(chunk))
        elapsed = time.perf_counter() - start
        self.last_throughput = len(rows) / elapsed if elapsed > 0 else None
        return [flat[i * n:(i + 1) * n] for i in range(len(prompts))]

    def _completion(self, ids: list[int], eos: int, stop: list[str] | None) -> Completion:
        if eos in ids:
            ids, finish = ids[:ids.index(eos) + 1], "stop"   # keep EOS: the policy must learn to stop
            text = self.tokenizer.decode(ids[:-1])
        else:
            finish = "length"
            text = self.tokenizer.decode(ids)
        cut = apply_stop(text, stop)
        if cut is not None:
            text, finish = cut, "stop"
            # The shortest token prefix that reaches the stop string: what the model "said".
            ids = next(ids[:j] for j in range(1, len(ids) + 1) if len(self.tokenizer.decode(ids[:j])) > len(cut))
        return Completion(text=text, token_ids=ids, n_tokens=len(ids), finish_reason=finish)
