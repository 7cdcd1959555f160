"""The tiny base model recipe: tokenizer, SFT, saved directory, and the shipped weights."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest
import torch

from setrl.data.tiny import sft_examples
from setrl.tiny_model import TinyModelConfig, build_model, collate, encode_pairs, sft, train, train_tokenizer

SHIPPED = Path(__file__).resolve().parent.parent / "data" / "tiny-model"
SMALL = TinyModelConfig(steps=20, batch_size=8, warmup=2, lr=1e-2, corpus_size=160, vocab_size=300,
                        hidden=32, ffn=64, layers=1, heads=2, threads=1)


@pytest.fixture(scope="module")
def pairs():
    return sft_examples(160, seed=0)


def test_tokenizer_round_trips_code(pairs):
    tok = train_tokenizer([p + c for p, c in pairs], vocab_size=300)
    assert len(tok) == 300 and tok.eos_token and tok.pad_token
    for p, c in pairs[:20] + [("def f(x):\n", "    return 'é\\t\\u00ff' + x  # ünïcode\n")]:
        assert tok.decode(tok(p + c, add_special_tokens=False)["input_ids"]) == p + c


def test_prompt_and_completion_are_tokenised_separately(pairs):
    tok = train_tokenizer([p + c for p, c in pairs], vocab_size=300)
    (p_ids, c_ids), = encode_pairs(tok, pairs[:1])
    assert p_ids == tok(pairs[0][0], add_special_tokens=False)["input_ids"]  # what sampling sees
    assert c_ids[-1] == tok.eos_token_id
    batch = collate([(p_ids, c_ids)], tok.pad_token_id)
    assert (batch["labels"][0] != -100).sum() == len(c_ids)  # loss only on the completion


def test_a_few_sft_steps_reduce_the_loss(pairs):
    tok = train_tokenizer([p + c for p, c in pairs], vocab_size=300)
    torch.manual_seed(0)
    model = build_model(SMALL, tok)
    losses = sft(model, tok, encode_pairs(tok, pairs), SMALL)
    assert sum(losses[-3:]) / 3 < 0.8 * sum(losses[:3]) / 3


def test_saved_directory_loads_and_is_reproducible(tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    a = train(tmp_path / "a", SMALL, log=lambda *_: None)
    train(tmp_path / "b", SMALL, log=lambda *_: None)
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == (tmp_path / "b" / "model.safetensors").read_bytes()
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "a")
    tok = AutoTokenizer.from_pretrained(tmp_path / "a")
    assert model.config.model_type == "llama" and model.config.eos_token_id == tok.eos_token_id
    assert a["parameters"] == sum(p.numel() for p in model.parameters())


def test_shipped_weights_are_the_default_recipe():
    info = json.loads((SHIPPED / "training.json").read_text())
    assert info["config"] == asdict(TinyModelConfig())
    assert (SHIPPED / "model.safetensors").stat().st_size < 8_000_000
