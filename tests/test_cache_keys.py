"""Cache namespaces follow the code that shapes each payload, derived from its imports: a
change to any module a stage's builder uses (not only the ones someone listed) starts a new
namespace, and a change elsewhere keeps the cached payloads."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
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
        env={"PYTHONPATH": str(package_parent), "PATH": "/usr/bin:/bin"},
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
