"""Writes tests/fixtures/llm/<name>/: small random-weight decoder models made with Hugging Face
`transformers` (fixed seed), saved as a model directory (config.json + model.safetensors +
tokenizer.json), and `reference.json` with transformers' own outputs, for tests/llm.rs and
examples/llama.rs.

    pip install transformers tokenizers torch
    python3 scripts/llm_fixtures.py

Models (each a few hundred kB):
  llama      LLaMA-3 style: grouped-query attention, llama3 RoPE scaling, tied embeddings,
             bf16 weights, config.json in the classic Hub form (`rope_theta`, `rope_scaling`)
  llama-f16  Llama-2 style: untied lm_head, plain RoPE, no GQA, f16 weights, config.json as
             transformers 5 writes it (`rope_parameters`)
  gpt2       GPT-2: learned positions, LayerNorm, tanh GELU, Conv1D weights, f32
  qwen2      Qwen2: LLaMA's layout with biases on q, k and v, grouped-query attention, tied,
             rope_theta 1e6, f32
  qwen2-swa  Qwen2 with use_sliding_window: full attention in layer 0, a window of 8 positions in
             layer 1 (max_window_layers 1)
  mistral    Mistral: LLaMA's layout with a sliding window of 8 positions (shorter than the
             prompt, so the window matters), untied, f32

`python3 scripts/llm_fixtures.py qwen2` writes only the named models.

reference.json holds the prompt's token ids, transformers' logits for every prompt position
(computed in float32 from the saved weights), and 32 greedy tokens from `generate` (with its
KV cache) and from full recomputation without a cache (they must agree). The script checks
that every greedy choice wins by a clear margin, so float rounding cannot flip a token.
"""

import json
import os
import shutil

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, decoders, trainers
import sys

from transformers import (GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, MistralConfig,
                          MistralForCausalLM, Qwen2Config, Qwen2ForCausalLM)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "llm")
VOCAB = 320
NEW_TOKENS = 32
PROMPT = "The quick brown fox jumps over the lazy dog."
TEXT = [
    "The quick brown fox jumps over the lazy dog.",
    "A tensor library whose whole compiler you can read and change.",
    "Lazy tensors, one visible IR, kernel fusion and generated kernels.",
    "Attention is all you need; attention over keys, values and queries.",
] * 8


def byte_bpe_tokenizer():
    """A tiny byte-level BPE tokenizer (GPT-2's scheme) with VOCAB entries."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=["<|endoftext|>"])
    tok.train_from_iterator(TEXT, trainer)
    assert tok.get_vocab_size() <= VOCAB, tok.get_vocab_size()
    return tok


def spread_weights(model, std, seed=1234):
    """Random weights with a larger spread than transformers' 0.02 init, so logits differ
    clearly and greedy tokens are decided by the model, not by rounding."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or "ln_" in name:
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(std * torch.randn(p.shape, generator=g))


def greedy_without_cache(model, ids, n):
    ids = ids.clone()
    margins = []
    for _ in range(n):
        logits = model(ids, use_cache=False).logits[0, -1]
        top = torch.topk(logits, 2).values
        margins.append(float(top[0] - top[1]))
        ids = torch.cat([ids, logits.argmax().view(1, 1)], dim=1)
    return ids[0].tolist(), min(margins)


