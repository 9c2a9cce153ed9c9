"""Tree-sitter's error recovery: how many ERROR and MISSING nodes, and whether the hit is in one.

A file without errors costs one flag read (``root.has_error``); otherwise a compiled query
counts the nodes in C.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from cq.enrich.nodes import TsView, ancestors
from cq.model import ParseQuality


def parse_quality(tree: Any, node: TsView, language: str) -> ParseQuality:
    if not tree.root_node.has_error:
        return ParseQuality()
    import tree_sitter

    captures = tree_sitter.QueryCursor(_query(language)).captures(tree.root_node)
    in_error = any(u.kind() == "ERROR" or u.node.is_missing for u in [node, *ancestors(node)])
    return ParseQuality(
        error_nodes=len(captures.get("error", [])),
        missing_nodes=len(captures.get("missing", [])),
        hit_in_error=in_error,
    )


@cache
def _query(language: str) -> Any:
    """The compiled ERROR/MISSING query of a grammar (compiled once per process)."""
    import tree_sitter

    if language == "python":
        import tree_sitter_python as grammar
    else:
        import tree_sitter_rust as grammar
    return tree_sitter.Query(
        tree_sitter.Language(grammar.language()), "(ERROR) @error (MISSING) @missing"
    )
