"""The policy-gradient loss as pure torch functions (no model, no config).

Shapes: B sequences, T tokens of prompt + response (right-padded), V vocabulary.
Per-token tensors are aligned with the *predicted* token: position t holds quantities
for token t + 1 of the input, so they are (B, T - 1) and `response_mask` marks the
predicted tokens that belong to the response.

    logp = token_logprobs(logits, input_ids)                      # (B, T-1)
    pg   = clipped_pg_loss(logp, old_logp, adv_tok, 0.2, 0.28)     # (B, T-1)
    loss = aggregate(pg + beta * k3_kl(logp, ref_logp), mask, "token-sum-norm", max_len)

References: PPO clipping (Schulman et al. 2017, https://arxiv.org/abs/1707.06347) with
DAPO's separate low/high bounds (https://arxiv.org/abs/2503.14476); Dr.GRPO's
token-sum / max-length aggregation (https://arxiv.org/abs/2503.20783); the k3 KL estimator
(http://joschu.net/blog/kl-approx.html) as used by GRPO and EXPO.
"""

from __future__ import annotations

import torch

AGGREGATIONS = ("token-sum-norm", "token-mean", "seq-mean")


def token_logprobs(logits: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    """log pi(x_{t+1} | x_{<=t}): logits (B, T, V), input_ids (B, T) -> (B, T-1)."""
    logp = torch.log_softmax(logits[:, :-1].float(), dim=-1)  # (B, T-1, V)
    return logp.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)


def token_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of the next-token distribution: logits (B, T, V) -> (B, T-1)."""
    return token_logprobs_and_entropy(logits, None)[1]


def token_logprobs_and_entropy(logits: torch.Tensor, input_ids: torch.Tensor | None,
                               entropy_grad: bool = True) -> tuple[torch.Tensor | None, torch.Tensor]:
    """`token_logprobs` and `token_entropy` from one log-softmax (the biggest tensor of the update).

    logits (B, T, V), input_ids (B, T) or None -> ((B, T-1) or None, (B, T-1)). entropy_grad=False
    computes the entropy outside the graph (for logging only).
    """
    logp_all = torch.log_softmax(logits[:, :-1].float(), dim=-1)  # (B, T-1, V)
    logp = logp_all.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1) if input_ids is not None else None
    with torch.set_grad_enabled(entropy_grad and torch.is_grad_enabled()):
        entropy = -(logp_all.exp() * logp_all).sum(-1)
    return logp, entropy


def response_mask(prompt_lens: torch.Tensor, response_lens: torch.Tensor, width: int) -> torch.Tensor:
    """Mask of predicted positions holding response tokens, (B,) lengths -> (B, width) float.

    Sequence b is prompt_lens[b] prompt tokens then response_lens[b] response tokens, so the
    predictions at positions prompt_len - 1 .. prompt_len + response_len - 2 are the response.
    width is T - 1 for a batch of T tokens.
    """
    pos = torch.arange(width, device=prompt_lens.device).unsqueeze(0)  # (1, width)
    start = (prompt_lens - 1).unsqueeze(1)  # (B, 1)
    return ((pos >= start) & (pos < start + response_lens.unsqueeze(1))).float()


def broadcast_advantages(adv: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """One scalar per sequence onto its response tokens: adv (B,), mask (B, T-1) -> (B, T-1)."""
    return adv.to(mask.dtype).unsqueeze(1) * mask


def clipped_pg_loss(logp: torch.Tensor, old_logp: torch.Tensor, adv: torch.Tensor,
                    clip_low: float | None, clip_high: float | None) -> tuple[torch.Tensor, torch.Tensor]:
    """PPO surrogate per token, to be minimised, and which tokens were clipped; all (B, T-1).

    ratio = exp(logp - old_logp); loss = max(-A * ratio, -A * clamp(ratio, 1 - clip_low, 1 + clip_high)).
    A bound that is None is not applied (both None: plain -A * ratio). With one optimisation pass
    per batch old_logp == logp, the ratio is 1 and the gradient is the vanilla policy gradient.
    """
    ratio = torch.exp(logp - old_logp)
    unclipped = -adv * ratio
    lo = 1.0 - clip_low if clip_low is not None else None
    hi = 1.0 + clip_high if clip_high is not None else None
    if lo is None and hi is None:
        return unclipped, torch.zeros_like(unclipped, dtype=torch.bool)
    clipped = -adv * torch.clamp(ratio, min=lo, max=hi)
    return torch.maximum(unclipped, clipped), clipped > unclipped


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """k3 estimator of KL(pi || pi_ref) per token: r - log r - 1 with r = pi_ref / pi; >= 0, 0 iff equal.

    The log-ratio is clamped to [-20, 20] (as verl does) so a token the reference finds
    impossible cannot overflow exp.
    """
    log_r = torch.clamp(ref_logp - logp, -20.0, 20.0)
    return torch.exp(log_r) - log_r - 1.0


def aggregate(values: torch.Tensor, mask: torch.Tensor, agg: str, max_len: int | None = None,
              n_seqs: int | None = None, n_tokens: float | None = None) -> torch.Tensor:
    """Reduce per-token values (B, T-1) over the response mask to a scalar.

    token-sum-norm: sum_{b,t} v * m / (n_seqs * max_len)   (Dr.GRPO: every sequence divided by
                    the same constant, the generation budget, so long and short answers are not
                    re-weighted by their own length)
    token-mean:     sum_{b,t} v * m / n_tokens              (every response token weighs the same)
    seq-mean:       sum_b [sum_t v * m / len_b] / n_seqs    (GRPO's per-sequence mean)
    n_seqs and n_tokens default to this batch's; pass the whole batch's values when `values` is
    one micro-batch, so that summing micro-batch losses gives exactly the full-batch loss.
    """
    if agg not in AGGREGATIONS:
        raise ValueError(f"unknown loss aggregation {agg!r}; valid: {', '.join(AGGREGATIONS)}")
    n_seqs = values.shape[0] if n_seqs is None else n_seqs
    masked = values * mask
    if agg == "token-sum-norm":
        if not max_len or max_len < 1:
            raise ValueError("token-sum-norm needs max_len >= 1 (the max response length)")
        return masked.sum() / (n_seqs * max_len)
    if agg == "token-mean":
        n_tokens = mask.sum() if n_tokens is None else n_tokens
        return masked.sum() / max(float(n_tokens), 1.0)
    lens = mask.sum(1).clamp(min=1.0)  # (B,)
    return (masked.sum(1) / lens).sum() / n_seqs


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> float:
    """Mean of values over the mask (for logging)."""
    return float((values * mask).sum() / mask.sum().clamp(min=1.0))
