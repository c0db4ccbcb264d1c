"""Writes tests/fixtures/gguf/llama-bpe/ and tests/fixtures/gguf/llama-spm/.

llama-bpe: a tokenizer-only GGUF file whose `tokenizer.ggml.*`
metadata is a byte-level BPE with LLaMA 3's pre-tokenizer (`tokenizer.ggml.pre = "llama-bpe"`),
and `reference.json`: ids the Hugging Face `tokenizers` package gives for a few texts with that
tokenizer (the split regex and ByteLevel settings of Meta's LLaMA 3 tokenizer.json), BOS added
as LLaMA 3 adds it. The vocabulary is trained here on README.md (400 tokens), so the file is
small; the settings, not the vocabulary, are what the test checks.

llama-spm: a SentencePiece BPE model (`tokenizer.ggml.model = "llama"`, as LLaMA 2, Mistral and
TinyLlama files carry it) trained here by the `sentencepiece` package with LLaMA 2's settings
(byte fallback, digits split, no whitespace collapsing, a dummy prefix), written as llama.cpp's
converter writes it (pieces, scores, token types; byte pieces `<0xNN>`), and the ids the
`sentencepiece` package itself gives.

    pip install gguf tokenizers sentencepiece
    python3 scripts/gguf_tokenizer_fixture.py
"""

import json
import os

from gguf import GGUFWriter, TokenType
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "gguf", "llama-bpe")
# Meta's LLaMA 3 tokenizer.json: pre_tokenizer Sequence[Split(this, Isolated), ByteLevel(no regex)].
SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
    r"\s*[\r\n]+|\s+(?!\S)|\s+"
)
BOS = "<|begin_of_text|>"
TEXTS = [
    "Hello world",
    "DON'T you think I'LL win 1234567 times?",
    "  two  spaces,\n\nnewlines\r\n and\ttabs  ",
    "naïve café — ✓ 3.14159 x=42;",
    "tensors' shapes: [2, 3, 4]!!",
]


def main():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[BOS]
    )
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        tok.train_from_iterator([f.read()], trainer)
    bos = tok.token_to_id(BOS)
    tok.post_processor = processors.TemplateProcessing(single=f"{BOS} $A", special_tokens=[(BOS, bos)])
    doc = json.loads(tok.to_str())
    vocab = sorted(doc["model"]["vocab"].items(), key=lambda kv: kv[1])
    assert [i for _, i in vocab] == list(range(len(vocab)))
    merges = [m if isinstance(m, str) else " ".join(m) for m in doc["model"]["merges"]]

    os.makedirs(OUT, exist_ok=True)
    w = GGUFWriter(os.path.join(OUT, "tokenizer.gguf"), "llama")
    w.add_name("ferrograd llama-bpe tokenizer fixture")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("llama-bpe")
    w.add_token_list([t for t, _ in vocab])
    w.add_token_types([TokenType.CONTROL if t == BOS else TokenType.NORMAL for t, _ in vocab])
    w.add_token_merges(merges)
    w.add_bos_token_id(bos)
    w.add_add_bos_token(True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    reference = [{"text": t, "ids": tok.encode(t).ids} for t in TEXTS]
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump({"bos": bos, "cases": reference}, f, indent=1)
    print(f"wrote {OUT}: {len(vocab)} tokens, {len(merges)} merges")


def spm():
    import io

    import sentencepiece as sp

    out = os.path.join(ROOT, "tests", "fixtures", "gguf", "llama-spm")
    model = io.BytesIO()
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        lines = [line for line in f.read().splitlines() if line.strip()]
    sp.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        model_type="bpe",
        vocab_size=600,
        byte_fallback=True,
        split_digits=True,
        remove_extra_whitespaces=False,
        add_dummy_prefix=True,
        normalization_rule_name="identity",
        unk_id=0,
        bos_id=1,
        eos_id=2,
        allow_whitespace_only_pieces=True,
    )
    proc = sp.SentencePieceProcessor(model_proto=model.getvalue())
    n = proc.get_piece_size()
    pieces = [proc.id_to_piece(i) for i in range(n)]
    scores = [proc.get_score(i) for i in range(n)]

    def kind(i):
        if proc.is_unknown(i):
            return TokenType.UNKNOWN
        if proc.is_control(i):
            return TokenType.CONTROL
        if proc.is_byte(i):
            return TokenType.BYTE
        return TokenType.NORMAL

    os.makedirs(out, exist_ok=True)
    w = GGUFWriter(os.path.join(out, "tokenizer.gguf"), "llama")
    w.add_name("ferrograd llama-spm tokenizer fixture")
    w.add_tokenizer_model("llama")
    w.add_token_list(pieces)
    w.add_token_scores(scores)
    w.add_token_types([kind(i) for i in range(n)])
    w.add_bos_token_id(proc.bos_id())
    w.add_eos_token_id(proc.eos_id())
    w.add_unk_token_id(proc.unk_id())
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    texts = TEXTS + ["Ünïcödé 𝔘 never seen: 漢字", "x  y   z"]
    reference = [{"text": t, "ids": [proc.bos_id()] + proc.encode(t)} for t in texts]
    with open(os.path.join(out, "reference.json"), "w") as f:
        json.dump({"bos": proc.bos_id(), "cases": reference}, f, indent=1)
    print(f"wrote {out}: {n} pieces")


if __name__ == "__main__":
    main()
    spm()
