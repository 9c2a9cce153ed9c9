"""The server's code digest, kept in a memo beside its socket (``cq/server/identity.py``): read
from there while no source changed, computed again after any change."""

from __future__ import annotations

import os
from pathlib import Path

from cq.server.identity import code_digest

_OLD_NS = 1_000_000_000 * 1_000_000_000  # 2001: long before any clock tick of a test


def _package(root: Path) -> Path:
    """A package of two modules and a shipped profile, their mtimes in the past (files
    changed within the file system's clock tick are never memoized)."""
    package = root / "cq"
    (package / "server").mkdir(parents=True)
    (root / "profiles").mkdir()
    files = {
        package / "__init__.py": "VERSION = 1\n",
        package / "server" / "mod.py": "def f():\n    return 1\n",
        root / "profiles" / "default.toml": "[limits]\n",
    }
    for path, text in files.items():
        path.write_text(text)
        os.utime(path, ns=(_OLD_NS, _OLD_NS))
    return package


def test_the_memo_gives_the_digest_the_sources_give(tmp_path: Path) -> None:
    package = _package(tmp_path / "src")
    memo = tmp_path / "run"
    memo.mkdir()
    computed = code_digest(None, str(package))
    assert code_digest(str(memo), str(package)) == computed  # computed, then kept
    assert (memo / "code-digest").read_text().endswith(computed)
    assert code_digest(str(memo), str(package)) == computed  # read from the memo


def test_an_edited_source_is_hashed_again_despite_the_memo(tmp_path: Path) -> None:
    package = _package(tmp_path / "src")
    memo = tmp_path / "run"
    memo.mkdir()
    before = code_digest(str(memo), str(package))
    module = package / "server" / "mod.py"
    module.write_text("def f():\n    return 22\n")
    os.utime(module, ns=(_OLD_NS, _OLD_NS))  # the same mtime: its size tells
    after = code_digest(str(memo), str(package))
    assert after != before
    assert after == code_digest(None, str(package))


def test_a_profile_added_is_hashed_again(tmp_path: Path) -> None:
    package = _package(tmp_path / "src")
    memo = tmp_path / "run"
    memo.mkdir()
    before = code_digest(str(memo), str(package))
    (tmp_path / "src" / "profiles" / "audit.toml").write_text("[limits]\n")
    assert code_digest(str(memo), str(package)) != before


def test_a_source_changed_just_now_is_not_memoized(tmp_path: Path) -> None:
    package = _package(tmp_path / "src")
    (package / "server" / "mod.py").write_text("def f():\n    return 3\n")  # mtime: now
    memo = tmp_path / "run"
    memo.mkdir()
    code_digest(str(memo), str(package))
    assert not (memo / "code-digest").exists()
