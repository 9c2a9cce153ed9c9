"""Does ast-grep read a hit the same in its top-level statement alone as in its whole file?

The enrichment's first stage parses only the statement holding a hit when tree-sitter's tree
of the file has no syntax error (``cq.enrich.nodes.statement_of``). For a sample of files of
a tree and a sample of places in each (identifiers, and ``#`` for comments), this reads the
structural facts and import facts at the place both ways and counts the places that differ
(each is printed, up to ten). Also reported: the bytes parsed each way.

    python -m bench.studies.statement_parse                  # 600 files of the stdlib
    python -m bench.studies.statement_parse --root DIR --files 2000 --places 60
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

    from ast_grep_py import SgRoot

    from cq.enrich.nodes import HitSpan, sg_locate, statement_of
    from cq.enrich.py_import_stage import import_facts
    from cq.enrich.py_structure import structural_facts
    from cq.parse.trees import ts_parser

    files, rng = sampled_python_files(args.root, args.files, args.seed)
    parse = ts_parser("python").parse
    places = same = with_errors = whole_bytes = statement_bytes = 0
    differ: list[str] = []
    for path in files:
        data = Path(path).read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        tree = parse(data)
        if tree.root_node.has_error:
            with_errors += 1
            continue
        whole = SgRoot(data.decode("utf-8"), "python").root()
        whole_bytes += len(data)
        spots = [(m.start(), m.end()) for m in re.finditer(rb"[A-Za-z_]\w*|#", data)]
        parsed: dict[tuple[int, int], object] = {}
        for start, end in rng.sample(spots, min(args.places, len(spots))):
            line = data.rfind(b"\n", 0, start) + 1
            col = len(data[line:start].decode())
            span = HitSpan(
                row=data.count(b"\n", 0, start),
                col=col,
                end_col=col + len(data[start:end].decode()),
                byte_start=start,
                byte_end=end,
            )
            found = statement_of(tree, data, span)
            if found is None:
                continue
            first, last, within = found
            if (first, last) not in parsed:
                parsed[first, last] = SgRoot(data[first:last].decode("utf-8"), "python").root()
                statement_bytes += last - first
            text = data[start:end].decode()
            a, b = sg_locate(whole, span), sg_locate(parsed[first, last], within)
            read_whole = (structural_facts(a, with_receiver=False), import_facts(a, text))
            read_alone = (structural_facts(b, with_receiver=False), import_facts(b, text))
            places += 1
            if read_whole == read_alone:
                same += 1
            else:
                differ.append(f"{path}:{span.row + 1}:{col} {read_whole} != {read_alone}")
    for line in differ[:10]:
        print(line)
    print(
        f"files {len(files)} (with a syntax error, read whole: {with_errors}); places {places}, "
        f"same {same}, differ {len(differ)}; bytes parsed: statements {statement_bytes:,} "
        f"of files {whole_bytes:,}"
    )


if __name__ == "__main__":
    main()
