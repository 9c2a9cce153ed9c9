"""The two grids of this directory's README, over reports saved by
``python -m bench.studies.everyday_replay --capture DIR`` (warm index, 30 Relevant Functions):
each concept and title question's Relevant Functions rescored from their saved signal values
(``functions.ordered``'s rule) with other weights (``weights``) or with candidate name signals
(``names``), its Answer moved when the saved Answer was the best-scored function, and scored as
``bench/everyday.py`` does; then leave-one-repository-out over the concept questions.

    python bench/results/2026-11-29-everyday-answer4/replay_grids.py DIR weights
    python bench/results/2026-11-29-everyday-answer4/replay_grids.py DIR names
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from bench import _everyday, everyday  # noqa: E402
from cq.index.function_signals import owner  # noqa: E402
from cq.model.index_tuning import SignalWeights  # noqa: E402
from cq.rewrite import name_stems, understand  # noqa: E402

W = SignalWeights()
AFTER, ANSWER_ONLY = ("size", "titled"), ("constructor",)
QS = {q.id: q for q in _everyday.load_questions(str(REPO / "bench/data/everyday.jsonl"))}
SUB = set((REPO / "bench/results/2026-11-29-everyday-main/subset.txt").read_text().split())


def rescore(raw, q, w, after=AFTER, answer_only=ANSWER_ONLY, extra=None):
    data = json.loads(raw)
    section = next((s for s in data["sections"] if "functions" in s), None)
    fns = section["functions"] if section else []
    answer = data.get("answer") or {}
    if fns and answer:
        best = max(fns, key=lambda f: f.get("answer_score") or -1e9)
        was = (answer.get("file"), answer.get("line")) == (best["file"], best["line"])
        scored = []
        for at, fn in enumerate(fns):
            s = dict(fn["scores"])
            if extra:
                s.update(extra(fn, q))

            def wt(k):
                return w.get(k, getattr(W, k, 0.0))

            score = s["fused"] + sum(
                wt(k) * v for k, v in s.items() if k != "fused" and k not in answer_only
            )
            a = score - sum(wt(k) * s.get(k, 0) for k in after)
            a += sum(wt(k) * s.get(k, 0) for k in answer_only)
            scored.append((score, a, at, fn))
        first = min(scored, key=lambda t: (-t[1], t[2]))
        if was:
            fn = first[3]
            answer.update(file=fn["file"], line=fn["line"], name=fn["name"].split("::", 1)[1])
        section["functions"] = [t[3] for t in sorted(scored, key=lambda t: (-t[0], t[2]))][:10]
    proc = subprocess.CompletedProcess([], 0, json.dumps(data).encode(), b"")
    return everyday.score(q, proc, 0.0)


def name_signals(fn, q):
    content = understand(q.query).content
    qual = fn["name"].split("::", 1)[1]
    name = qual.replace("::", ".").rsplit(".", 1)[-1]
    own = name_stems(owner(qual)) if owner(qual) else frozenset()
    stems = name_stems(name) if not name.startswith("__") else frozenset()
    owner_in = 1.0 if content and own and own <= content else 0.0
    rest = content - own
    hit = 1.0 if content and stems and stems & rest else 0.0
    share = len(stems & rest) / len(stems) if content and stems else 0.0
    return {"owner_in": owner_in, "name_hit": hit, "both": owner_in * hit, "nshare": share}


def grid(kind):
    if kind == "weights":
        for size_a in (0, 0.25, 0.5, 1.0):
            for cov in (0.8, 1.2, 1.6):
                for ins in (0.2, 0.4, 0.6):
                    for fil in (0.1, 0.3):
                        w = {"covers": cov, "inside": ins, "file": fil}
                        if size_a:
                            w["size"] = size_a
                        yield (size_a, cov, ins, fil), w, ("titled",) if size_a else AFTER, None
    else:
        for a in (0, 0.2, 0.5):
            for b in (0, 0.2, 0.5):
                for c in (0, 0.2, 0.5):
                    for d in (0, 0.3, 0.6):
                        w = {"owner_in": a, "name_hit": b, "both": c, "nshare": d}
                        yield (a, b, c, d), w, AFTER, name_signals


def main(saved, kind):
    reports = {
        p.stem: p.read_bytes() for p in sorted(Path(saved).glob("*.json")) if p.stat().st_size
    }
    concept = [i for i in reports if QS[i].kind == "concept"]
    asks = {i: bool(understand(QS[i].query).content) for i in reports}
    rows = []
    for label, w, after, extra in grid(kind):
        res = {}
        for i in concept:
            q = QS[i]
            if asks[i]:  # weights apply to questions only (titles have no content words)
                res[i] = rescore(reports[i], q, w, after, extra=extra)
            else:
                res[i] = rescore(reports[i], q, {})
        rows.append((label, res))

    def score(res, ids):
        return sum(res[i].ans for i in ids), sum(res[i].top5 for i in ids)

    subset = [i for i in concept if i in SUB]
    held = [i for i in concept if i not in SUB]
    print("as saved:", score(rows[0][1], subset), score(rows[0][1], held) if kind else "")
    for label, res in sorted(
        rows, key=lambda r: (-score(r[1], concept)[0], -score(r[1], concept)[1])
    )[:10]:
        print(label, "subset", score(res, subset), "held-out", score(res, held))
    total = 0
    for repo in sorted({QS[i].repo for i in concept}):
        train = [i for i in concept if QS[i].repo != repo]
        test = [i for i in concept if QS[i].repo == repo]
        best = max(rows, key=lambda r: (*score(r[1], train), -rows.index(r)))
        total += score(best[1], test)[0]
        print(repo, best[0], score(best[1], test))
    print(f"leave-one-repository-out Answer@1: {total} of {len(concept)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "weights")
