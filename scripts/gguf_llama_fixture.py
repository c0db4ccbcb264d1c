"""Writes tests/fixtures/llm/llama-gguf/ (and qwen2-gguf/): the random-weight LLaMA (and Qwen2)
fixtures (tests/fixtures/llm/llama, qwen2, from scripts/llm_fixtures.py) converted to GGUF files as
llama.cpp's converter lays them out, weights quantized to a mix of GGML types, with
`reference.json` from Hugging Face `transformers` running the dequantized weights.

    pip install gguf transformers tokenizers torch safetensors accelerate
    python3 scripts/gguf_llama_fixture.py [llama] [qwen2]

Qwen2 differs in layout: architecture `qwen2` (metadata `qwen2.*`), biases on q/k/v stored as F32
`blk.N.attn_q.bias` ..., and q/k rows not permuted (its RoPE is the rotate-half form llama.cpp
calls NEOX).

The GGUF layout, as llama.cpp's convert_hf_to_gguf.py writes it: names `token_embd`,
`blk.N.attn_q`, ...; the rows of attn_q and attn_k permuted from the rotate-half order of
Hugging Face to llama.cpp's interleaved RoPE order; LLaMA 3's RoPE scaling as a `rope_freqs`
tensor of per-frequency divisors; hyperparameters under `llama.*`; the tokenizer as
`tokenizer.ggml.*` (a copy of tokenizer.json sits beside the file for the example).

The reference: every tensor dequantized by the `gguf` package, un-permuted, loaded into
transformers' LlamaForCausalLM in float32. The script also loads the GGUF file with
transformers' own GGUF reader and checks it gives the same logits, so the layout is the one
other tools read.
"""

import json
import math
import os
import shutil

from importlib.metadata import version

import numpy as np
import torch
from gguf import GGUFWriter, GGMLQuantizationType as T, quants
from safetensors.torch import load_file
import sys

from transformers import LlamaConfig, LlamaForCausalLM, Qwen2ForCausalLM

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "llm")
NEW_TOKENS = 32

# GGML type of each weight, per layer (layer 0, layer 1): every block type a LLaMA GGUF uses
# for 32-wide rows, and 16-bit floats.
TYPES = {
    "attn_q": (T.Q4_0, T.Q8_0),
    "attn_k": (T.Q4_1, T.F16),
    "attn_v": (T.Q5_0, T.Q5_1),
    "attn_output": (T.Q5_1, T.BF16),
    "ffn_gate": (T.Q8_0, T.Q4_0),
    "ffn_up": (T.F16, T.Q4_1),
    "ffn_down": (T.Q4_0, T.Q5_0),
}
HF = {
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
}


