"""The LLM benchmark's PyTorch side (bench/llm.sh runs both).

    python bench/llm_torch.py make DIR [--layers N] [--dtype bf16]   # a random-weight model folder, LLaMA-3.2-1B's shape
    python bench/llm_torch.py run DIR [--prompt-len N] [--tokens N]

`make` writes config.json + model.safetensors (f32, or bf16/f16 with --dtype) with
transformers' own initialization, so
ferrograd (`cargo run --release --example llama -- --bench DIR`) and PyTorch run the same
weights. `run` times, on 2 threads, a prompt pass with a KV cache and greedy decoding, and
prints the same lines as the Rust example: prefill tok/s, decode tok/s, first token ms, peak
RSS MB. `run` computes in the weights' dtype (PyTorch's bf16 kernels for a bf16 folder;
ferrograd keeps such weights bf16 in memory and computes in f32).
"""

import argparse
import os
import resource
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM


def config(layers):
    return LlamaConfig(
        vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=layers,
        num_attention_heads=32, num_key_value_heads=8, head_dim=64, max_position_embeddings=131072,
        rms_norm_eps=1e-5, tie_word_embeddings=True, bos_token_id=128000, eos_token_id=128001,
        rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
    )


DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def make(path, layers, dtype):
    if os.path.exists(os.path.join(path, "model.safetensors")):
        print(f"{path}: already there")
        return
    torch.manual_seed(0)
    model = LlamaForCausalLM(config(layers)).eval().to(DTYPES[dtype])
    model.save_pretrained(path, safe_serialization=True)
    print(f"{path}: {sum(p.numel() for p in model.parameters()) / 1e9:.2f} B parameters")


def run(path, prompt_len, tokens):
    torch.set_num_threads(2)
    model = LlamaForCausalLM.from_pretrained(path, dtype="auto").eval()
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    prompt = torch.tensor([[(i * 2654435761) % 128000 for i in range(prompt_len)]])

    def once(n):
        with torch.inference_mode():
            start = time.perf_counter()
            out = model(prompt, use_cache=True)
            past = out.past_key_values
            nxt = out.logits[:, -1].argmax(-1, keepdim=True)
            first = time.perf_counter() - start
            start = time.perf_counter()
            for _ in range(n - 1):
                out = model(nxt, past_key_values=past, use_cache=True)
                past = out.past_key_values
                nxt = out.logits[:, -1].argmax(-1, keepdim=True)
            return first, time.perf_counter() - start

    once(4)  # warm-up
    first, decode = once(tokens)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"prefill: {prompt_len / first:.1f} tok/s")
    print(f"decode: {(tokens - 1) / decode:.2f} tok/s")
    print(f"first token: {first * 1e3:.0f} ms")
    print(f"peak rss: {rss_mb:.0f} MB ({rss_mb * 2**20 / weights:.2f}x the weights)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["make", "run"])
    ap.add_argument("dir")
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--prompt-len", type=int, default=512)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--dtype", choices=list(DTYPES), default="f32")
    a = ap.parse_args()
    if a.what == "make":
        make(a.dir, a.layers, a.dtype)
    else:
        run(a.dir, a.prompt_len, a.tokens)


if __name__ == "__main__":
    main()
