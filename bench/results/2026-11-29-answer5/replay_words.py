"""The saved concept and title pools rescored with word signals recomputed from the trees.

    grep -E '"kind": "(concept|title)"' bench/data/everyday.jsonl > /tmp/ct.jsonl
    python -m bench.studies.everyday_replay --capture CAP --trees "$CQ_BENCH_TREES" \
        --data /tmp/ct.jsonl
    python bench/results/2026-11-29-answer5/replay_words.py CAP "$CQ_BENCH_TREES"

Each of a pool's 30 candidates gets, from its unit's text in the trees (TREES/<repo>): ``covers``
again (``coverage.coverage`` over its names, signature, doc and body) at weight 0.4-1.6,
optionally over the question's words without the stop words (``nostop``); ``head``, the same
share over its names, signature and doc only (or its qualified name only, ``part`` name) at
0.4-1.2; ``lead``, 1 when its name's first word (after get/maybe/do/try) is one of the
question's stems, at 0.1-0.8. The Answer and the first five are scored as
``bench/everyday.py`` scores them; then each repository is held out in turn, the variant
best on the others (concept and title Answers, then top-5; ties: the first listed) scored on
it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench import _everyday, everyday
from cq.index.coverage import coverage, unit_words, words_of
from cq.index.query import asked_words
from cq.index.units import file_units
from cq.model.index_tuning import IndexTuning, SignalWeights
from cq.rewrite.question import understand
from cq.rewrite.words import STOP_WORDS, content_stems, stem, subwords

WEIGHTS, TUNING = SignalWeights(), IndexTuning()
_AFTER, _ANSWER_ONLY = ("size", "titled"), ("constructor",)
_LEAD_SKIP = frozenset({"get", "maybe", "do", "try", "is", "has"})
_units: dict[tuple[str, str], dict] = {}
# The tuning trees the pools were captured on (DIR/<repo>), main's second argument.
_trees = Path()


def units(repo: str, path: str) -> dict:
    if (repo, path) not in _units:
        try:
            text = (_trees / repo / path).read_text(errors="replace")
        except OSError:
            text = ""
        language = "python" if path.endswith(".py") else "rust"
        _units[(repo, path)] = {u.qualname: u for u in file_units(text, language)}
    return _units[(repo, path)]


def held(repo: str, fn: dict, part: str) -> frozenset[str] | None:
    u = units(repo, fn["file"]).get(fn["name"].split("::", 1)[1])
    if u is None:
        return None
    if part == "all":
        return words_of(u)
    if part == "head":
        return unit_words(f"{u.names} {u.signature} {u.doc}")
    return unit_words(u.names)


def lead(qualname: str) -> str | None:
    name = qualname.replace("::", ".").rsplit(".", 1)[-1]
    if name.startswith("__"):
        return None
    words = [w for w in subwords(name) if w]
    while words and words[0] in _LEAD_SKIP:
        words = words[1:]
    return stem(words[0]) if words else None


def replayed(raw: bytes, q: _everyday.Question, v: dict) -> _everyday.Outcome:
    data = json.loads(raw)
    section = next((s for s in data["sections"] if "functions" in s), None)
    functions = section["functions"] if section else []
    answer = data.get("answer") or {}
    if functions and v and answer:
        first_fn = functions[0]
        was_first = (answer.get("file"), answer.get("line")) == (first_fn["file"], first_fn["line"])
        words = asked_words(understand(q.query), (), TUNING)
        if v.get("nostop"):
            words = {w: x for w, x in words.items() if w not in STOP_WORDS} or words
        cov = coverage(words, [held(q.repo, fn, "all") for fn in functions])
        part = v.get("part", "head")
        head = coverage(words, [held(q.repo, fn, part) for fn in functions])
        content = content_stems(q.query)
        scored = []
        for at, fn in enumerate(functions):
            kept = fn["scores"]
            score = fn["score"] - WEIGHTS.covers * kept["covers"]
            score += v.get("covers", WEIGHTS.covers) * cov[at] + v.get("head", 0.0) * head[at]
            first_word = lead(fn["name"].split("::", 1)[1])
            score += v.get("lead", 0.0) if first_word and first_word in content else 0.0
            said = score - sum(getattr(WEIGHTS, k) * kept.get(k, 0.0) for k in _AFTER)
            said += sum(getattr(WEIGHTS, k) * kept.get(k, 0.0) for k in _ANSWER_ONLY)
            scored.append((score, said, at, fn))
        order = sorted(scored, key=lambda t: (-t[0], t[2]))
        first = min(order, key=lambda t: (-t[1], t[2]))
        functions = [first[3], *(t[3] for t in order if t is not first)]
        if was_first:
            fn = first[3]
            answer.update(file=fn["file"], line=fn["line"], name=fn["name"].split("::", 1)[1])
    if section:
        section["functions"] = functions[:10]
    proc = subprocess.CompletedProcess([], 0, json.dumps(data).encode(), b"")
    return everyday.score(q, proc, 0.0)


def variants() -> list[dict]:
    out: list[dict] = [{}]
    for c in (0.4, 0.8, 1.2, 1.6):
        for h in (0.0, 0.4, 0.8, 1.2):
            for nostop in (0, 1):
                for part in ("head", "name"):
                    if h or part == "head":
                        out.append({"covers": c, "head": h, "nostop": nostop, "part": part})
    out += [{"lead": w} for w in (0.1, 0.2, 0.3, 0.5, 0.8)]
    return out


def main(saved: Path, trees: Path) -> None:
    global _trees
    _trees = trees
    questions = {q.id: q for q in _everyday.load_questions(str(everyday.DATA))}
    reports = {p.stem: p.read_bytes() for p in sorted(saved.glob("*.json")) if p.stat().st_size}
    grid = variants()
    got = [{i: replayed(raw, questions[i], v) for i, raw in reports.items()} for v in grid]
    for v, outcome in zip(grid, got, strict=True):
        by: dict[str, list[int]] = {}
        for i, o in outcome.items():
            a = by.setdefault(questions[i].kind, [0, 0, 0])
            a[0], a[1], a[2] = a[0] + o.ans, a[1] + o.top5, a[2] + 1
        print(v or "as saved", {k: f"{a[0]}/{a[1]} of {a[2]}" for k, a in sorted(by.items())})
    repos = sorted({questions[i].repo for i in reports})
    held_out = [0, 0]
    for repo in repos:

        def fit(o: dict, repo: str = repo) -> tuple[int, int]:
            rest = [x for i, x in o.items() if questions[i].repo != repo]
            return sum(x.ans for x in rest), sum(x.top5 for x in rest)

        best = max(range(len(grid)), key=lambda k: (fit(got[k]), -k))
        mine = [x for i, x in got[best].items() if questions[i].repo == repo]
        held_out[0] += sum(x.ans for x in mine)
        held_out[1] += sum(x.top5 for x in mine)
        print(f"held out {repo}: chose {grid[best] or 'as saved'}")
    print(f"leave-one-repository-out: Answer {held_out[0]}, top-5 {held_out[1]} of {len(reports)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
