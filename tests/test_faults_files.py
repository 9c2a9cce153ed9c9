"""Files that used to give wrong answers: byte order marks, old Mac line ends, long lines,
bytes that are not UTF-8, unreadable files, and profiles with values that find nothing.

Each test compares a hostile file with a plain twin holding the same code, or checks the
report against the file itself; all run the real CLI over real files.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

PY = """import os


class Registry:
    def register(self, item):
        return item


def register(x):
    '''Doc.'''
    return Registry().register(x)


value = register(1)
"""
RS = """use std::fmt;

pub struct Registry;

impl Registry {
    pub fn register(&self, x: u8) -> u8 {
        x
    }
}

fn main() {
    let r = Registry;
    r.register(1);
}
"""
_PLACE = ("line", "col", "end_col", "text", "line_text", "category", "containing_scope")


def _json(root: Path, *args: str) -> dict:
    run = run_cq("search", *args, "--root", str(root), "--format", "json", "--limit", "0")
    assert run.returncode == 0, run.stderr
    return run.json()


def _placed(data: dict, file: str) -> list[tuple]:
    return sorted(tuple(f[k] for k in _PLACE) for f in data["findings"] if f["file"] == file)


def _signatures(data: dict, file: str) -> list[str | None]:
    return sorted(
        str((f["enrichment"] or {}).get("signature")) for f in data["findings"] if f["file"] == file
    )


@pytest.mark.parametrize(
    ("name", "code", "encode"),
    [
        ("utf8_bom", PY, lambda t: b"\xef\xbb\xbf" + t.encode()),
        ("cr_only", PY, lambda t: t.replace("\n", "\r").encode()),
        ("crlf", PY, lambda t: t.replace("\n", "\r\n").encode()),
        ("bom_and_cr", PY, lambda t: b"\xef\xbb\xbf" + t.replace("\n", "\r").encode()),
        ("rust_bom", RS, lambda t: b"\xef\xbb\xbf" + t.encode()),
        ("rust_cr_only", RS, lambda t: t.replace("\n", "\r").encode()),
    ],
)
def test_hostile_encoding_reports_like_its_plain_twin(
    tmp_path: Path, name: str, code: str, encode
) -> None:
    ext = "py" if code is PY else "rs"
    write_tree(tmp_path, {f"plain.{ext}": code, f"odd.{ext}": encode(code)})
    data = _json(tmp_path, "register")
    plain, odd = _placed(data, f"plain.{ext}"), _placed(data, f"odd.{ext}")
    assert plain and odd == plain
    assert _signatures(data, f"odd.{ext}") == _signatures(data, f"plain.{ext}")
    categories = {f[5] for f in odd}
    assert "definition" in categories and "callsite" in categories


def test_bom_definition_is_a_definition_at_the_editor_column(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": b"\xef\xbb\xbfdef register(x):\n    return x\n"})
    (hit,) = _json(tmp_path, "register")["findings"]
    assert (hit["line"], hit["col"], hit["category"]) == (1, 4, "definition")
    assert hit["line_text"] == "def register(x):"


def test_lone_cr_line_numbers_follow_python(tmp_path: Path) -> None:
    """A file mixing LF with lone CRs: lines numbered as Python's own parser numbers them."""
    source = b"import os\nx = 1\rdef register():\r    pass\ny = register()\n"
    write_tree(tmp_path, {"mixed.py": source})
    found = {(f["line"], f["category"]) for f in _json(tmp_path, "register")["findings"]}
    tree = ast.parse(source)
    definition = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call))
    assert found == {(definition.lineno, "definition"), (call.lineno, "callsite")}


def test_utf16_file_reads_as_rg_transcodes_it(tmp_path: Path) -> None:
    wide = write_tree(tmp_path / "wide", {"m.py": ("\ufeff" + PY).encode("utf-16-le")})
    plain = write_tree(tmp_path / "plain", {"m.py": PY})
    assert _placed(_json(wide, "register"), "m.py") == _placed(_json(plain, "register"), "m.py")


def test_long_line_is_a_window_that_says_so(tmp_path: Path) -> None:
    long_line = "x = [" + ", ".join(["1"] * 900) + ", register(2)]"
    write_tree(tmp_path, {"gen.py": long_line + "\nregister(3)\n"})
    data = _json(tmp_path, "register")
    by_line = {f["line"]: f for f in data["findings"]}
    short, long = by_line[2], by_line[1]
    assert "line_window" not in short
    assert short["line_text"][short["col"] : short["end_col"]] == "register"
    window = long["line_window"]
    assert window["length"] == len(long_line)
    assert long_line[long["col"] : long["end_col"]] == "register"
    assert long_line[window["start"] : window["end"]] == long["line_text"]
    offset = window["start"]
    assert long["line_text"][long["col"] - offset : long["end_col"] - offset] == "register"
    assert long["category"] == "callsite"
    md = run_cq("search", "register", "--root", str(tmp_path)).stdout
    assert "… 1, 1" in md and "register(2)]" in md


