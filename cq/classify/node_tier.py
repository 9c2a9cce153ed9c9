"""Tier 2: classify a hit from the live syntax node at its position.

Used for what records leave open: text in code that is not one identifier (a literal such as
``x + 1`` or a regex hit). Walks from the smallest node covering the hit to the first
meaningful parent; a function's or class's body is as far as it goes (text in a body is not
the definition around it).
"""

from __future__ import annotations

from typing import Any

from cq.model import Category, Classification
from cq.model.tuning import ClassifyTuning
from cq.parse import python_syntax, rust_syntax

_PARENT_CATEGORY: dict[str, Category] = {
    **python_syntax.NODE_CATEGORIES,
    **rust_syntax.NODE_CATEGORIES,
}


def classify_from_node(
    tree: Any, start: int, end: int, scope: str | None, t: ClassifyTuning
) -> Classification:
    """Category of the construct around [start, end); text_match when nothing fits."""
    node = tree.root_node.descendant_for_byte_range(start, max(start, end - 1))
    hops = 0
    while node is not None and hops < t.node_max_hops:
        category = _PARENT_CATEGORY.get(node.type)
        if category == "definition" and _in_body(node, start):
            break  # ``x * 2`` or a ``?`` in a function's body is not the function's definition
        if category is not None:
            return Classification(
                category=category,
                confidence=round(t.node_base * t.node_decay**hops, 3),
                tier="node",
                node_kind=node.type,
                containing_scope=scope,
            )
        node = node.parent
        hops += 1
    return Classification(
        category="text_match",
        confidence=t.node_none,
        tier="node",
        node_kind=None,
        containing_scope=scope,
    )


# Definitions whose body holds other code: a hit there reached the definition only by walking
# out of a statement the table has no category for (struct and enum bodies are their fields
# and variants, definitions themselves)
_BODIES = frozenset({"function_definition", "class_definition", "function_item", "trait_item"})


def _in_body(node: Any, start: int) -> bool:
    body = node.child_by_field_name("body") if node.type in _BODIES else None
    return body is not None and body.start_byte <= start < body.end_byte