def permute(w, heads):
    """Hugging Face's rotate-half row order to llama.cpp's interleaved one (its converter's)."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def unpermute(w, heads):
    return w.reshape(heads, w.shape[0] // heads // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def rope_factors(cfg):
    """LLaMA 3 RoPE scaling as llama.cpp stores it: a divisor per rotary frequency."""
    s = cfg["rope_scaling"]
    dim = cfg["head_dim"]
    freqs = 1.0 / (cfg["rope_theta"] ** (np.arange(0, dim, 2, dtype=np.float32) / dim))
    old = s["original_max_position_embeddings"]
    low, high = old / s["low_freq_factor"], old / s["high_freq_factor"]
    out = []
    for f in freqs:
        wavelen = 2 * math.pi / f
        if wavelen < high:
            out.append(1.0)
        elif wavelen > low:
            out.append(s["factor"])
        else:
            smooth = (old / wavelen - s["low_freq_factor"]) / (s["high_freq_factor"] - s["low_freq_factor"])
            out.append(1 / ((1 - smooth) / s["factor"] + smooth))
    return np.array(out, dtype=np.float32)


def main():
    for arch in sys.argv[1:] or ["llama", "qwen2"]:
        convert(arch)


def convert(arch):
    SRC = os.path.join(FIXTURES, arch)
    OUT = os.path.join(FIXTURES, f"{arch}-gguf")
    model_class = {"llama": LlamaForCausalLM, "qwen2": Qwen2ForCausalLM}[arch]
    reorder = arch == "llama"  # llama.cpp permutes q/k rows for LLaMA only
    with open(os.path.join(SRC, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(SRC, "tokenizer.json")) as f:
        tok = json.load(f)
    weights = {k: v.float().numpy() for k, v in load_file(os.path.join(SRC, "model.safetensors")).items()}
    heads, kv_heads = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    rope_theta = cfg.get("rope_theta") or cfg["rope_parameters"]["rope_theta"]
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // heads

    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    path = os.path.join(OUT, "model.gguf")
    w = GGUFWriter(path, arch)
    w.add_name(f"ferrograd {arch}-gguf fixture")
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_rope_freq_base(rope_theta)
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_rope_dimension_count(head_dim)
    w.add_vocab_size(cfg["vocab_size"])
    vocab = sorted(tok["model"]["vocab"].items(), key=lambda kv: kv[1])
    assert [i for _, i in vocab] == list(range(len(vocab)))
    w.add_tokenizer_model("gpt2")
    w.add_token_list([t for t, _ in vocab])
    merges = [m if isinstance(m, str) else " ".join(m) for m in tok["model"]["merges"]]
    w.add_token_merges(merges)
    w.add_bos_token_id(cfg["bos_token_id"])
    w.add_eos_token_id(cfg["eos_token_id"])

    dequantized = {}

    def add(name, array, qtype):
        raw = quants.quantize(array, qtype) if qtype not in (T.F32,) else array
        w.add_tensor(name, raw, raw_dtype=qtype)
        dequantized[name] = quants.dequantize(raw, qtype).astype(np.float32) if qtype != T.F32 else array

    add("token_embd.weight", weights["model.embed_tokens.weight"], T.Q8_0)
    add("output_norm.weight", weights["model.norm.weight"], T.F32)
    if (cfg.get("rope_scaling") or {}).get("rope_type") == "llama3":
        add("rope_freqs.weight", rope_factors(cfg), T.F32)
    for i in range(cfg["num_hidden_layers"]):
        for short, hf in HF.items():
            x = weights[f"model.layers.{i}.{hf}.weight"]
            if short == "attn_q" and reorder:
                x = permute(x, heads)
            elif short == "attn_k" and reorder:
                x = permute(x, kv_heads)
            qtype = TYPES[short][i] if short in TYPES else T.F32
            add(f"blk.{i}.{short}.weight", np.ascontiguousarray(x), qtype)
            bias = weights.get(f"model.layers.{i}.{hf}.bias")
            if bias is not None:
                add(f"blk.{i}.{short}.bias", bias, T.F32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    shutil.copy(os.path.join(SRC, "tokenizer.json"), OUT)

    # The reference: transformers on the dequantized weights.
    state = {
        "model.embed_tokens.weight": dequantized["token_embd.weight"],
        "model.norm.weight": dequantized["output_norm.weight"],
    }
    for i in range(cfg["num_hidden_layers"]):
        for short, hf in HF.items():
            x = dequantized[f"blk.{i}.{short}.weight"]
            if short == "attn_q" and reorder:
                x = unpermute(x, heads)
            elif short == "attn_k" and reorder:
                x = unpermute(x, kv_heads)
            state[f"model.layers.{i}.{hf}.weight"] = x
            if f"blk.{i}.{short}.bias" in dequantized:
                state[f"model.layers.{i}.{hf}.bias"] = dequantized[f"blk.{i}.{short}.bias"]
    config = model_class.config_class.from_pretrained(SRC)
    model = model_class(config).float().eval()
    missing, unexpected = model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in state.items()}, strict=False)
    assert not unexpected and all("lm_head" in k for k in missing), (missing, unexpected)
    model.tie_weights()
    with open(os.path.join(SRC, "reference.json")) as f:
        prompt = json.load(f)
    ids = torch.tensor([prompt["prompt_ids"]])
    with torch.no_grad():
        logits = model(ids).logits[0]
        greedy = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=NEW_TOKENS,
                                min_new_tokens=NEW_TOKENS, do_sample=False, pad_token_id=0)[0].tolist()
        margins, seq = [], ids.clone()
        for _ in range(NEW_TOKENS):
            last = model(seq, use_cache=False).logits[0, -1]
            top = torch.topk(last, 2).values
            margins.append(float(top[0] - top[1]))
            seq = torch.cat([seq, last.argmax().view(1, 1)], dim=1)
    assert seq[0].tolist() == greedy, "generate with a cache and recomputation disagree"
    margin = min(margins)
    assert margin > 2e-3, f"a greedy choice wins by only {margin}"

    # Cross-check the layout with transformers' own GGUF reader (it dequantizes with `gguf`). It
    # does not read `rope_freqs`, so it is compared with the reference model without RoPE scaling.
    other = model_class.from_pretrained(OUT, gguf_file="model.gguf", dtype=torch.float32).eval()
    unscaled = model_class.config_class.from_pretrained(SRC)
    unscaled.rope_parameters = {"rope_type": "default", "rope_theta": rope_theta}
    plain = model_class(unscaled).float().eval()
    plain.load_state_dict(model.state_dict())
    with torch.no_grad():
        diff = (other(ids).logits[0] - plain(ids).logits[0]).abs().max().item()
    assert diff < 1e-4, f"transformers' GGUF reader gives logits {diff} away"
    print(f"transformers' GGUF reader agrees (max logit difference {diff:.2g}, without RoPE scaling)")

    reference = {
        "generator": f"gguf {version('gguf')}, transformers {__import__('transformers').__version__}, torch {torch.__version__}",
        "prompt": prompt["prompt"],
        "prompt_ids": prompt["prompt_ids"],
        "logits": [[float(f"{v:.8g}") for v in row] for row in logits.tolist()],
        "greedy": greedy[ids.shape[1]:],
        "min_greedy_margin": margin,
    }
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump(reference, f, separators=(",", ":"))
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(OUT, x)) for x in os.listdir(OUT))
    print(f"{arch}-gguf: {size / 1e3:.0f} kB, min greedy margin {margin:.3g}")


if __name__ == "__main__":
    main()
