"""The MiniLM benchmark's PyTorch side (bench/minilm.sh runs both): all-MiniLM-L6-v2's warm
forward pass (BertModel, mean pooling, normalization) at batch 8x60 and 32x64 tokens on 2
threads, median of 5, printed as examples/bert.rs --bench prints it.

    python bench/minilm_torch.py MODEL_DIR
"""

import sys
import time

import torch
from transformers import BertModel


def main():
    torch.set_num_threads(2)
    model = BertModel.from_pretrained(sys.argv[1], add_pooling_layer=False).eval()
    for b, t in [(8, 60), (32, 64)]:
        ids = torch.tensor([[1000 + (i * 2654435761) % 29000 for i in range(r * t, (r + 1) * t)] for r in range(b)])
        mask = torch.ones_like(ids)
        times = []
        for _ in range(7):
            start = time.perf_counter()
            with torch.inference_mode():
                h = model(input_ids=ids, attention_mask=mask).last_hidden_state
                m = mask.unsqueeze(-1).float()
                e = torch.nn.functional.normalize((h * m).sum(1) / m.sum(1).clamp(min=1e-9), dim=-1)
            times.append(time.perf_counter() - start)
        warm = sorted(times[2:])
        print(f"minilm {b}x{t}: {warm[len(warm) // 2] * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
