"""Everyday questions replayed: would a new Relevant Functions signal move the Answer?

A cold everyday run (``bench/everyday.py``) costs a search per question and, on a loaded
machine, whether a question's index was ready; a signal over a question's words and a
function's name needs neither. ``--capture DIR`` runs each question once against a warm
index (one cache for all, built by ``cq index``) with 30 Relevant Functions listed (the whole
pool, ``IndexTuning.function_pool``) and saves the JSON; ``--replay DIR`` rescores the saved
pool with each candidate signal added at each weight (``functions.ordered``'s rule: the
Answer without the ``size``/``titled`` signals, with ``constructor``) and scores the Answer
and first five as ``bench/everyday.py`` does, the 110-question subset and the 100 held-out
questions apart (``bench/results/2026-11-29-everyday-main/subset.txt``).

The candidates: ``named`` (the function's name is exactly the question's words,
``function_signals.named``), ``name_share`` (the share of the name's words the question
holds), ``owner_share`` (the same for its class's name), ``size_answer`` (a question's
function lengths counted for its Answer too). Figures:
``bench/results/2026-11-29-everyday-answer3/README.md``.

    python -m bench.studies.everyday_replay --capture /tmp/cap --trees /work/trees/head
    python -m bench.studies.everyday_replay --replay /tmp/cap
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from bench import _everyday, everyday
from bench._common import scratch_dir
from cq.index.function_signals import owner
from cq.model.index_tuning import SignalWeights
from cq.rewrite import name_stems, understand

SUBSET = Path(__file__).parents[1] / "results" / "2026-11-29-everyday-main" / "subset.txt"
_AFTER = ("size", "titled")
_ANSWER_ONLY = ("constructor",)
CANDIDATES: tuple[dict[str, float], ...] = (
    {},
    *({"named": w} for w in (0.2, 0.5, 1.0)),
    *({"name_share": w} for w in (0.2, 0.5, 1.0)),
    *({"owner_share": w} for w in (0.2, 0.5, 1.0)),
    *({"named": 0.5, "size_answer": w} for w in (0.2, 0.4, 1.0)),
)


def capture(out: Path, trees: Path, data: str) -> None:
    """Each question's JSON report against a warm index, 30 Relevant Functions listed."""
    out.mkdir(parents=True, exist_ok=True)
    with scratch_dir() as scratch:
        config = Path(scratch) / "config"
        (config / "cq" / "profiles").mkdir(parents=True)
        (config / "cq" / "profiles" / "pool.toml").write_text("[index]\nfunctions = 30\n")
        env = dict(os.environ, CQ_SERVER="0", CQ_LLM="off", XDG_CONFIG_HOME=str(config))
        env["CQ_CACHE_DIR"] = str(Path(scratch) / "cache")
        built: set[str] = set()
        for q in _everyday.load_questions(data):
            tree = str(trees / q.repo)
            if q.repo not in built:
                index = [sys.executable, "-m", "cq", "index", "--root", tree]
                subprocess.run(index, env=env, capture_output=True, check=False)
                built.add(q.repo)
            argv = [sys.executable, "-m", "cq", "search", "--format", "json", "--root", tree]
            argv += ["--limit", "50", "--profile", "pool", "--", q.query]
            proc = subprocess.run(argv, env=env, capture_output=True, check=False)
            (out / f"{q.id}.json").write_bytes(proc.stdout)
            print(q.id, proc.returncode, file=sys.stderr)


def signals(qualname: str, content: frozenset[str]) -> dict[str, float]:
    """The candidate signals of one function for a question's stems ``content``."""
    name = qualname.replace("::", ".").rsplit(".", 1)[-1]
    own, cls = name_stems(name), name_stems(owner(qualname))
    plain = bool(content) and not name.startswith("__")
    return {
        "named": 1.0 if plain and own == content else 0.0,
        "name_share": len(own & content) / len(own) if plain and own else 0.0,
        "owner_share": len(cls & content) / len(cls) if content and cls else 0.0,
    }


def replayed(raw: bytes, q: _everyday.Question, extra: dict[str, float]) -> _everyday.Outcome:
    """The saved report with its Relevant Functions rescored (``extra``: signal -> weight),
    its Answer moved to the new first when the old first was the Answer."""
    data = json.loads(raw)
    weights = SignalWeights()
    content = understand(q.query).content
    section = next((s for s in data["sections"] if "functions" in s), None)
    functions = section["functions"] if section else []
    answer = data.get("answer") or {}
    if functions and extra and answer:
        was_first = (answer.get("file"), answer.get("line")) == (
            functions[0]["file"],
            functions[0]["line"],
        )
        scored = []
        for at, fn in enumerate(functions):
            kept = fn["scores"]
            added = signals(fn["name"].split("::", 1)[1], content)
            score = fn["score"] + sum(w * added.get(k, 0.0) for k, w in extra.items())
            said = score - sum(getattr(weights, k) * kept.get(k, 0.0) for k in _AFTER)
            said += sum(getattr(weights, k) * kept.get(k, 0.0) for k in _ANSWER_ONLY)
            if content:
                said += extra.get("size_answer", 0.0) * kept.get("size", 0.0)
            scored.append((score, said, at, fn))
        order = sorted(scored, key=lambda t: (-t[0], t[2]))
        first = min(order, key=lambda t: (-t[1], t[2]))
        functions = [first[3], *(t[3] for t in order if t is not first)]
        if was_first:
            fn = first[3]
            answer.update(file=fn["file"], line=fn["line"], name=fn["name"].split("::", 1)[1])
    if section:
        section["functions"] = functions[:10]  # what the default report lists
    proc = subprocess.CompletedProcess([], 0, json.dumps(data).encode(), b"")
    return everyday.score(q, proc, 0.0)


def replay(saved: Path, data: str) -> None:
    subset = set(SUBSET.read_text().split())
    questions = {q.id: q for q in _everyday.load_questions(data)}
    reports = {p.stem: p.read_bytes() for p in sorted(saved.glob("*.json")) if p.stat().st_size}
    base = {i: replayed(raw, questions[i], {}) for i, raw in reports.items()}
    for extra in CANDIDATES:
        got = {i: replayed(raw, questions[i], extra) for i, raw in reports.items()}
        parts = []
        for label, held in (("subset", False), ("held-out", True)):
            group = [o for i, o in got.items() if (i not in subset) == held]
            parts.append(
                f"{label} A@1 {sum(o.ans for o in group)} top-5 {sum(o.top5 for o in group)} "
                f"of {len(group)}"
            )
        moved = [
            f"{i}{'+' if o.ans + o.top5 > base[i].ans + base[i].top5 else '-'}"
            for i, o in sorted(got.items())
            if (o.ans, o.top5) != (base[i].ans, base[i].top5)
        ]
        print(f"{extra or 'as saved'}: {'; '.join(parts)}; moved: {' '.join(moved) or '-'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--data", default=str(everyday.DATA))
    ap.add_argument("--trees", default=os.environ.get("CQ_BENCH_TREES", ""))
    ap.add_argument("--capture", metavar="DIR", help="save each question's report here")
    ap.add_argument("--replay", metavar="DIR", help="rescore the reports saved here")
    args = ap.parse_args()
    if args.capture:
        if not args.trees:
            ap.error("--capture needs --trees DIR (or $CQ_BENCH_TREES)")
        capture(Path(args.capture), Path(args.trees).resolve(), args.data)
    if args.replay:
        replay(Path(args.replay), args.data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
