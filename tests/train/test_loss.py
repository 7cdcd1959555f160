"""The loss pieces against hand-written loops."""

from __future__ import annotations

import pytest
import torch

from setrl.train.loss import (aggregate, broadcast_advantages, clipped_pg_loss, k3_kl, response_mask, token_entropy,
                              token_logprobs)


def test_token_logprobs_matches_a_loop():
    torch.manual_seed(0)
    logits, ids = torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5))
    got = token_logprobs(logits, ids)
    for b in range(2):
        for t in range(4):
            assert got[b, t] == pytest.approx(float(torch.log_softmax(logits[b, t], -1)[ids[b, t + 1]]), abs=1e-6)
    ent = token_entropy(logits)
    p = torch.softmax(logits[0, 0], -1)
    assert ent[0, 0] == pytest.approx(float(-(p * p.log()).sum()), abs=1e-5)


def test_response_mask_and_advantage_broadcast_cover_response_tokens_only():
    # seq 0: 3 prompt + 2 response tokens; seq 1: 2 prompt + 4 response; width T-1 = 6
    mask = response_mask(torch.tensor([3, 2]), torch.tensor([2, 4]), 6)
    assert mask.tolist() == [[0, 0, 1, 1, 0, 0], [0, 1, 1, 1, 1, 0]]
    adv = broadcast_advantages(torch.tensor([0.5, -2.0]), mask)
    assert adv.tolist() == [[0, 0, 0.5, 0.5, 0, 0], [0, -2, -2, -2, -2, 0]]


def test_token_sum_norm_divides_the_token_sum_by_max_response_length():
    v = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    m = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    # token sum 3 + 15 = 18, over 2 sequences and max length 10
    assert float(aggregate(v, m, "token-sum-norm", max_len=10)) == pytest.approx(18 / (2 * 10))
    assert float(aggregate(v, m, "token-mean")) == pytest.approx(18 / 5)
    assert float(aggregate(v, m, "seq-mean")) == pytest.approx((3 / 2 + 15 / 3) / 2)
    # micro-batches with the global normalisers add up to the full-batch value
    for agg in ("token-sum-norm", "token-mean", "seq-mean"):
        parts = sum(float(aggregate(v[i:i + 1], m[i:i + 1], agg, 10, n_seqs=2, n_tokens=5)) for i in range(2))
        assert parts == pytest.approx(float(aggregate(v, m, agg, 10)))
    with pytest.raises(ValueError, match="valid"):
        aggregate(v, m, "nope")


def test_clipping_uses_separate_low_and_high_bounds():
    logp = torch.log(torch.tensor([[0.5, 1.5, 1.1, 0.9]]))
    old = torch.zeros(1, 4)  # ratios 0.5, 1.5, 1.1, 0.9
    pos, neg = torch.ones(1, 4), -torch.ones(1, 4)
    loss, clipped = clipped_pg_loss(logp, old, pos, 0.2, 0.28)
    # A > 0: the ratio is capped above at 1.28 (1.5 -> 1.28); below, the unclipped value is larger
    assert loss.tolist()[0] == pytest.approx([-0.5, -1.28, -1.1, -0.9])
    assert clipped.tolist() == [[False, True, False, False]]
    loss, clipped = clipped_pg_loss(logp, old, neg, 0.2, 0.28)
    # A < 0: the ratio is floored at 0.8 (0.5 -> 0.8); large ratios stay unclipped (pessimistic bound)
    assert loss.tolist()[0] == pytest.approx([0.8, 1.5, 1.1, 0.9])
    assert clipped.tolist() == [[True, False, False, False]]
    loss, clipped = clipped_pg_loss(logp, old, pos, None, None)
    assert loss.tolist()[0] == pytest.approx([-0.5, -1.5, -1.1, -0.9]) and not clipped.any()


def test_clipped_gradient_is_zero_where_clipped():
    logp = torch.log(torch.tensor([[1.5, 1.0]])).requires_grad_()
    loss, _ = clipped_pg_loss(logp, torch.zeros(1, 2), torch.ones(1, 2), 0.2, 0.28)
    loss.sum().backward()
    assert torch.allclose(logp.grad, torch.tensor([[0.0, -1.0]]))


def test_k3_kl_is_zero_when_policy_equals_reference_and_positive_otherwise():
    logp = torch.log_softmax(torch.randn(3, 6), -1)
    assert torch.allclose(k3_kl(logp, logp), torch.zeros(3, 6))
    other = torch.log_softmax(torch.randn(3, 6), -1)
    assert (k3_kl(logp, other) > 0).all()
    r = torch.exp(other - logp)
    assert torch.allclose(k3_kl(logp, other), r - torch.log(r) - 1, atol=1e-6)
