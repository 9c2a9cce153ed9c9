"""Cache namespaces follow the code that shapes each payload, derived from its imports: a
change to any module a stage's builder uses (not only the ones someone listed) starts a new
namespace, and a change elsewhere keeps the cached payloads."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import cq

_KINDS = {
    "records": ("cq.classify.analyze",),
    "symbols": ("cq.enrich.symbols",),
    "cfgtest": ("cq.rank.rust_tests",),
    "enrich": ("cq.enrich.shown",),
    "vocabulary": ("cq.rewrite.vocabulary",),
}


def _namespaces(package_parent: Path) -> dict[str, str]:
    """Each kind's namespace, computed by the cq copy under ``package_parent``."""
    script = (
        "import json, sys\n"
        "from cq.cache.payloads import namespace\n"
        f"kinds = {_KINDS!r}\n"
        "print(json.dumps({k: namespace(k, v) for k, v in kinds.items()}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=package_parent,
        # a cache dir of its own each time: the namespaces as worked out from the sources
        env={
            "PYTHONPATH": str(package_parent),
            "PATH": "/usr/bin:/bin",
            "CQ_CACHE_DIR": tempfile.mkdtemp(dir=package_parent),
        },
        check=True,
    )
    return json.loads(done.stdout)


def _copy_of_cq(tmp_path: Path) -> Path:
    shutil.copytree(Path(cq.__file__).parent, tmp_path / "cq")
    return tmp_path


def _touch(root: Path, rel: str) -> None:
    path = root / "cq" / rel
    path.write_text(path.read_text() + "\n# changed\n")


def test_a_module_a_builder_imports_changes_its_namespace(tmp_path: Path) -> None:
    root = _copy_of_cq(tmp_path)
    before = _namespaces(root)
    # LibCST metadata (enrichment's stage 4) is not named by any builder, only imported.
    _touch(root, "parse/python_trees.py")
    after = _namespaces(root)
    assert after["enrich"] != before["enrich"]
    assert after["symbols"] == before["symbols"]  # the symbol tables never use it
    _touch(root, "rewrite/words.py")  # stemming shapes the vocabulary's indexes
    assert _namespaces(root)["vocabulary"] != after["vocabulary"]


def test_code_no_builder_imports_keeps_every_namespace(tmp_path: Path) -> None:
    root = _copy_of_cq(tmp_path)
    before = _namespaces(root)
    _touch(root, "report/markdown.py")
    _touch(root, "cli/dispatch.py")
    assert _namespaces(root) == before


_OPENED = (
    "import json, sys\n"
    "opened = []\n"
    "sys.addaudithook(lambda event, args: opened.append(str(args[0]))"
    " if event == 'open' and str(args[0]).endswith('.py') else None)\n"
    "from cq.cache.payloads import namespace\n"
    "from cq.cache.store import close_stores\n"
    "kinds = {kinds!r}\n"
    "names = {{k: namespace(k, v) for k, v in kinds.items()}}\n"
    "close_stores()\n"
    "print(json.dumps([names, [p for p in opened if '/cq/' in p]]))\n"
)


def _recorded_namespaces(root: Path, cache: Path) -> tuple[dict[str, str], list[str]]:
    """The namespaces a process of the cq copy under ``root`` names, with ``cache`` as its
    cache dir, and the cq sources it opened to name them."""
    done = subprocess.run(
        [sys.executable, "-c", _OPENED.format(kinds=_KINDS)],
        capture_output=True,
        text=True,
        cwd=root,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", "CQ_CACHE_DIR": str(cache)},
        check=True,
    )
    names, opened = json.loads(done.stdout)
    return names, opened


def test_a_later_process_names_its_caches_without_reading_cqs_sources(tmp_path: Path) -> None:
    """The namespaces are recorded in the store under a stamp of cq's files (path, size,
    modification time) and the installed wheels: a later process with the same code reads
    them there; one whose code changed works them out again from the sources."""
    root = _copy_of_cq(tmp_path / "copy")
    cache = tmp_path / "cache"
    first, read = _recorded_namespaces(root, cache)
    assert len(read) > 50  # worked out: the builders' import closures, read
    again, read = _recorded_namespaces(root, cache)
    assert again == first and read == []
    _touch(root, "parse/python_trees.py")
    changed, read = _recorded_namespaces(root, cache)
    assert changed["enrich"] != first["enrich"] and changed["symbols"] == first["symbols"]
    assert read  # the stamp moved: worked out again
    assert changed == _namespaces(root)  # the same as a process with no store at hand