@pytest.mark.parametrize(
    ("content", "query"),
    [
        (b"s = '\xe2\x82\xac'\n", r"(?-u:\xe2)"),  # a match inside one character
        (b"s = '\xe2\x82A'\n", r"(?-u:\x82)A"),  # inside an invalid sequence
        (b"s = '\xff\xfeabc'\n", r"(?-u:\xfe)abc"),
        (b"caf\xe9 = register\n", "register"),
    ],
)
def test_columns_hold_for_any_bytes(tmp_path: Path, content: bytes, query: str) -> None:
    write_tree(tmp_path, {"bytes.py": content})
    args = ("--regex",) if query != "register" else ()
    data = _json(tmp_path, query, *args)
    assert data["findings"]
    for f in data["findings"]:
        assert f["line_text"][f["col"] : f["end_col"]] == f["text"]


@pytest.fixture
def unprivileged() -> Iterator[tuple[Path, dict[str, str], list[str]]]:
    """A world-readable tree, a cache dir anyone may write, and the argv prefix that runs
    cq as a user file permissions apply to (root reads everything)."""
    tree = Path(tempfile.mkdtemp(prefix="cq-unreadable-"))
    cache = Path(tempfile.mkdtemp(prefix="cq-cache-"))
    tree.chmod(0o755)
    cache.chmod(0o777)
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        prefix = [setpriv or "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        probe = [*prefix, sys.executable, "-c", "import cq"]
        if setpriv is None or subprocess.run(probe, cwd=tree, check=False).returncode != 0:
            # (test_a_path_too_long_to_open_is_a_warning covers the same as any user)
            pytest.skip("root, and user nobody cannot run cq here: no file can be unreadable")
    try:
        yield tree, {**os.environ, "CQ_CACHE_DIR": str(cache)}, prefix
    finally:
        shutil.rmtree(tree, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)


def _as(prefix: list[str], env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, sys.executable, "-m", "cq", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_an_unreadable_file_is_a_warning_not_a_failure(unprivileged) -> None:
    tree, env, prefix = unprivileged
    write_tree(tree, {"ok.py": "def register():\n    pass\n", "locked.py": "register = 1\n"})
    for path in tree.iterdir():
        path.chmod(0o644)
    (tree / "locked.py").chmod(0)
    none = _as(prefix, env, "search", "zzz_absent", "--root", str(tree), "--no-rewrite")
    assert none.returncode == 1, none.stderr
    assert "**Not found:**" in none.stdout
    assert none.stderr.splitlines() == [
        "cq: warning: locked.py: Permission denied (os error 13) (skipped)"
    ]
    some = _as(prefix, env, "search", "register", "--root", str(tree), "--format", "json")
    assert some.returncode == 0, some.stderr
    assert [f["file"] for f in json.loads(some.stdout)["findings"]] == ["ok.py"]
    assert "locked.py" in some.stderr and "Traceback" not in some.stderr


def test_a_path_too_long_to_open_is_a_warning(tmp_path: Path) -> None:
    """A file no one can open, root included: its path is longer than PATH_MAX."""
    write_tree(tmp_path, {"ok.py": "def register():\n    pass\n"})
    folder = os.open(tmp_path, os.O_RDONLY)
    for level in range(18):  # 18 x 241 bytes > 4096
        name = f"d{level:02d}" + "x" * 238
        os.mkdir(name, dir_fd=folder)
        inner = os.open(name, os.O_RDONLY, dir_fd=folder)
        os.close(folder)
        folder = inner
    deep = os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder)
    os.write(deep, b"register = 1\n")
    os.close(deep)
    os.close(folder)
    none = run_cq("search", "zzz_absent", "--root", str(tmp_path), "--no-rewrite")
    assert none.returncode == 1 and "**Not found:**" in none.stdout
    (warning,) = none.stderr.splitlines()
    assert warning.startswith("cq: warning: d00x") and warning.endswith("(skipped)")
    assert "File name too long" in warning or "Filename too long" in warning
    some = run_cq("search", "register", "--root", str(tmp_path), "--format", "json")
    assert some.returncode == 0 and [f["file"] for f in some.json()["findings"]] == ["ok.py"]


def test_a_glob_rg_refuses_still_fails(tmp_path: Path) -> None:
    """rg refuses the glob before it searches anything: the search fails with one line and
    exit 2, never an empty report (the words: tests/test_rg_globs.py)."""
    write_tree(tmp_path, {"a.py": "x = 1\n"})
    run = run_cq("search", "x", "--root", str(tmp_path), "--include", "{a")
    assert run.returncode == 2 and not run.stdout
    assert run.stderr.startswith("cq: invalid glob '{a'") and len(run.stderr.splitlines()) == 1


def test_nul_in_the_query_is_a_clean_error(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "x = 1\n"})
    run = run_cq("search", "-", "--root", str(tmp_path), stdin="a\0b")
    assert run.returncode == 2
    assert run.stderr.startswith("cq: ") and "NUL" in run.stderr
    assert len(run.stderr.splitlines()) == 1


