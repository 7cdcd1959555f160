"""The tiny model for trainer/evaluation tests: the shipped SFT weights when present, else a
freshly initialised 2-layer Llama (its rollouts all fail, so tests that need the policy to move
use an entropy bonus, which has a gradient whatever the rewards)."""

from __future__ import annotations

from pathlib import Path

import torch

SHIPPED = Path(__file__).resolve().parents[2] / "data" / "tiny-model"


def tiny_model(tmp_dir: Path) -> Path:
    return SHIPPED if (SHIPPED / "config.json").exists() else fresh_tiny_model(tmp_dir)


def tiny_problems(n: int, split: str = "train"):
    from setrl.config import DatasetSpec
    from setrl.data import load_problems

    return load_problems(DatasetSpec(source="tiny", split=split, limit=n))


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