def write(name, model, dtype, tokenizer, classic_rope=None):
    path = os.path.join(OUT, name)
    shutil.rmtree(path, ignore_errors=True)
    model.eval()
    model.to(dtype).save_pretrained(path, safe_serialization=True)
    for extra in ["generation_config.json"]:
        if os.path.exists(os.path.join(path, extra)):
            os.remove(os.path.join(path, extra))
    if classic_rope is not None:
        # The form of config.json on the Hub today (transformers < 5): `rope_theta` and
        # `rope_scaling` instead of `rope_parameters`.
        with open(os.path.join(path, "config.json")) as f:
            cfg = json.load(f)
        params = cfg.pop("rope_parameters")
        cfg["rope_theta"] = params.pop("rope_theta")
        cfg["rope_scaling"] = params if params.get("rope_type", "default") != "default" else None
        with open(os.path.join(path, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
    tokenizer.save(os.path.join(path, "tokenizer.json"))

    # The reference: transformers reading the directory just written, in float32.
    cls = type(model)
    ref = cls.from_pretrained(path, dtype=torch.float32).eval()
    ids = torch.tensor([tokenizer.encode(PROMPT).ids])
    with torch.no_grad():
        logits = ref(ids).logits[0]
        cached = ref.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW_TOKENS, do_sample=False, min_new_tokens=NEW_TOKENS, pad_token_id=0)[0].tolist()
        uncached, margin = greedy_without_cache(ref, ids, NEW_TOKENS)
    assert cached == uncached, f"{name}: generate with a cache and recomputation disagree"
    assert margin > 2e-3, f"{name}: a greedy choice wins by only {margin}"
    reference = {
        "generator": f"transformers {__import__('transformers').__version__}, torch {torch.__version__}",
        "prompt": PROMPT,
        "prompt_ids": ids[0].tolist(),
        "logits": [[float(f"{v:.8g}") for v in row] for row in logits.tolist()],
        "greedy": cached[ids.shape[1]:],
        "min_greedy_margin": margin,
    }
    with open(os.path.join(path, "reference.json"), "w") as f:
        json.dump(reference, f, separators=(",", ":"))
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(path, x)) for x in os.listdir(path))
    print(f"{name}: {size / 1e3:.0f} kB, {len(reference['prompt_ids'])} prompt tokens, min greedy margin {margin:.3g}")


SWA_SEED = 1


def main():
    only = set(sys.argv[1:])
    want = lambda name: not only or name in only
    torch.manual_seed(0)
    tokenizer = byte_bpe_tokenizer()
    llama3 = LlamaConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=160, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
        rms_norm_eps=1e-5, tie_word_embeddings=True, bos_token_id=0, eos_token_id=0,
        rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 16},
    )
    model = LlamaForCausalLM(llama3)
    spread_weights(model, 0.15)
    if want("llama"):
        write("llama", model, torch.bfloat16, tokenizer, classic_rope=True)
    llama2 = LlamaConfig(
        vocab_size=VOCAB, hidden_size=48, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128,
        rms_norm_eps=1e-6, tie_word_embeddings=False, bos_token_id=0, eos_token_id=0,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    )
    model = LlamaForCausalLM(llama2)
    spread_weights(model, 0.15)
    if want("llama-f16"):
        write("llama-f16", model, torch.float16, tokenizer)
    gpt2 = GPT2Config(vocab_size=VOCAB, n_positions=128, n_embd=64, n_layer=2, n_head=4, bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(gpt2)
    spread_weights(model, 0.15)
    if want("gpt2"):
        write("gpt2", model, torch.float32, tokenizer)
    qwen2_shape = dict(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=160, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=256, rms_norm_eps=1e-6, tie_word_embeddings=True,
        bos_token_id=0, eos_token_id=0, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
    )
    qwen2 = Qwen2Config(**qwen2_shape, use_sliding_window=False)
    model = Qwen2ForCausalLM(qwen2)
    spread_weights(model, 0.15)
    if want("qwen2"):
        write("qwen2", model, torch.float32, tokenizer)
    mistral = MistralConfig(
        vocab_size=VOCAB, hidden_size=64, intermediate_size=160, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=256, rms_norm_eps=1e-6, tie_word_embeddings=False,
        bos_token_id=0, eos_token_id=0, sliding_window=8,
    )
    model = MistralForCausalLM(mistral)
    spread_weights(model, 0.15)
    if want("mistral"):
        write("mistral", model, torch.float32, tokenizer)

    qwen2_swa = Qwen2Config(**qwen2_shape, use_sliding_window=True, sliding_window=8, max_window_layers=1)
    model = Qwen2ForCausalLM(qwen2_swa)
    # Weights of its own seed (one whose greedy tokens are not near ties).
    spread_weights(model, 0.15, SWA_SEED)
    if want("qwen2-swa"):
        write("qwen2-swa", model, torch.float32, tokenizer)


if __name__ == "__main__":
    main()
