"""Plain whole-file BM25: the reference point issue 14 measures cq against.

Per issue, an in-memory tantivy index over the code files of the tree at the base commit
(``TREES/<instance_id>``: .py/.pyi for Python issues, .rs for Rust ones, tests included), one
document per file with two fields: ``body`` (the file's text) and ``path`` (its relative path,
boost 2). Code and query are tokenized alike: every ``[A-Za-z0-9_]+`` word gives its subwords
(split at ``_`` and camelCase, lowercased) plus, when it has more than one, the whole word
lowercased (``FileUploadHandler`` -> file upload handler fileuploadhandler). A query is the
issue text's tokens as SHOULD term clauses, a repeated word counting once per occurrence (as
Lucene's query parser would build it). Nothing is tuned.

tantivy (PyPI, in the test extra) is the real search engine the issue
names for the index; using it here keeps the baseline's BM25 (k1 = 1.2, b = 0.75) the same as
the index's. Output, metrics and ``--json-out`` format are ``localization.py``'s, so
``loc_compare.py`` can diff or fuse the two.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

import tantivy

from bench import _common, _loc

WORD = re.compile(r"[A-Za-z0-9_]+")
PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
CODE = {"python": (".py", ".pyi"), "rust": (".rs",)}
PATH_BOOST = 2.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/eval/swebench_lite_dev_tuning.jsonl")
    _common.dir_argument(
        ap,
        "--trees",
        _common.EVAL_TREES,
        "the trees at the issues' base commits, DIR/<instance_id> (bench/prepare_eval_trees.py)",
    )
    ap.add_argument("--only", action="append", default=[], help="instance ids to run")
    ap.add_argument("--text", default="full", help="comma list of full, title")
    ap.add_argument("--sample", type=int, help="a fixed subsample of N issues (per-repo share)")
    ap.add_argument("--json-out", help="write per-issue ranks and top files here")
    ap.add_argument("--keep-files", type=int, default=20, help="top files kept in --json-out")
    ap.add_argument("--verbose", "-v", action="store_true", help="per-instance ranks")
    args = ap.parse_args()
    rows = _loc.load_rows(args.data)
    if args.only:
        rows = [r for r in rows if r["instance_id"] in args.only]
    rows = _loc.sample(rows, args.sample)
    texts = args.text.split(",")
    per_text: dict[str, list[_loc.Instance]] = {t: [] for t in texts}
    cache = TokenCache()
    for row in rows:
        tree = Path(args.trees).resolve() / row["instance_id"]
        start = time.perf_counter()
        index = build_index(tree, CODE[language(row)], cache)
        built = time.perf_counter() - start
        gold = _loc.gold_files(row, tree)
        for text in texts:
            start = time.perf_counter()
            files = search(index, _loc.query_text(row, text), limit=max(args.keep_files, 10))
            seconds = round(built + time.perf_counter() - start, 3)
            inst = _loc.instance(row, gold, files, None, args.keep_files, seconds=seconds)
            per_text[text].append(inst)
    runs = [_loc.Run("bm25", "bm25", t, args.data, [], per_text[t]) for t in texts]
    for run in runs:
        print(_loc.table(run) + "\n")
        if args.verbose:
            print("\n".join(_loc.verbose_lines(run)) + "\n")
    if args.json_out:
        _loc.write(args.json_out, runs)
    return 0


def language(row: dict) -> str:
    return "rust" if any(f.endswith(".rs") for f in row["gold_code_files"]) else "python"


def tokens(text: str) -> list[str]:
    """Subwords of every word, plus the whole word when it has several (see the docstring)."""
    out: list[str] = []
    for word in WORD.findall(text):
        parts = PART.findall(word)
        out.extend(p.lower() for p in parts)
        if len(parts) > 1:
            out.append(word.lower())
    return out


class TokenCache:
    """Token text by inode: the trees of one repository hard-link their shared files."""

    def __init__(self) -> None:
        self._by_inode: dict[tuple[int, int], str] = {}

    def body(self, path: Path) -> str:
        st = path.stat()
        key = (st.st_dev, st.st_ino)
        if key not in self._by_inode:
            text = path.read_bytes().decode("utf-8", errors="replace")
            self._by_inode[key] = " ".join(tokens(text))
        return self._by_inode[key]


def build_index(tree: Path, suffixes: tuple[str, ...], cache: TokenCache) -> tantivy.Index:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("rel", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("body", tokenizer_name="ws", index_option="freq")
    builder.add_text_field("path", tokenizer_name="ws", index_option="freq")
    index = tantivy.Index(builder.build())
    index.register_tokenizer(
        "ws", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()
    )
    writer = index.writer(heap_size=50_000_000, num_threads=1)
    for path in sorted(p for p in tree.rglob("*") if p.suffix in suffixes and p.is_file()):
        rel = path.relative_to(tree).as_posix()
        doc = tantivy.Document(rel=rel, body=cache.body(path), path=" ".join(tokens(rel)))
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def search(index: tantivy.Index, text: str, limit: int) -> list[str]:
    """Relative paths of the best ``limit`` files for ``text``; ties keep index order."""
    counts = Counter(tokens(text))
    if not counts:
        return []
    schema = index.schema
    clauses = []
    for term, count in sorted(counts.items()):
        for field, boost in (("body", 1.0), ("path", PATH_BOOST)):
            query = tantivy.Query.term_query(schema, field, term, index_option="freq")
            clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(query, boost * count)))
    searcher = index.searcher()
    hits = searcher.search(tantivy.Query.boolean_query(clauses), limit=limit).hits
    return [searcher.doc(address)["rel"][0] for _, address in hits]


if __name__ == "__main__":
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    sys.exit(main())
