"""The embedded default policy: a tiny Llama trained from scratch on the tiny task family.

No pretrained causal LM can be installed offline, so `train()` builds one (seeded, minutes on a
2-core CPU): a byte-level BPE tokenizer trained on the corpus, a 2-layer `LlamaConfig` model,
and supervised fine-tuning on (prompt, body) pairs from the TRAINING templates only. The output
is a normal Hugging Face directory (config.json, model.safetensors, tokenizer files), so verl and
vLLM load it like any other model. `setrl tiny-model train` regenerates data/tiny-model.
"""

from __future__ import annotations

import json
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from setrl.data.tiny import sft_examples

EOS = "<|endoftext|>"
PAD = "<|pad|>"


@dataclass(frozen=True)
class TinyModelConfig:
    """Everything that determines the shipped weights (recorded in training.json)."""

    seed: int = 0                 # seeds the corpus, the initialisation and the batch order
    steps: int = 500              # SFT steps; the prototype had pass@1 0.07 after 150, 0.58 after 500
    batch_size: int = 64          # sequences per step
    lr: float = 4e-3              # peak AdamW lr, cosine to 10% after a short warm-up
    warmup: int = 20              # linear warm-up steps
    corpus_size: int = 12000      # distinct (prompt, body) pairs; steps*batch/corpus_size = epochs
    bug_rate: float = 0.1         # share of buggy variants in the corpus (realistic failures)
    vocab_size: int = 512         # byte-level BPE vocabulary (incl. 256 byte tokens + specials)
    hidden: int = 128             # model width
    layers: int = 2
    heads: int = 2
    ffn: int = 384                # MLP width
    max_positions: int = 512      # prompt (~60 tokens) + 128 new tokens fits easily
    threads: int = 2              # torch threads for training (the result depends on it slightly)


def train_tokenizer(texts: list[str], vocab_size: int = 512):
    """Byte-level BPE on the corpus -> a `PreTrainedTokenizerFast` with EOS and PAD tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOS, PAD], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, pad_token=PAD, padding_side="left",
                                   clean_up_tokenization_spaces=False)


def build_model(cfg: TinyModelConfig, tokenizer):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=cfg.hidden, intermediate_size=cfg.ffn,
        num_hidden_layers=cfg.layers, num_attention_heads=cfg.heads, num_key_value_heads=cfg.heads,
        max_position_embeddings=cfg.max_positions, tie_word_embeddings=True,
        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
    )
    return LlamaForCausalLM(config)


def encode_pairs(tokenizer, pairs: list[tuple[str, str]]) -> list[tuple[list[int], list[int]]]:
    """Prompt and completion are tokenised SEPARATELY: byte-level BPE would otherwise merge the
    prompt's final newline with the body's indent, and training would not match sampling,
    where the prompt is encoded alone. The completion ends with EOS so the model learns to stop."""
    prompts = tokenizer([p for p, _ in pairs], add_special_tokens=False)["input_ids"]
    bodies = tokenizer([c for _, c in pairs], add_special_tokens=False)["input_ids"]
    return [(p, b + [tokenizer.eos_token_id]) for p, b in zip(prompts, bodies)]


def collate(examples: list[tuple[list[int], list[int]]], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-padded batch; loss only on completion tokens (labels -100 on prompt and padding)."""
    width = max(len(p) + len(c) for p, c in examples)
    ids = torch.full((len(examples), width), pad_id, dtype=torch.long)   # (B, T)
    labels = torch.full_like(ids, -100)
    mask = torch.zeros_like(ids)
    for row, (p, c) in enumerate(examples):
        seq = p + c
        ids[row, :len(seq)] = torch.tensor(seq)
        labels[row, len(p):len(seq)] = torch.tensor(c)
        mask[row, :len(seq)] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def sft(model, tokenizer, examples, cfg: TinyModelConfig, log=None) -> list[float]:
    """Plain AdamW SFT with cosine decay; returns the per-step loss."""
    rng = random.Random(cfg.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01, betas=(0.9, 0.95))

    def lr_at(step: int) -> float:
        if step < cfg.warmup:
            return cfg.lr * (step + 1) / cfg.warmup
        frac = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
        return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))

    order: list[int] = []
    losses = []
    model.train()
    for step in range(cfg.steps):
        if len(order) < cfg.batch_size:
            fresh = list(range(len(examples)))
            rng.shuffle(fresh)
            order += fresh
        batch = collate([examples[i] for i in order[:cfg.batch_size]], tokenizer.pad_token_id)
        del order[:cfg.batch_size]
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        loss = model(**batch).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if log and (step % 50 == 0 or step == cfg.steps - 1):
            log(f"step {step:4d}  loss {loss.item():.4f}  lr {lr_at(step):.2e}")
    model.eval()
    return losses


def train(out: str | Path = "data/tiny-model", cfg: TinyModelConfig = TinyModelConfig(), log=print) -> dict:
    """Build the tokenizer and model, run SFT, save an HF directory at `out`; returns a summary."""
    torch.set_num_threads(cfg.threads)
    t0 = time.time()
    pairs = sft_examples(cfg.corpus_size, seed=cfg.seed, bug_rate=cfg.bug_rate)
    tokenizer = train_tokenizer([p + c for p, c in pairs[:4000]], cfg.vocab_size)
    examples = encode_pairs(tokenizer, pairs)
    torch.manual_seed(cfg.seed)
    model = build_model(cfg, tokenizer)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"corpus {len(pairs)} pairs, vocab {len(tokenizer)}, {n_params / 1e6:.2f}M parameters")
    t1 = time.time()
    losses = sft(model, tokenizer, examples, cfg, log=log)
    sft_s = time.time() - t1
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    summary = {"config": asdict(cfg), "parameters": n_params, "final_loss": sum(losses[-20:]) / len(losses[-20:]),
               "sft_seconds": round(sft_s, 1), "total_seconds": round(time.time() - t0, 1)}
    (out / "training.json").write_text(json.dumps(summary, indent=2) + "\n")
    log(f"saved {out}: final loss {summary['final_loss']:.4f}, SFT {sft_s:.0f}s")
    return summary
