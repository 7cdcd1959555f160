"""The in-process backend on the shipped tiny model: shapes, seeding, stop rules, in-memory policies."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from setrl.config import DatasetSpec, ModelConfig
from setrl.data import tiny
from setrl.generation import Completion, TransformersGenerator, make_generator

MODEL = Path(__file__).resolve().parents[2] / "data" / "tiny-model"


@pytest.fixture(scope="module")
def gen():
    return TransformersGenerator(MODEL, device="cpu", batch_size=4)


@pytest.fixture(scope="module")
def prompts():
    return [p.prompt for p in tiny.load(DatasetSpec(source="tiny", split="train", limit=3))]


def test_sample_shapes_and_fields(gen, prompts):
    out = gen.sample(prompts, 5, max_new_tokens=48, seed=0)   # 15 rows over 4 batches of 4
    assert [len(o) for o in out] == [5, 5, 5]
    eos = gen.tokenizer.eos_token_id
    for c in (c for o in out for c in o):
        assert isinstance(c, Completion) and c.n_tokens == len(c.token_ids) <= 48
        assert c.finish_reason in ("stop", "length")
        assert (c.token_ids[-1] == eos) == (c.finish_reason == "stop")
        assert gen.tokenizer.decode([t for t in c.token_ids if t != eos]) == c.text
    assert gen.last_throughput and gen.last_throughput > 0


def test_same_seed_same_samples_and_caller_rng_untouched(gen, prompts):
    torch.manual_seed(123)
    before = torch.get_rng_state()
    a = gen.sample(prompts, 4, max_new_tokens=32, seed=11)
    assert torch.equal(torch.get_rng_state(), before)  # the trainer's random stream is not consumed
    b = gen.sample(prompts, 4, max_new_tokens=32, seed=11)
    c = gen.sample(prompts, 4, max_new_tokens=32, seed=12)
    texts = lambda out: [x.text for o in out for x in o]  # noqa: E731
    assert texts(a) == texts(b) != texts(c)


def test_greedy_is_deterministic_and_repeats_across_n(gen, prompts):
    out = gen.sample(prompts[:1], 3, temperature=0.0, max_new_tokens=40)
    assert len({c.text for c in out[0]}) == 1


def test_stop_strings_cut_text_and_tokens(gen, prompts):
    out = gen.sample(prompts[:1], 4, max_new_tokens=64, stop=["\n"], seed=0)
    for c in out[0]:
        assert "\n" not in c.text and c.finish_reason == "stop"
        assert gen.tokenizer.decode(c.token_ids).startswith(c.text)


def test_length_finish_reason(gen, prompts):
    out = gen.sample(prompts[:1], 2, max_new_tokens=3, seed=0)
    assert all(c.finish_reason == "length" and c.n_tokens == 3 for c in out[0])


def test_in_memory_model_keeps_its_mode(gen, prompts):
    gen.model.train()
    other = TransformersGenerator(gen.model, gen.tokenizer)
    assert other.model is gen.model and other.device.type == "cpu"
    other.sample(prompts[:1], 2, max_new_tokens=8, seed=0)
    assert gen.model.training
    gen.model.eval()
    with pytest.raises(ValueError, match="tokenizer"):
        TransformersGenerator(gen.model)


def test_make_generator_resolves_the_repo_relative_path():
    g = make_generator(ModelConfig(path="data/tiny-model", device="cpu", batch_size=8))
    assert isinstance(g, TransformersGenerator) and g.batch_size == 8
    with pytest.raises(ValueError, match="base_url"):
        make_generator(ModelConfig(path="x", generation_backend="openai"))
