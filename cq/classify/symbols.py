"""Python ``symtable`` binding flags, per scope and name, stored in the records."""

from __future__ import annotations

from cq.model import SymbolFlags

_FLAGS = (
    ("imported", "is_imported"),
    ("assigned", "is_assigned"),
    ("referenced", "is_referenced"),
    ("parameter", "is_parameter"),
    ("global_", "is_global"),
    ("local", "is_local"),
    ("free", "is_free"),
    ("nonlocal_", "is_nonlocal"),
)


def python_symbols(text: str, path: str) -> dict[str, dict[str, int]]:
    """scope qualified name ("" = module) -> name -> flag bits; empty when it won't compile."""
    import symtable

    try:
        top = symtable.symtable(text, path, "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: dict[str, dict[str, int]] = {}
    stack = [("", top)]
    while stack:
        qualified, table = stack.pop()
        names: dict[str, int] = {}
        for symbol in table.get_symbols():
            bits = 0
            for bit, (_, method) in enumerate(_FLAGS):
                if getattr(symbol, method)():
                    bits |= 1 << bit
            names[symbol.get_name()] = bits
        out[qualified] = names
        for child in table.get_children():
            if child.get_type() in ("function", "class"):
                name = child.get_name()
                stack.append((f"{qualified}.{name}" if qualified else name, child))
    return out


def flags_for(
    symbols: dict[str, dict[str, int]], scope: str | None, name: str
) -> SymbolFlags | None:
    """Flags of ``name`` in ``scope`` (the module when None)."""
    table = symbols.get(scope or "")
    if table is None or name not in table:
        return None
    bits = table[name]
    return SymbolFlags(**{field: bool(bits & (1 << i)) for i, (field, _) in enumerate(_FLAGS)})
