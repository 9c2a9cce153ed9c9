"""Python ``symtable`` binding flags, per scope and name, stored raw in the records.

The raw C-level tables (``_symtable``) give each scope's ``{name: flags}`` directly; the public
``symtable`` wrapper builds an object per symbol and costs more than the parse itself, so the
flags are kept raw and decoded only for the hits that need them (mirroring
``symtable.Symbol``'s rules).
"""

from __future__ import annotations

from cq.model import SymbolFlags

# CPython's symtable flag layout (Include/internal/pycore_symtable.h), read from _symtable when
# present so a new interpreter's values win.
_C = {
    "DEF_GLOBAL": 1, "DEF_LOCAL": 2, "DEF_PARAM": 4, "DEF_NONLOCAL": 8, "USE": 16,
    "DEF_IMPORT": 128, "DEF_BOUND": 134, "SCOPE_OFF": 11, "SCOPE_MASK": 15,
    "LOCAL": 1, "GLOBAL_EXPLICIT": 2, "GLOBAL_IMPLICIT": 3, "FREE": 4, "CELL": 5,
    "TYPE_FUNCTION": 0, "TYPE_CLASS": 1,
}  # fmt: skip
try:
    import _symtable

    _C.update({k: getattr(_symtable, k) for k in _C if hasattr(_symtable, k)})
except ImportError:  # pragma: no cover - every CPython has it
    _symtable = None  # type: ignore[assignment]


def python_symbols(text: str, path: str) -> dict[str, dict[str, int]]:
    """scope qualified name ("" = module) -> name -> raw flags; empty when it won't compile."""
    if _symtable is None:
        return {}
    try:
        top = _symtable.symtable(text, path, "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError):
        return {}
    out: dict[str, dict[str, int]] = {}
    named = (_C["TYPE_FUNCTION"], _C["TYPE_CLASS"])
    stack = [("", top)]
    while stack:
        qualified, table = stack.pop()
        out[qualified] = dict(table.symbols)
        for child in table.children:
            if child.type in named:
                name = child.name
                stack.append((f"{qualified}.{name}" if qualified else name, child))
    return out


def flags_for(
    symbols: dict[str, dict[str, int]], scope: str | None, name: str
) -> SymbolFlags | None:
    """Flags of ``name`` in ``scope`` (the module when None), decoded like ``symtable.Symbol``."""
    table = symbols.get(scope or "")
    if table is None or name not in table:
        return None
    raw = table[name]
    kind = (raw >> _C["SCOPE_OFF"]) & _C["SCOPE_MASK"]
    module_bound = not scope and bool(raw & _C["DEF_BOUND"])
    return SymbolFlags(
        imported=bool(raw & _C["DEF_IMPORT"]),
        assigned=bool(raw & _C["DEF_LOCAL"]),
        referenced=bool(raw & _C["USE"]),
        parameter=bool(raw & _C["DEF_PARAM"]),
        global_=kind in (_C["GLOBAL_IMPLICIT"], _C["GLOBAL_EXPLICIT"]) or module_bound,
        local=kind in (_C["LOCAL"], _C["CELL"]) or module_bound,
        free=kind == _C["FREE"],
        nonlocal_=bool(raw & _C["DEF_NONLOCAL"]),
    )
