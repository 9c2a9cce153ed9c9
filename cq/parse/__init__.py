"""Parsed files shared by classification and enrichment, parsed once per content.

In: a search root and a relative path, asked of the search's ``Corpus`` (``corpus.py``: each
file read and hashed at most once per search, not at all when its stat shows it unchanged
and a cached payload is all that is asked). Out: ``SourceFile`` (bytes, text, content hash,
language) and, on demand, its ast-grep root, tree-sitter tree, Python ``ast`` module and
LibCST metadata, kept in bounded LRU caches
keyed by content hash so repeated searches in one process (the MCP server) parse nothing twice.
Heavy libraries are imported only when a parse is first asked for. The corpus also holds
the tree's file list (``listing.py``), listed once for every part of the search that needs it.
"""

from cq.parse.corpus import Corpus, CorpusStats, searched_digests
from cq.parse.listing import Listing, list_tree, list_tree_until
from cq.parse.python_trees import CstMetadata, cst_metadata, imported_names, py_ast
from cq.parse.source import SourceFile, split_lines
from cq.parse.trees import (
    cache_stats,
    searches_again,
    sg_root,
    sg_statement,
    statements_alone,
    ts_span,
    ts_tree,
)

__all__ = [
    "Corpus",
    "CorpusStats",
    "CstMetadata",
    "Listing",
    "SourceFile",
    "cache_stats",
    "cst_metadata",
    "imported_names",
    "list_tree",
    "list_tree_until",
    "py_ast",
    "searched_digests",
    "searches_again",
    "sg_root",
    "sg_statement",
    "split_lines",
    "statements_alone",
    "ts_span",
    "ts_tree",
]
