"""Where each everyday question's gold function ranks among the index's unit documents.

    for r in $(ls /work/trees/head); do CQ_SERVER=0 CQ_CACHE_DIR=DIR/$r \
        python -m cq index --root /work/trees/head/$r; done
    python bench/results/2026-11-29-answer5/retrieval_ranks.py DIR concept

Prints, per question, the gold's first rank among the first 400 unit documents the question's
words retrieve (999: not among them) four ways: as asked, tests left out, the rewriter's stop
words (prepositions) left out of the words, both; then how many golds rank in the first
10/30/50 each way.
"""

from __future__ import annotations

import glob
import json
import sys
from pathlib import Path

from cq.index.opening import _tantivy
from cq.index.query import _search, asked_words
from cq.model.index_tuning import IndexTuning
from cq.rank import path_role
from cq.rewrite.question import understand
from cq.rewrite.words import STOP_WORDS

DATA = Path(__file__).parents[2] / "data" / "everyday.jsonl"


def main(base: Path, kinds: list[str]) -> None:
    tuning = IndexTuning()
    indexes = {}
    totals: dict[str, list[int]] = {}
    for line in DATA.read_text().splitlines():
        q = json.loads(line)
        if q["kind"] not in kinds:
            continue
        if q["repo"] not in indexes:
            found = glob.glob(str(base / q["repo"] / "index" / "v4" / "*"))
            indexes[q["repo"]] = _tantivy(Path(found[0]))
        index = indexes[q["repo"]]
        words = asked_words(understand(q["query"]), (), tuning)
        plain = {k: v for k, v in words.items() if k not in STOP_WORDS} or words
        gold = {tuple(g.split("::", 1)) for g in q["gold"]}
        row = []
        for label, asked, no_tests in (
            ("asked", words, False),
            ("no tests", words, True),
            ("no stop words", plain, False),
            ("both", plain, True),
        ):
            boosts = tuning.unit_boosts.table()
            hits = list(_search(index, index.searcher(), asked, boosts, False, 400))
            if no_tests:
                hits = [h for h in hits if path_role(h.path) != "test"]
            rank = next((i for i, h in enumerate(hits, 1) if (h.path, h.qualname) in gold), 999)
            row.append(rank)
            t = totals.setdefault(label, [0, 0, 0])
            t[0] += rank <= 10
            t[1] += rank <= 30
            t[2] += rank <= 50
        print(f"{q['id']:16} {row}")
    for label, (ten, thirty, fifty) in totals.items():
        print(f"{label}: first 10 {ten}, 30 {thirty}, 50 {fifty}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2].split(","))
