"""Sliced verdicts against whole-file verdicts, for every file under the given roots.

A cold search parses a Python file as slices around its hits (``cq/classify/slices.py``);
its verdicts must be those of a whole-file parse. This takes the words given, marks every
whole-word occurrence in each ``.py`` file as a hit (as ``rg -w`` would), analyses the file
sliced and whole, and compares each hit's verdict. Any tree will do: nothing is tuned here.

    python -m bench.studies.slice_equivalence --words __init__,self,name,value ROOT [ROOT ...]

Prints the files, how many were sliced, slice parses that failed (the file is then parsed
whole, as a search does) and the hits whose verdicts differ (the first dozen listed).
"""

from __future__ import annotations

import argparse
import os
import re
import time

from cq.classify.analyze import FileTask, analyze_file
from cq.classify.lookup import classify_from_records
from cq.classify.records import FileRecords
from cq.classify.sliced import Pieces
from cq.model.tuning import ClassifyTuning, ParseTuning


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", required=True, help="comma-separated words to hit")
    parser.add_argument("roots", nargs="+")
    args = parser.parse_args()
    caps, t = ParseTuning(), ClassifyTuning()
    words = [w.encode() for w in args.words.split(",") if w]
    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(w) for w in words) + rb")\b")
    files = sliced = failed = differ = 0
    started = time.perf_counter()
    for path in _python_files(args.roots):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        hits = [(m.start(), m.end()) for m in pattern.finditer(data)]
        if not hits or len(data) > caps.max_parse_bytes:
            continue
        files += 1
        analysis = analyze_file(FileTask(path, "python", data, hits), caps)
        failed += analysis.slices_failed
        if analysis.sliced is None:
            continue
        stored = analyze_file(FileTask(path, "python", data), caps).records  # no hits: whole
        if stored is None or stored.reason is not None:
            continue
        whole = FileRecords.from_stored(stored)
        sliced += 1
        pieces = Pieces(analysis.sliced)
        for (start, end), shift in zip(hits, pieces.shifts, strict=True):
            text = data[start:end].decode()
            cut = classify_from_records(pieces.records, start - shift, end - shift, text, t)
            full = classify_from_records(whole, start, end, text, t)
            if cut != full:
                differ += 1
                if differ <= 12:
                    line = data.count(b"\n", 0, start) + 1
                    print(f"differ {path}:{line}: {cut} | {full}")
    seconds = time.perf_counter() - started
    print(
        f"{files} files, {sliced} sliced, {failed} slice parses failed, "
        f"{differ} hits differ ({seconds:.0f} s)"
    )


def _python_files(roots: list[str]) -> list[str]:
    found: list[str] = []
    for root in roots:
        for folder, dirs, names in os.walk(root):
            dirs.sort()
            found += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
    return found


if __name__ == "__main__":
    main()
