"""A BERT-family sentence encoder run by numpy: text in, L2-normalised float32 vectors out.

Why numpy and not a runtime: the models worth shipping as an option (all-MiniLM-L6-v2 and
its BERT-family kin: bge-small, e5-small) are published as ``model.safetensors`` plus a
``tokenizer.json``, not as an ONNX graph, so onnxruntime would need an export step with torch,
and fastembed downloads its own ONNX files at run time (cq downloads nothing at search time).
A 6-layer encoder is a handful of matrix products: ``safetensors`` (Hugging Face's loader,
no pickle, no torch) reads the weights, ``tokenizers`` (the Rust tokenizer every Hugging Face
model ships a ``tokenizer.json`` for) cuts the text, numpy multiplies. The same vectors as
sentence-transformers (bench/studies/embed_numpy.py: min cosine 1.000000 over 200 units).

Supported: ``model_type`` "bert" checkpoints in sentence-transformers layout (``config.json``,
``model.safetensors``, ``tokenizer.json``, optional ``1_Pooling/config.json``: mean or CLS
pooling, and ``sentence_bert_config.json``: the token limit). Anything else is refused by
name (``ModelError``): RoBERTa-style position offsets, ALiBi (jina) or rotary encoders are
other architectures, not a weight file away.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cq.errors import CqError

FILES = ("config.json", "model.safetensors", "tokenizer.json")
DEFAULT_MAX_TOKENS = 256  # all-MiniLM-L6-v2's training length, when the model does not say


class ModelError(CqError):
    """A model directory cq cannot run (missing file, unsupported architecture)."""


# Abramowitz and Stegun 7.1.26 (error < 1.5e-7): numpy has no erf, and BERT's GELU is the
# exact one, 0.5 x (1 + erf(x / sqrt 2)), not the tanh approximation.
_AS_P = 0.3275911
_AS_A = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)


def _gelu(x: Any) -> Any:
    """BERT's GELU of a float32 array, written as relu(x) (1 - q) + x q / 2 with
    q = 1 - erf(|x| / sqrt 2), in place on two buffers: written plainly, every step
    allocated a temporary as big as the layer's output, a large share of a forward pass
    (figures: bench/results/2026-11-29-figures-from-cq.md)."""
    import numpy as np

    f32 = np.float32
    a = np.abs(x)
    a *= f32(0.7071067811865476)
    t = a * f32(_AS_P)
    t += f32(1.0)
    np.reciprocal(t, out=t)
    q = t * f32(_AS_A[0])
    for c in _AS_A[1:]:
        q += f32(c)
        q *= t
    a *= a
    np.negative(a, out=a)
    np.exp(a, out=a)
    q *= a  # 1 - erf(|x| / sqrt 2)
    out = np.maximum(x, f32(0.0))
    out *= f32(1.0) - q
    q *= x
    q *= f32(0.5)
    out += q
    return out


def _norm(x: Any, w: Any, b: Any, eps: float) -> Any:
    import numpy as np

    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read {path.name} of the model: {exc}") from None
    if not isinstance(data, dict):
        raise ModelError(f"{path.name} of the model is not a JSON object")
    return data


class Encoder:
    """One loaded model: ``encode`` texts to unit vectors (``dim`` floats each)."""

    def __init__(self, model_dir: Path) -> None:
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        missing = [f for f in FILES if not (model_dir / f).is_file()]
        if missing:
            raise ModelError(f"the model at {model_dir} lacks {', '.join(missing)}")
        config = _json(model_dir / "config.json")
        if config.get("model_type") != "bert":
            kind = config.get("model_type", "unknown")
            raise ModelError(f"model type {kind!r} is not supported (BERT-family models only)")
        if config.get("hidden_act", "gelu") != "gelu":
            raise ModelError(f"activation {config['hidden_act']!r} is not supported")
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.pooling = _pooling(model_dir)
        st_config = model_dir / "sentence_bert_config.json"
        limit = _json(st_config).get("max_seq_length") if st_config.is_file() else None
        positions = int(config.get("max_position_embeddings", 512))
        self.max_tokens = min(int(limit or DEFAULT_MAX_TOKENS), positions)
        try:
            raw = load_file(str(model_dir / "model.safetensors"))
        except Exception as exc:  # safetensors raises its own error type for a bad header
            raise ModelError(f"cannot read the model's weights: {exc}") from None
        # Checkpoints saved from BertModel have bare names, from BertFor* a "bert." prefix.
        w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in raw.items()}
        for name in list(w):  # stored as (out, in): transposed once, x @ W at every call
            if name.startswith("encoder.") and name.endswith(".weight") and w[name].ndim == 2:
                w[name] = np.ascontiguousarray(w[name].T)
        if "embeddings.word_embeddings.weight" not in w:
            raise ModelError("the model's weights are not a BERT encoder's")
        self.w = w
        self.dim = int(w["embeddings.word_embeddings.weight"].shape[1])
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.enable_truncation(max_length=self.max_tokens)
        pad = self.tok.padding  # the model's own pad token, but to the batch's longest text
        if pad:
            self.tok.enable_padding(pad_id=pad["pad_id"], pad_token=pad["pad_token"])
        else:
            self.tok.enable_padding()

    def encode(self, texts: list[str], batch: int = 32) -> Any:
        """Unit vectors of ``texts`` (float32, one row each), computed in batches of
        similar length (less padding); the rows keep the order of ``texts``."""
        import numpy as np

        order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i in range(0, len(order), batch):
            idx = order[i : i + batch]
            enc = self.tok.encode_batch([texts[j] for j in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
            out[idx] = self._forward(ids, mask)
        return out

    def _forward(self, ids: Any, mask: Any) -> Any:
        import numpy as np

        w, eps, (n, t) = self.w, self.eps, ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        bias = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def lin(h: Any, name: str, p: str = p) -> Any:
                flat = h.reshape(-1, h.shape[-1]) @ w[p + name + ".weight"]  # one GEMM
                return (flat + w[p + name + ".bias"]).reshape(*h.shape[:-1], -1)

            q, k, v = (
                lin(x, f"attention.self.{m}").reshape(n, t, self.heads, -1).transpose(0, 2, 1, 3)
                for m in ("query", "key", "value")
            )
            s = q @ k.transpose(0, 1, 3, 2) * float(q.shape[-1]) ** -0.5 + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            ctx = ((s / s.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(n, t, -1)
            x = _norm(
                x + lin(ctx, "attention.output.dense"),
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                eps,
            )
            h = lin(x, "intermediate.dense")
            h = _gelu(h)
            x = _norm(
                x + lin(h, "output.dense"),
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
                eps,
            )
        if self.pooling == "cls":
            pooled = x[:, 0]
        else:
            pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


def _pooling(model_dir: Path) -> str:
    """ "mean" or "cls", as the model's sentence-transformers pooling config says (mean if
    none: the BERT sentence encoders' usual choice)."""
    path = model_dir / "1_Pooling" / "config.json"
    if not path.is_file():
        return "mean"
    config = _json(path)
    if config.get("pooling_mode_cls_token"):
        return "cls"
    if config.get("pooling_mode_mean_tokens", True):
        return "mean"
    raise ModelError("the model's pooling is neither mean nor CLS")
