"""EXPO plug-ins that do not touch the advantage: accuracy-conditioned KL and
Gaussian curriculum sampling (EXPO, https://arxiv.org/abs/2605.09923).

Pure numpy; the k3 KL estimator itself lives in the trainer's loss.
"""

from __future__ import annotations

import math

import numpy as np


def akl_coef(beta: float, acc: float) -> float:
    """Accuracy-conditioned KL coefficient: beta_eff = beta * (tanh(acc) + 1) / 2.

    acc is the mean binary reward over every rollout in the batch, so beta_eff runs
    from 0.5 * beta (acc = 0) to about 0.881 * beta (acc = 1): the policy is held
    closer to the reference once it already solves most of the batch.
    """
    return beta * (math.tanh(acc) + 1.0) / 2.0


class GaussianCurriculum:
    """Gaussian curriculum sampling (GCS) over a fixed question pool.

    Each question q keeps an accuracy EMA p_q (all start at `init`), updated only on
    steps where q was sampled: p_q <- ema * p_q + (1 - ema) * mean_reward_q.
    Sampling weight w_q = exp(-(p_q - mu)^2 / (2 sigma^2)), probability w_q / sum(w),
    so questions near 50% accuracy are favoured; nothing is ever filtered out.
    The sampler owns its numpy Generator, so `state_dict()` captures everything a
    resumed run needs to draw the same questions.
    """

    def __init__(self, n_questions: int, ema: float = 0.9, mu: float = 0.5, sigma: float = 0.35,
                 init: float = 0.5, seed: int = 0):
        if n_questions < 1:
            raise ValueError(f"n_questions must be >= 1, got {n_questions}")
        if not 0.0 <= ema < 1.0:
            raise ValueError(f"ema must be in [0, 1), got {ema}")
        if sigma <= 0:
            raise ValueError(f"sigma must be > 0, got {sigma}")
        self.n_questions, self.ema, self.mu, self.sigma = int(n_questions), float(ema), float(mu), float(sigma)
        self.acc = np.full(self.n_questions, float(init))  # p_q, (n_questions,)
        self.rng = np.random.default_rng(seed)

    def weights(self) -> np.ndarray:
        """w_q, (n_questions,)."""
        return np.exp(-((self.acc - self.mu) ** 2) / (2.0 * self.sigma**2))

    def probs(self) -> np.ndarray:
        """w_q / sum(w), (n_questions,)."""
        w = self.weights()
        return w / w.sum()

    def sample(self, k: int) -> np.ndarray:
        """k question indices (k,): distinct when k <= n_questions, with repeats otherwise."""
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        return self.rng.choice(self.n_questions, size=k, replace=k > self.n_questions, p=self.probs())

    def update(self, indices, mean_rewards) -> None:
        """EMA step for the sampled questions only; repeated indices update in order."""
        indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        mean_rewards = np.asarray(mean_rewards, dtype=np.float64).reshape(-1)
        if indices.shape != mean_rewards.shape:
            raise ValueError(f"{len(indices)} indices but {len(mean_rewards)} mean rewards")
        if len(indices) and (indices.min() < 0 or indices.max() >= self.n_questions):
            raise IndexError(f"question index out of range [0, {self.n_questions})")
        # A Python loop, not fancy assignment: with repeats, `acc[idx] = ...` would
        # keep only the last update instead of applying each in turn.
        for q, m in zip(indices.tolist(), mean_rewards.tolist()):
            self.acc[q] = self.ema * self.acc[q] + (1.0 - self.ema) * m

    def state_dict(self) -> dict:
        """JSON-serialisable state: hyper-parameters, accuracies and the RNG state."""
        return {
            "n_questions": self.n_questions, "ema": self.ema, "mu": self.mu, "sigma": self.sigma,
            "acc": self.acc.tolist(), "rng": self.rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict) -> None:
        if int(state["n_questions"]) != self.n_questions:
            raise ValueError(f"state is for {state['n_questions']} questions, this curriculum has {self.n_questions}")
        self.ema, self.mu, self.sigma = float(state["ema"]), float(state["mu"]), float(state["sigma"])
        self.acc = np.array(state["acc"], dtype=np.float64)
        self.rng.bit_generator.state = state["rng"]