@pytest.mark.parametrize("query", [b"caf\xe9", b"how is register\n\xff called"])
def test_undecodable_query_bytes_are_a_clean_error(tmp_path: Path, query: bytes) -> None:
    write_tree(tmp_path, {"a.py": "register = 1\n"})
    argv = [os.fsencode(sys.executable), b"-m", b"cq", b"search", query, b"--root"]
    run = subprocess.run([*argv, os.fsencode(tmp_path)], capture_output=True, check=False)
    assert run.returncode == 2 and run.stderr == b"cq: the query is not valid UTF-8\n"


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("max_files = -5", "max_files"),
        ("max_files = 0", "max_files"),
        ("max_total_matches = 2.5", "max_total_matches"),
        ('max_depth = "deep"', "max_depth"),
        ("max_matches_per_file = true", "max_matches_per_file"),
        ("max_file_size_bytes = -1", "max_file_size_bytes"),
        ("timeout_seconds = 0", "timeout_seconds"),
        ("timeout_seconds = inf", "timeout_seconds"),
        ("timeout_seconds = nan", "timeout_seconds"),
        ("max_fles = 10", "max_fles"),
        ("[rank]\nout_of_focus = -0.5", "rank.out_of_focus"),
        ("[rank]\nexact_definition = inf", "rank.exact_definition"),
        ("[rank.category]\ndefinitoin = 2.0", "rank.category.definitoin"),
        ("[rank.role]\nsrc = -1.0", "rank.role.src"),
        ("[rank]\nspeed = 1", "rank.speed"),
        ("rank = 3", "rank"),
    ],
)
def test_profile_values_that_would_find_nothing_are_refused(
    tmp_path: Path, toml: str, key: str
) -> None:
    write_tree(tmp_path, {"a.py": "register = 1\n", "p.toml": toml + "\n"})
    run = run_cq(
        "search", "register", "--root", str(tmp_path), "--profile", str(tmp_path / "p.toml")
    )
    assert run.returncode == 2 and run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"cq: profile {tmp_path / 'p.toml'}: {key}: "), line


def test_a_valid_profile_with_rank_weights_still_searches(tmp_path: Path) -> None:
    profile = (
        "max_files = 10\ntimeout_seconds = 5\n[rank]\nout_of_focus = 0\n[rank.role]\ntest = 0.2\n"
    )
    write_tree(tmp_path, {"a.py": "register = 1\n", "p.toml": profile})
    run = run_cq(
        "search", "register", "--root", str(tmp_path), "--profile", str(tmp_path / "p.toml")
    )
    assert run.returncode == 0, run.stderr


def test_sliced_parse_of_bom_and_cr_files_matches_the_plain_file(tmp_path: Path) -> None:
    """Big files with a hit in one member are parsed as slices: the slice scanner and the
    stand-in class header see the same bytes as for the plain file."""
    members = "".join(
        f"class C{i}:\n    '''doc'''\n    def m{i}(self, x):\n        return x + {i}\n\n"
        for i in range(200)
    )
    code = f"import os\n\n{members}class Reg:\n    def register(self):\n        return register()\n"
    write_tree(
        tmp_path,
        {
            "plain.py": code,
            "bom.py": b"\xef\xbb\xbf" + code.encode(),
            "cr.py": code.replace("\n", "\r").encode(),
        },
    )
    data = _json(tmp_path, "register", "--no-cache")
    assert data["run"]["counters"]["files_sliced"] == 3
    plain = _placed(data, "plain.py")
    assert [f[5:] for f in plain] == [("definition", "Reg.register"), ("callsite", "Reg.register")]
    assert _placed(data, "bom.py") == plain and _placed(data, "cr.py") == plain
