"""Rust code inside macro invocations, parsed on its own.

tree-sitter keeps a macro's argument as a flat token tree, so the items of
``cfg_rt! { pub fn spawn() {} }`` or the calls in ``assert_eq!(f(x), 1)`` would be plain
identifiers. ``reparse`` parses one token tree again, as items or statements (braces), call
arguments (parentheses) or an array (brackets), and keeps the result only when it parses
without an error, so a DSL (``select!``, ``quote!``, ``html!``) stays a token tree.

A ``MacroBody`` maps the new tree back: file offset = node offset + ``shift``, and only nodes
inside [``lo``, ``hi``) come from the file (the rest is the wrapper that made it parse).
"""

from __future__ import annotations

from typing import Any

import msgspec

from cq.parse.trees import ts_parser

# (prefix, suffix) tried in order for each opening delimiter.
_WRAPPERS: dict[bytes, tuple[tuple[bytes, bytes], ...]] = {
    b"{": ((b"", b""), (b"fn __cq(){", b"\n}")),
    b"(": ((b"fn __cq(){__cq(", b"\n);}"),),
    b"[": ((b"fn __cq(){[", b"\n];}"),),
}


class MacroBody(msgspec.Struct, frozen=True):
    """A token tree parsed again: its tree and how its offsets map to the file's."""

    tree: Any
    shift: int
    lo: int
    hi: int

    def owns(self, node: Any) -> bool:
        """Whether ``node`` is the macro's own code, not the wrapper around it."""
        return self.lo <= node.start_byte and node.end_byte <= self.hi


def token_tree(invocation: Any) -> Any | None:
    """The argument of a ``macro_invocation`` node."""
    return next((c for c in invocation.children if c.type == "token_tree"), None)


def reparse(tree_node: Any, shift: int = 0) -> MacroBody | None:
    """``tree_node`` (a ``token_tree`` at file offset ``tree_node.start_byte + shift``) parsed
    as Rust, or None when no reading parses cleanly."""
    data = tree_node.text or b""
    if len(data) < 2:
        return None
    inner = data[1:-1]
    start = tree_node.start_byte + shift + 1
    parser = ts_parser("rust")
    for prefix, suffix in _WRAPPERS.get(data[:1], ()):
        tree = parser.parse(prefix + inner + suffix)
        if not tree.root_node.has_error:
            return MacroBody(tree, start - len(prefix), len(prefix), len(prefix) + len(inner))
    return None
