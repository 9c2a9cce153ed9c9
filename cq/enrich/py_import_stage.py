"""Stage 3, import detail: module, names, alias, relative level, ``if TYPE_CHECKING``.

In: the innermost ast-grep node at the hit. Out: ``ImportFacts`` when the hit is inside an
import statement, else None. The statement's own text is parsed with ``ast`` so this works
even when the rest of the file has syntax errors.
"""

from __future__ import annotations

import ast
import textwrap
from itertools import pairwise

from cq.enrich.facts import squash
from cq.enrich.nodes import NodeView, ancestors
from cq.model import ImportFacts
from cq.parse.python_syntax import IMPORT_STATEMENTS


def import_facts(node: NodeView, hit_text: str) -> ImportFacts | None:
    ups = [node, *ancestors(node)]
    stmt = next((u for u in ups if u.kind() in IMPORT_STATEMENTS), None)
    if stmt is None:
        return None
    parsed = ast.parse(textwrap.dedent(stmt.text())).body[0]
    type_checking = any(_guards(parent, child) for child, parent in pairwise(ups))
    if isinstance(parsed, ast.ImportFrom):
        module, level = parsed.module, parsed.level
    elif isinstance(parsed, ast.Import):
        module, level = None, 0
    else:
        return None
    names = tuple(a.name if a.asname is None else f"{a.name} as {a.asname}" for a in parsed.names)
    alias = next(
        (a.asname for a in parsed.names if a.asname and hit_text in (a.asname, a.name)), None
    )
    if module is None and isinstance(parsed, ast.Import) and len(parsed.names) == 1:
        module = parsed.names[0].name
    return ImportFacts(
        module=module, names=names, alias=alias, level=level, type_checking=type_checking
    )


def _guards(parent: NodeView, child: NodeView) -> bool:
    """``child`` is the body (not an ``else``) of an ``if TYPE_CHECKING:``."""
    if parent.kind() != "if_statement" or child.kind() != "block":
        return False
    condition = parent.field("condition")
    return condition is not None and squash(condition.text()).endswith("TYPE_CHECKING")
