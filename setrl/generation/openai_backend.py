"""Sampling from any OpenAI-compatible completions server (`vllm serve`, SGLang) with the official
`openai` client: one request per prompt with n=..., several requests in flight."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

from setrl.generation.types import Completion, progress_bar


class OpenAIGenerator:
    """Base-model style completions (`/v1/completions`), not chat."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, max_concurrency: int = 8,
                 timeout_s: float = 600.0, max_retries: int = 3, return_token_ids: bool = True):
        from openai import OpenAI

        # Local servers accept any key; the client insists on one being set.
        key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        self.client = OpenAI(base_url=base_url, api_key=key, timeout=timeout_s, max_retries=max_retries)
        self.model = model
        self.max_concurrency = max_concurrency
        # vLLM returns the generated token ids when asked (`return_token_ids`); servers that do not
        # know the field ignore it and the ids stay empty.
        self.return_token_ids = return_token_ids
        self.last_throughput: float | None = None

    def sample(self, prompts: list[str], n: int, *, temperature: float = 1.0, top_p: float = 1.0,
               max_new_tokens: int = 128, stop: list[str] | None = None, seed: int | None = None,
               progress: bool = False) -> list[list[Completion]]:
        """n completions per prompt. A seed becomes seed + prompt index per request, so prompts
        get different streams and a rerun gets the same ones (vLLM honours per-request seeds)."""
        results: list[list[Completion] | None] = [None] * len(prompts)
        start = time.perf_counter()
        with ThreadPoolExecutor(self.max_concurrency) as pool, progress_bar(len(prompts) * n, "sampling", progress) as advance:
            futures = {pool.submit(self._one, p, n, temperature, top_p, max_new_tokens, stop,
                                   None if seed is None else seed + i): i for i, p in enumerate(prompts)}
            for fut in as_completed(futures):
                results[futures[fut]] = fut.result()
                advance(n)
        elapsed = time.perf_counter() - start
        self.last_throughput = len(prompts) * n / elapsed if elapsed > 0 else None
        return results  # type: ignore[return-value]

    def _one(self, prompt, n, temperature, top_p, max_new_tokens, stop, seed) -> list[Completion]:
        resp = self.client.completions.create(
            model=self.model, prompt=prompt, n=n, temperature=temperature, top_p=top_p,
            max_tokens=max_new_tokens, stop=stop or None, seed=seed,
            extra_body={"return_token_ids": True} if self.return_token_ids else None)
        choices = sorted(resp.choices, key=lambda c: c.index)
        if len(choices) != n:
            raise RuntimeError(f"server returned {len(choices)} choices for n={n}")
        out = []
        usage_tokens = resp.usage.completion_tokens if resp.usage else 0
        total_chars = sum(len(c.text) for c in choices) or 1
        for c in choices:
            ids = list(getattr(c, "token_ids", None) or [])
            # Without ids, the server's usage total is shared out by text length: an estimate.
            n_tok = len(ids) if ids else round(usage_tokens * len(c.text) / total_chars)
            out.append(Completion(text=c.text, token_ids=ids, n_tokens=n_tok,
                                  finish_reason="length" if c.finish_reason == "length" else "stop"))
        return out
