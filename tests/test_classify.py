"""What every hit *is*: categories, scopes and tiers on Python and Rust fixtures, through the
real CLI (real rg, real tree-sitter), plus the pool's and the cache's failure modes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import run_cq, run_hooked, write_tree

from cq.cache.store import FILE_NAME

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

PY = '''\
"""Module docstring mentions target."""
import os.target
from pkg import target as alias_target
from typing import TYPE_CHECKING


@target
@registry.target(name="x")
class Outer(Base):
    """Class docstring: target."""

    count: target = 0

    class Inner:
        async def target(self, param: "target" = None) -> target:
            # comment target
            s = "a # not a comment target"
            f = f"{target(x)} and target"
            self.target = target
            obj.attr.target(1)
            for target in items:
                pass
            other = [target for target in items]
            target += 1
            return target


def target(): ...
'''

RS = """\
use crate::a::{target, b as other};
/// Doc comment about target
#[derive(Debug, target)]
pub struct target { target: u8 }

impl Tr for target {
    fn target(&self, x: target) -> u8 {
        // comment target
        let (a, mut target) = (1, "str # target");
        target += 1;
        self.f.target(1);
        target!("x");
        Foo::target();
        0
    }
}

mod tests {
    fn target() {}
}
"""


def _verdicts(run) -> list[tuple]:
    """What classification decided, finding by finding (enrichment aside)."""
    return [
        (f["file"], f["line"], f["col"], f["category"], f["containing_scope"], f["tier"])
        for f in run.json()["findings"]
    ]


def _by_position(root: Path, *extra: str) -> dict[tuple[str, int, int], dict]:
    run = run_cq(
        "search", "target", "--root", str(root), "--format", "json", "--limit", "0", *extra
    )
    assert run.returncode == 0, run.stderr
    return {(f["file"], f["line"], f["col"]): f for f in run.json()["findings"]}


def _at(found: dict, file: str, source: str, line: int, nth: int = 0) -> dict:
    text = source.splitlines()[line - 1]
    col = -1
    for _ in range(nth + 1):
        col = text.index("target", col + 1)
    return found[(file, line, col)]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("classify")
    return write_tree(root, {"pkg/mod.py": PY, "src/lib.rs": RS})


@pytest.fixture(scope="module")
def found(repo: Path) -> dict:
    return _by_position(repo)


@pytest.mark.parametrize(
    "line, nth, category, scope",
    [
        (1, 0, "docstring_match", None),
        (2, 0, "import", None),
        (3, 0, "from_import", None),
        (7, 0, "callsite", None),  # @target decorator
        (8, 0, "callsite", None),  # @registry.target(...) decorator call
        (10, 0, "docstring_match", "Outer"),
        (12, 0, "annotation", "Outer"),
        (15, 0, "definition", "Outer.Inner.target"),  # the def name: not a reference
        (15, 1, "string_match", "Outer.Inner.target"),  # a string annotation is a string
        (15, 2, "annotation", "Outer.Inner.target"),
        (16, 0, "comment_match", "Outer.Inner.target"),
        (17, 0, "string_match", "Outer.Inner.target"),  # '#' inside a string is no comment
        (18, 0, "callsite", "Outer.Inner.target"),  # code inside an f-string
        (18, 1, "string_match", "Outer.Inner.target"),
        (19, 0, "assignment", "Outer.Inner.target"),  # self.target = ...
        (19, 1, "reference", "Outer.Inner.target"),
        (20, 0, "callsite", "Outer.Inner.target"),  # method call on an attribute chain
        (21, 0, "assignment", "Outer.Inner.target"),  # for target in ...
        (23, 0, "reference", "Outer.Inner.target"),
        (23, 1, "assignment", "Outer.Inner.target"),  # comprehension target
        (24, 0, "assignment", "Outer.Inner.target"),  # augmented assignment
        (25, 0, "reference", "Outer.Inner.target"),
        (28, 0, "definition", "target"),
    ],
)
def test_python_categories(found: dict, line: int, nth: int, category: str, scope) -> None:
    hit = _at(found, "pkg/mod.py", PY, line, nth)
    assert (hit["category"], hit["containing_scope"]) == (category, scope)
    assert 0.0 < hit["confidence"] <= 1.0


@pytest.mark.parametrize(
    "line, nth, category, scope",
    [
        (1, 0, "import", None),
        (2, 0, "docstring_match", None),
        (3, 0, "reference", None),  # inside #[derive(...)]: code, never a comment
        (4, 0, "definition", "target"),  # struct name (like a Python class's)
        (4, 1, "definition", "target"),  # field name, in its struct
        (6, 0, "definition", "impl Tr for target"),  # impl self type
        (7, 0, "definition", "impl Tr for target::target"),
        (7, 1, "annotation", "impl Tr for target::target"),
        (8, 0, "comment_match", "impl Tr for target::target"),
        (9, 0, "assignment", "impl Tr for target::target"),
        (9, 1, "string_match", "impl Tr for target::target"),
        (10, 0, "assignment", "impl Tr for target::target"),
        (11, 0, "callsite", "impl Tr for target::target"),  # method call
        (12, 0, "callsite", "impl Tr for target::target"),  # macro
        (13, 0, "callsite", "impl Tr for target::target"),  # path call
        (19, 0, "definition", "tests::target"),
    ],
)
def test_rust_categories(found: dict, line: int, nth: int, category: str, scope) -> None:
    hit = _at(found, "src/lib.rs", RS, line, nth)
    assert (hit["category"], hit["containing_scope"]) == (category, scope)


def test_python_symtable_flags_on_code_hits(found: dict) -> None:
    loop_var = _at(found, "pkg/mod.py", PY, 21)
    assert loop_var["symtable"]["assigned"] is True and loop_var["symtable"]["local"] is True
    comment = _at(found, "pkg/mod.py", PY, 16)
    assert comment["symtable"] is None


def test_literal_text_in_code_uses_the_node_tier(repo: Path) -> None:
    # -F: typed alone, a call is searched as the name it calls too (tests/test_call_typed_alone)
    run = run_cq(
        "search", "-F", "target(x)", "--root", str(repo), "--format", "json", "--limit", "0"
    )
    (hit,) = run.json()["findings"]
    assert hit["category"] == "callsite"
    plus = run_cq(
        "search",
        "+= 1",
        "--root",
        str(repo),
        "--lang",
        "python",
        "--format",
        "json",
        "--limit",
        "0",
    )
    (aug,) = plus.json()["findings"]
    assert aug["category"] == "assignment" and aug["tier"] == "node"


def test_broken_and_undecodable_files_never_crash(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "broken.py": "def target(:\n    return target\n",
            "latin.py": b"# caf\xe9\ntarget = 1\n",
            "deep.py": "x = " + "[" * 400 + "target" + "]" * 400 + "\n",
        },
    )
    found = _by_position(tmp_path)
    assert found[("latin.py", 2, 0)]["category"] == "assignment"
    assert found[("broken.py", 2, 11)]["category"] in ("reference", "text_match")
    assert ("deep.py", 1, 404) in found


def test_repeat_search_hits_the_cache_and_parses_nothing(repo: Path) -> None:
    first = run_cq("search", "target", "--root", str(repo), "--format", "json")
    second = run_cq("search", "target", "--root", str(repo), "--format", "json")
    c1, c2 = first.json()["run"]["counters"], second.json()["run"]["counters"]
    assert c1.get("files_parsed", 0) >= 1
    assert c2.get("files_parsed", 0) == 0 and c2["cache_hits"] == 2
    assert _verdicts(first) == _verdicts(second)
    uncached = run_cq("search", "target", "--root", str(repo), "--format", "json", "--no-cache")
    assert uncached.json()["run"]["counters"]["files_parsed"] == 2


def test_corrupt_cache_entries_are_rebuilt(repo: Path, _isolated_cache: Path) -> None:
    good = run_cq("search", "target", "--root", str(repo), "--format", "json")
    db = sqlite3.connect(_isolated_cache / FILE_NAME)
    db.execute("UPDATE entries SET value = x'c1ff00'")
    db.commit()
    db.close()
    again = run_cq("search", "target", "--root", str(repo), "--format", "json")
    assert _verdicts(again) == _verdicts(good)
    counters = again.json()["run"]["counters"]
    # Both files' verdicts and records are unreadable: each file parsed again.
    assert counters["cache_corrupt"] == 4 and counters["files_parsed"] == 2
    (_isolated_cache / FILE_NAME).write_bytes(b"this is not a database")
    for suffix in ("-wal", "-shm"):
        (_isolated_cache / f"{FILE_NAME}{suffix}").unlink(missing_ok=True)
    third = run_cq("search", "target", "--root", str(repo), "--format", "json")
    assert third.returncode == 0 and _verdicts(third) == _verdicts(good)


def test_cache_info_and_clear(repo: Path, _isolated_cache: Path) -> None:
    run_cq("search", "target", "--root", str(repo))
    info = run_cq("cache", "info")
    assert info.returncode == 0 and "records-python-" in info.stdout
    cleared = run_cq("cache", "clear")
    assert cleared.returncode == 0 and not (_isolated_cache / FILE_NAME).exists()


# A pool's worth of files (with ``CQ_POOL_MIN_BYTES`` at 1000): each worker gets several.
_MANY, _FUNCTIONS = 12, 30


def _many_files(root: Path) -> Path:
    body = "".join(f"def f{i}(target):\n    return target({i})\n" for i in range(_FUNCTIONS))
    return write_tree(root, {f"m{i:02d}.py": body for i in range(_MANY)})


def test_pool_results_equal_in_process_results(tmp_path: Path) -> None:
    root = _many_files(tmp_path)
    pooled = run_cq(
        "search",
        "target",
        "--root",
        str(root),
        "--format",
        "json",
        "--limit",
        "0",
        "--no-cache",
        env={"CQ_POOL_MIN_BYTES": "1000"},
    )
    serial = run_cq(
        "search", "target", "--root", str(root), "--format", "json", "--limit", "0", "--no-cache"
    )
    assert pooled.json()["run"]["counters"]["pool_workers"] >= 2
    assert "pool_workers" not in serial.json()["run"]["counters"]
    assert _verdicts(pooled) == _verdicts(serial)


def test_a_dead_worker_still_gives_complete_results(tmp_path: Path) -> None:
    root = _many_files(tmp_path)
    serial = run_cq(
        "search", "target", "--root", str(root), "--format", "json", "--limit", "0", "--no-cache"
    )
    killed = run_hooked(
        "dead-worker",
        "search",
        "target",
        "--root",
        str(root),
        "--format",
        "json",
        "--limit",
        "0",
        "--no-cache",
        env={"CQ_POOL_MIN_BYTES": "1000"},
    )
    assert killed.returncode == 0, killed.stderr
    assert killed.json()["run"]["counters"]["pool_failures"] == 1
    assert _verdicts(killed) == _verdicts(serial)
    assert len(serial.json()["findings"]) == _MANY * _FUNCTIONS * 2


def test_python_type_alias_statement_defines_its_name(tmp_path: Path) -> None:
    write_tree(
        tmp_path, {"types.py": "type target = int\ntype target[T] = list[T]\nx: target = 1\n"}
    )
    found = _by_position(tmp_path)
    assert found[("types.py", 1, 5)]["category"] == "definition"
    assert found[("types.py", 2, 5)]["category"] == "definition"
    assert found[("types.py", 3, 3)]["category"] == "annotation"


def test_the_pool_is_weighed_by_the_bytes_a_search_parses(tmp_path: Path) -> None:
    """Files over the pool's threshold whose hits sit in one small function each are parsed
    as slices far under it: no workers to start. Hits all over the same files: a pool."""
    filler = "".join(f"def filler_{i}(a, b):\n    return a + b * {i}\n\n\n" for i in range(130))
    body = filler + "def lookup():\n    return target(1)\n\n\n" + filler
    root = write_tree(tmp_path, {f"m{i:02d}.py": f"# {i}\n{body}" for i in range(20)})
    # the 20 files hold 0.23 MB; "return" hits each over 256 times: too many to slice
    env = {"CQ_POOL_MIN_BYTES": "100000"}

    def counters(query: str) -> dict[str, int]:
        run = run_cq(
            "search", query, "--root", str(root), "--format", "json", "--no-cache", env=env
        )
        assert run.returncode == 0, run.stderr
        return run.json()["run"]["counters"]

    sliced = counters("target")
    assert sliced["files_sliced"] == 20 and "pool_workers" not in sliced
    whole = counters("return")
    assert "files_sliced" not in whole and whole["pool_workers"] >= 2


def test_text_in_a_function_body_is_not_its_definition(tmp_path: Path) -> None:
    """A ``?`` or ``x * 2`` in a body walked out to the function around it and was reported
    as its definition (and became the Answer); the header's text still is the definition."""
    write_tree(
        tmp_path,
        {
            "calc.py": "def double(x, scale):\n    y = 1\n    return x * 2\n",
            "src/lib.rs": "fn read() -> Result<u8, E> {\n    skip()?;\n    Ok(1)\n}\n",
        },
    )

    def categories(query: str) -> list[str]:
        args = ("search", query, "--root", str(tmp_path), "--format", "json", "--literal")
        return [f["category"] for f in run_cq(*args).json()["findings"]]

    assert categories("x * 2") == ["text_match"]
    assert categories("?") == ["text_match"]
    assert categories("(x, scale)") == ["definition"]
    assert categories("<u8, E>") != ["definition"]  # a return type is the annotation's
