"""The Answer re-chosen among each saved report's Relevant Functions by its Answer score plus
``w`` times a signal read off its name, against the everyday set's gold.

    python bench/results/2026-11-30-answer9/replay.py REPORTS_DIR concept,title [SIGNAL ...]

REPORTS_DIR/ID.json is one ``cq search --format json`` per everyday question (answer8's
``reports.py``). Only reports whose Answer is the first Relevant Function by Answer score
are re-chosen (as answer8's replay).
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, ".")

from bench import _everyday
from bench._everyday import Place
from bench.everyday import score
from cq.index.coverage import coverage
from cq.rewrite import stem
from cq.rewrite.words import content_stems, name_stems, subwords

WEIGHTS = (0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0)


def parts(fn: dict) -> list[str]:
    qual = fn["name"].split("::", 1)[1]
    qual = re.sub(r"^impl(<[^>]*>)?\s+", "", qual)
    qual = qual.split(" for ")[-1]
    return [p for p in re.split(r"\.|::", qual) if p]


def own(fn: dict) -> frozenset[str]:
    return name_stems(parts(fn)[-1])


def named_all(fn: dict) -> frozenset[str]:
    return frozenset().union(*(name_stems(p) for p in parts(fn)))


def sig_own(content, fn, pool):
    return len(content & own(fn)) / len(content) if content else 0.0


def sig_qual(content, fn, pool):
    return len(content & named_all(fn)) / len(content) if content else 0.0


def _idf(content, pool, read):
    n = len(pool)
    df = {w: sum(1 for f in pool if w in read(f)) for w in content}
    return {w: math.log((n + 1) / (df[w] + 0.5)) for w in content if df[w]}


def sig_qual_idf(content, fn, pool):
    idf = _idf(content, pool, named_all)
    total = sum(idf.values())
    return sum(v for w, v in idf.items() if w in named_all(fn)) / total if total else 0.0


def sig_own_idf(content, fn, pool):
    idf = _idf(content, pool, own)
    total = sum(idf.values())
    return sum(v for w, v in idf.items() if w in own(fn)) / total if total else 0.0


ASIDE = frozenset(
    {"contrib", "nursery", "examples", "example", "tutorials", "sandbox", "experimental"}
    | {"benchmarks"}
)


def sig_aside(content, fn, pool):
    dirs = fn["file"].lower().split("/")[:-1]
    return -1.0 if content and any(d in ASIDE for d in dirs) else 0.0


def _asked_words(query: str) -> dict[str, float]:
    from cq.index.query import with_base_forms
    from cq.rewrite.words import words as split

    content = content_stems(query)
    plain = {w: 1.0 for w in split(query.lower()) if stem(w) in content}
    return with_base_forms(plain, 0.5, 0.5)


def sig_name_cov(content, fn, pool):
    """coverage() of the asked words (base forms, abbreviations, thesaurus) over the pool's
    own names, as ``head`` is over names, signature and docstring."""
    if not content:
        return 0.0
    key = tuple(sorted(content))
    if key not in _COV:
        words = _asked_words(" ".join(sorted(_QUERY[key])))
        held = [frozenset(stem(w) for w in subwords(parts(f)[-1])) for f in pool]
        _COV[key] = dict(zip([f["name"] for f in pool], coverage(words, held), strict=True))
    return _COV[key][fn["name"]]


_COV: dict = {}
_QUERY: dict = {}


def sig_aside_own(content, fn, pool):
    # the aside weight held at the constructor's (1.0, so unfitted); w scales the name share
    return sig_aside(content, fn, pool) / _W[0] + sig_name_cov(content, fn, pool)


_W = [1.0]


def sig_specialised(content, fn, pool):
    """-1 when another listed function of the same name belongs to a class whose name's words
    are a strict subset of this one's (``TraceGraph_ELBO.loss_and_grads`` beside
    ``Trace_ELBO.loss_and_grads``): this one is the specialised namesake."""
    if not content or len(parts(fn)) < 2:
        return 0.0
    mine, owner = parts(fn)[-1], name_stems(parts(fn)[-2])
    for other in pool:
        p = parts(other)
        if other is fn or len(p) < 2 or p[-1] != mine:
            continue
        if name_stems(p[-2]) < owner:
            return -1.0
    return 0.0


def sig_error_maker(content, fn, pool):
    """-1 for a function named for the error it makes (``missing_required_error``) when the
    question does not ask about errors."""
    if not content or content & {stem("error"), stem("errors"), stem("exception")}:
        return 0.0
    words = subwords(parts(fn)[-1])
    return -1.0 if words and words[-1] in ("error", "err", "exception") else 0.0


def sig_rust_made(content, fn, pool):
    """-1 for a Rust associated function without a receiver that returns ``Self``: a named
    constructor (``Error::missing_required_argument``, ``with_capacity``)."""
    sig = fn.get("signature") or ""
    if not content or not fn["file"].endswith(".rs") or "self" in sig.split("->")[0]:
        return 0.0
    return -1.0 if re.search(r"->\s*Self\b", sig) else 0.0


def sig_error_made(content, fn, pool):
    return sig_error_maker(content, fn, pool) + sig_rust_made(content, fn, pool)


SIGNALS = {
    "rust_made": sig_rust_made,
    "error_made": sig_error_made,
    "error_maker": sig_error_maker,
    "specialised": sig_specialised,
    "name_cov": sig_name_cov,
    "aside_own": sig_aside_own,
    "aside": sig_aside,
    "own": sig_own,
    "qual": sig_qual,
    "qual_idf": sig_qual_idf,
    "own_idf": sig_own_idf,
}


def rechosen(q: dict, report: dict, w: float, sig) -> tuple[Place | None, Place | None]:
    sections = [s for s in report["sections"] if s["type"] == "functions"]
    fns = sections[0]["functions"] if sections else []
    said = report.get("answer") or {}

    def place(f: dict) -> Place:
        return Place(f["file"], f["line"], f["name"])

    at = (said.get("file"), said.get("line"))
    orig = next((place(f) for f in fns if (f["file"], f["line"]) == at), None)
    pool = sorted(
        [f for f in fns if f.get("answer_score") is not None], key=lambda f: -f["answer_score"]
    )
    if not pool or said.get("kind") != "definition" or (pool[0]["file"], pool[0]["line"]) != at:
        return orig, orig
    asks = q["kind"] == "concept" or q["query"].lower().startswith(("how", "what", "why", "when"))
    content = content_stems(q["query"]) if asks else frozenset()
    _QUERY[tuple(sorted(content))] = [q["query"]]
    _COV.pop(tuple(sorted(content)), None)
    best = max(pool, key=lambda f: f["answer_score"] + w * sig(content, f, pool))
    return orig, place(best)


def main() -> None:
    reports, kinds = Path(sys.argv[1]), sys.argv[2].split(",")
    names = sys.argv[3:] or list(SIGNALS)
    data = []
    for line in Path("bench/data/everyday.jsonl").read_text().splitlines():
        q = json.loads(line)
        path = reports / f"{q['id']}.json"
        if q["kind"] in kinds and path.exists() and path.stat().st_size:
            raw = path.read_bytes()
            ran = subprocess.CompletedProcess([], 0, raw, b"")
            data.append((q, json.loads(raw), score(_everyday.Question(**q), ran, 0).ans))
    print("base", sum(x for *_, x in data), "/", len(data))
    for name in names:
        hits: dict[float, dict[str, bool]] = {}
        for w in WEIGHTS:
            good, moved = 0, []
            _W[0] = w or 1.0
            for q, report, was in data:
                orig, new = rechosen(q, report, w, SIGNALS[name])
                hit = was if new == orig else _everyday.matches(new, q["gold"], q["kind"])
                good += hit
                hits.setdefault(w, {})[q["id"]] = hit
                if hit != was:
                    moved.append(("+" if hit else "-") + q["id"])
            print(f"{name:10s} w={w:<5} {good}/{len(data)} {' '.join(moved)}")
        held_out(name, hits)


def held_out(name: str, hits: dict[float, dict[str, bool]]) -> None:
    """Leave one repository out: each fold's weight chosen on the other repositories (ties:
    the smallest weight), scored on the one left out."""
    repos = sorted({i.rsplit("-", 1)[0] for i in hits[WEIGHTS[0]]})
    total, chosen = 0, []
    for repo in repos:

        def mine(i: str, repo: str = repo) -> bool:
            return i.rsplit("-", 1)[0] == repo

        best = max(WEIGHTS, key=lambda w: (sum(h for i, h in hits[w].items() if not mine(i)), -w))
        total += sum(h for i, h in hits[best].items() if mine(i))
        chosen.append(f"{repo}:{best}")
    print(f"{name:10s} held out {total}/{len(hits[WEIGHTS[0]])}  {' '.join(chosen)}")


if __name__ == "__main__":
    main()
