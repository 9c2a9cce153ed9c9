"""Does the enrichment read a hit the same in the top-level statements around it, parsed
alone, as in its whole file?

The enrichment finds a hit's top-level statements with the slices' line scan
(``cq.classify.TopLevel``) and parses only them with tree-sitter (``cq.enrich.python``):
stage 1 (ast-grep) then parses the statement they give, stage 5 (tree-sitter) reads the
hit in them. For a sample of files of a tree and of places in each (identifiers, and ``#``
for comments), this compares, in files without a syntax error, the statement found that way
with the one the file's tree gives (``statement_of``), and stage 5's facts both ways;
places whose run does not parse alone are counted (the enrichment reads those in the
file's tree, as before). In files with a syntax error it counts the places whose parse
quality goes unsaid (their statements parse alone). Also reported: the bytes parsed.

    python -m bench.studies.statement_runs                  # 600 files of the stdlib
    python -m bench.studies.statement_runs --root DIR --files 5000 --places 60
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from bench._common import sample_arguments, sampled_python_files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sample_arguments(parser, places=True)
    args = parser.parse_args()

    from cq.classify import TopLevel
    from cq.enrich.nodes import HitSpan, statement_of, ts_locate
    from cq.enrich.py_structure import structural_facts
    from cq.parse.trees import ts_parser

    files, rng = sampled_python_files(args.root, args.files, args.seed)
    parse = ts_parser("python").parse
    places = same = fallback = unsaid = broken_files = 0
    whole_bytes = run_bytes = 0
    differ: list[str] = []
    for path in files:
        data = Path(path).read_bytes()
        tree = parse(data)
        broken = tree.root_node.has_error
        broken_files += broken
        top = TopLevel(data)
        starts = [0, *(m.end() for m in re.finditer(rb"\n", data))]
        spots = [(m.start(), m.end()) for m in re.finditer(rb"[A-Za-z_]\w*|#", data)]
        runs: dict[tuple[int, int], object] = {}
        whole_bytes += len(data)
        for start, end in rng.sample(spots, min(args.places, len(spots))):
            row = data.count(b"\n", 0, start)
            span = HitSpan(row, start - starts[row], end - starts[row], start, end)
            first, last = top.run(start)
            if (first, last) not in runs:
                runs[first, last] = parse(data[first:last])
                run_bytes += last - first
            run = runs[first, last]
            places += 1
            if run.root_node.has_error:  # type: ignore[attr-defined]
                fallback += 1
                continue
            if broken:
                unsaid += 1
                continue
            within = HitSpan(
                row - data.count(b"\n", 0, first),
                span.col,
                span.end_col,
                start - first,
                end - first,
            )
            found = statement_of(run, data[first:last], within)
            shifted = None if found is None else (found[0] + first, found[1] + first, found[2])
            expected = statement_of(tree, data, span)
            in_run = structural_facts(ts_locate(run, within), with_receiver=True)
            in_file = structural_facts(ts_locate(tree, span), with_receiver=True)
            if shifted == expected and in_run == in_file:
                same += 1
            else:
                differ.append(f"{path}:{row + 1}:{span.col} {expected} {shifted}")
    for line in differ[:10]:
        print(line)
    print(
        f"files {len(files)} ({broken_files} with a syntax error); places {places}: "
        f"same {same}, differ {len(differ)}, run with an error (read in the file) {fallback}, "
        f"in a file with a syntax error, its quality unsaid {unsaid}; bytes parsed: "
        f"runs {run_bytes:,} of files {whole_bytes:,}"
    )


if __name__ == "__main__":
    main()
