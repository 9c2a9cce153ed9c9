"""The report as users get it: real cq subprocesses on fixture repositories."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from conftest import run_cq, write_tree

# what the report says, not how cq starts (forked_cli.py); one read-only tree, its cache warm
pytestmark = [pytest.mark.cli_forked, pytest.mark.shared_cache]

TRICKY = '''\
def register(
    items: list[int],  # `register` [...]
) -> "dict[str, <T>]":
    """Register ``items`` [...] and return `them`."""
    table = {"```": "[...]", "<a href>": "`register`"}  \t
\treturn register(items) if items else table  # `register` [...] <done>
'''


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    files: dict[str, str] = {"pkg/tricky.py": TRICKY}
    for i in range(40):
        files[f"pkg/mod{i:02}.py"] = (
            "from pkg.tricky import register\n\n\n"
            f"def use_{i}(x):\n    return register([x, {i}])\n\n\n"
            f"class Holder{i}:\n    def go(self):\n        register([])  # register again\n"
        )
    files["tests/test_tricky.py"] = "from pkg.tricky import register\n\nregister([1])\n"
    return write_tree(root, files)


def _fences(markdown: str) -> list[list[str]]:
    """Contents of every fenced block (fences of 3+ backticks, matched by length)."""
    blocks, current, fence = [], None, None
    for line in markdown.split("\n"):
        if current is None:
            m = re.match(r"^(`{3,})\w*$", line)
            if m:
                current, fence = [], m.group(1)
        elif line == fence:
            blocks.append(current)
            current = None
        else:
            current.append(line)
    assert current is None, "unclosed fence"
    return blocks


def test_default_report_is_small_and_starts_with_the_answer(repo: Path) -> None:
    run = run_cq("search", "register", "--root", str(repo))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) <= 150
    assert lines[0].startswith("# cq search")
    assert lines[2].startswith("**Answer:**") and "`pkg/tricky.py:1:4`" in lines[2]
    assert re.search(r"`[\w/.]+:\d+:\d+`", run.stdout)  # paths as file:line:col


def test_snippets_are_byte_exact(repo: Path) -> None:
    source_lines = set(TRICKY.split("\n"))
    run = run_cq("search", "register", "--root", str(repo), "--include", "tricky.py")
    blocks = _fences(run.stdout)
    assert blocks
    snippet_lines = [line for block in blocks for line in block]
    tricky = [line for line in snippet_lines if "[...]" in line or "<T>" in line]
    assert len(tricky) >= 3
    for line in snippet_lines:
        assert line in source_lines, repr(line)
    assert blocks[0][0] == "def register(" and "<T>" in blocks[0][-1]  # the answer's header


def test_limit_and_token_budget_drop_lowest_ranked_whole_findings(repo: Path) -> None:
    full = run_cq("search", "register", "--root", str(repo), "--format", "json", "--limit", "0")
    everything = [(f["file"], f["line"], f["col"]) for f in full.json()["findings"]]
    budget = 600
    md = run_cq("search", "register", "--root", str(repo), "--max-tokens", str(budget))
    assert md.returncode == 0
    assert len(md.stdout) / 4 <= budget
    assert "dropped to fit --max-tokens 600" in md.stdout
    js = run_cq(
        "search", "register", "--root", str(repo), "--format", "json", "--max-tokens", "2500"
    )
    data = js.json()
    assert len(js.stdout) / 4 <= 2500
    kept = [(f["file"], f["line"], f["col"]) for f in data["findings"]]
    assert kept == everything[: len(kept)]  # a prefix: relative order never changes
    omitted = data["summary"]["omitted"]
    assert omitted["by_budget"] > 0
    assert omitted["by_limit"] + omitted["by_budget"] + len(kept) == len(everything)
    limited = run_cq("search", "register", "--root", str(repo), "--format", "json", "--limit", "7")
    assert [(f["file"], f["line"], f["col"]) for f in limited.json()["findings"]] == everything[:7]


def _minimum(stderr: str) -> int:
    """The minimum budget a refusal names (its one line says "at least N")."""
    (line,) = stderr.splitlines()
    assert line.startswith("cq: ") and "Traceback" not in stderr
    return int(re.search(r"at least (\d+)", line).group(1))


def test_the_answer_is_the_floor_of_every_budget(repo: Path) -> None:
    """A small budget keeps the header and the Answer (never "No findings" when there are
    some); one below them is refused with the minimum, which then works."""
    search = ("search", "register", "--root", str(repo))
    refused = run_cq(*search, "--max-tokens", "20")
    assert refused.returncode == 2 and refused.stdout == ""
    need = _minimum(refused.stderr)
    assert need > 20
    for budget in (need, need + 40, 150):
        md = run_cq(*search, "--max-tokens", str(budget))
        assert md.returncode == 0, md.stderr
        assert len(md.stdout) / 4 <= budget
        lines = md.stdout.splitlines()
        assert lines[0] == "# cq search `register`"
        assert lines[2].startswith("**Answer:** `register`") and "pkg/tricky.py:1:4" in lines[2]
        assert "No findings" not in md.stdout
    assert run_cq(*search, "--max-tokens", str(need - 1)).returncode == 2
    js = run_cq(*search, "--max-tokens", "60", "--format", "json")
    assert js.returncode == 2 and js.stdout == ""
    need = _minimum(js.stderr)
    fitted = run_cq(*search, "--max-tokens", str(need), "--format", "json")
    assert fitted.returncode == 0 and len(fitted.stdout) / 4 <= need
    summary, findings = fitted.json()["summary"], fitted.json()["findings"]
    assert summary["primary"] is not None and summary["shown_findings"] >= 1
    assert findings[summary["primary"]]["file"] == "pkg/tricky.py"
    assert summary["omitted"]["by_budget"] > 0


@pytest.mark.parametrize("query", ["register", "how do we register the items in a table"])
def test_every_follow_up_runs(repo: Path, query: str) -> None:
    run = run_cq("search", query, "--root", str(repo), "--format", "json", "--limit", "5")
    sections = run.json()["sections"]
    follow = [f for s in sections if s["type"] == "follow_ups" for f in s["follow_ups"]]
    assert follow
    markdown = run_cq("search", query, "--root", str(repo), "--limit", "5").stdout
    for item in follow:
        argv = item["argv"]
        assert argv[1] == "search" and Path(argv[0]).name == "cq"  # this install's script
        assert shlex.split(item["command"]) == argv
        assert item["command"] in markdown
        done = run_cq(*argv[1:], cwd=Path("/"))
        assert done.returncode in (0, 1), (item["command"], done.stderr)


def test_identical_runs_differ_only_in_the_run_line(repo: Path) -> None:
    # With the defaults no clock shapes a report (enrichment has no deadline, Pyrefly's answers
    # come from the cache), whatever the machine's load: the stage is on here.
    env = {"CQ_SEMANTIC": "1"}
    args = ("search", "register", "--root", str(repo), "-v")
    first, second = run_cq(*args, env=env).stdout, run_cq(*args, env=env).stdout
    assert first.splitlines()[-1].startswith("run: ")
    assert first.splitlines()[:-1] == second.splitlines()[:-1]
    one = run_cq(*args, "--format", "json", env=env).json()
    two = run_cq(*args, "--format", "json", env=env).json()
    one.pop("run"), two.pop("run")
    assert one == two


def test_explain_shows_the_score_of_every_shown_finding(repo: Path) -> None:
    data = run_cq("search", "register", "--root", str(repo), "-v", "--format", "json").json()
    for f in data["findings"]:
        parts = f["explain"]
        product = 1.0
        for key in ("category_weight", "role_multiplier", "confidence", "focus_multiplier"):
            product *= parts[key]
        product *= parts["boosts"]
        assert f["score"] == pytest.approx(max(product - parts["depth_penalty"], 0), abs=1e-3)
    md = run_cq("search", "register", "--root", str(repo), "--explain", "--limit", "3").stdout
    assert md.count("score ") >= 3
    plain = run_cq("search", "register", "--root", str(repo), "--limit", "3").stdout
    assert "score " not in plain


def test_schema_describes_the_json_output(repo: Path) -> None:
    schema = run_cq("schema")
    assert schema.returncode == 0
    doc = json.loads(schema.stdout)
    data = run_cq("search", "register", "--root", str(repo), "--format", "json").json()
    result = doc["$defs"][doc["$ref"].split("/")[-1]]
    assert set(data) <= set(result["properties"])
    assert set(result["required"]) <= set(data)
    kinds = {s["type"] for s in data["sections"]}
    assert kinds <= set(json.dumps(doc).split('"')), kinds


def test_answer_names_a_rust_item_kind_in_words(tmp_path: Path) -> None:
    write_tree(tmp_path, {"src/lib.rs": "pub struct S {\n    pub(crate) width_px: u32,\n}\n"})
    run = run_cq("search", "width_px", "--root", str(tmp_path))
    assert "`pub(crate) width_px: u32` defined at `src/lib.rs:2:15`" in run.stdout
    assert "\nfield\n" in run.stdout  # its visibility is on the line fenced above it


def test_a_multi_line_signature_is_one_line_in_lists(repo: Path) -> None:
    run = run_cq("search", "register", "--root", str(repo), "--no-semantic")  # no ref count
    assert run.returncode == 0, run.stderr
    listed = [
        line for line in run.stdout.split("\n") if line.startswith("- `pkg/tricky.py:1:4` — ")
    ]
    assert listed == [
        '- `pkg/tricky.py:1:4` — `def register(items: list[int]) -> "dict[str, <T>]":`'
    ]


def test_a_rust_signature_over_lines_is_one_line_in_lists(tmp_path: Path) -> None:
    source = (
        "pub fn build<T>(\n    width: u32, // pixels\n    tag: T,\n) -> Grid<T>\n"
        "where\n    T: Clone,\n{\n    todo!()\n}\n"
    )
    write_tree(tmp_path, {"src/lib.rs": source, "src/use.rs": "fn f() { build(1, 2); }\n"})
    # one finding shown of two: the lists are printed (a report showing all its findings
    # in Top Contexts leaves them out)
    run = run_cq("search", "build", "--root", str(tmp_path), "--limit", "1")
    listed = [line for line in run.stdout.split("\n") if line.startswith("- `src/lib.rs:1:7` — ")]
    assert listed == [
        "- `src/lib.rs:1:7` — `pub fn build<T>(width: u32, tag: T) -> Grid<T> where T: Clone`"
    ]


BUFFER_RS = """pub struct Buffer {
    bytes: Vec<u8>,
}

impl Buffer {
    pub fn flush_buffer(&mut self) -> usize {
        let n = self.bytes.len();
        self.bytes.clear();
        n
    }

    pub fn flush_buffered_bytes(&mut self) -> usize {
        self.flush_buffer()
    }
}

pub fn buffer_flush_policy() -> usize {
    0
}
"""
WRITER_RS = """use crate::buffer::Buffer;

pub fn write_all(buffer: &mut Buffer) -> usize {
    buffer.flush_buffer()
}
"""


def buffer_crate(root: Path, **more: str) -> Path:
    """A crate whose ``flush_buffer`` is called twice (once from another file); ``more``:
    further modules by name."""
    mods = ["buffer", "writer", *more]
    files = {"src/lib.rs": "".join(f"pub mod {m};\n" for m in sorted(mods))}
    files |= {"src/buffer.rs": BUFFER_RS, "src/writer.rs": WRITER_RS}
    files |= {f"src/{m}.rs": text for m, text in more.items()}
    return write_tree(root, files)


def answer_of(*argv: str) -> str:
    """The Answer block of a markdown report (``cq`` run with ``argv``)."""
    return run_cq(*argv).stdout.split("\n\n")[1]


def test_a_rust_callers_question_is_answered_by_the_calls_of_that_name(tmp_path: Path) -> None:
    """No Pyrefly for Rust: the calls named like the asked-about function are shown (they
    score like its definition, ahead of the rewrite's other names) and answer it."""
    buffer_crate(tmp_path)
    answer = answer_of("search", "who calls flush_buffer", "--root", str(tmp_path), "--limit", "3")
    assert answer.startswith(
        "**Answer:** 2 shown callsites of `flush_buffer` (defined at `src/buffer.rs:6:11`), "
        "matched by name, not resolved:"
    ), answer
    assert "- `src/buffer.rs:13:13` in `impl Buffer::flush_buffered_bytes`" in answer
    assert "- `src/writer.rs:4:11` in `write_all`" in answer


def test_a_callers_question_searches_the_named_function_alone(tmp_path: Path) -> None:
    """ "who calls flush_buffer" names what it asks about: it is searched as that name, not
    rewritten into the names its words map onto (``flush_buffered_bytes``,
    ``buffer_flush_policy``, ``Buffer``), nor are the index's files about flushing and
    buffers searched, so the report holds its calls."""
    buffer_crate(tmp_path)
    run = run_cq("search", "who calls flush_buffer", "--root", str(tmp_path), "--format", "json")
    data = run.json()
    assert data["summary"]["asked_name"] == "flush_buffer" and data["summary"]["rewrite"] is None
    assert {f["text"] for f in data["findings"]} == {"flush_buffer"}
    assert "index" not in data["summary"]["telemetry"]  # not consulted
    calls = [(f["file"], f["line"]) for f in data["findings"] if f["category"] == "callsite"]
    assert sorted(calls) == [("src/buffer.rs", 13), ("src/writer.rs", 4)]
    # its owner written with it is kept: the method of that owner, its calls still found
    dotted = ("search", "who calls Buffer::flush_buffer?", "--root", str(tmp_path))
    owned = run_cq(*dotted, "--format", "json").json()
    assert owned["summary"]["asked_name"] == "Buffer::flush_buffer"
    calls = [(f["file"], f["line"]) for f in owned["findings"] if f["category"] == "callsite"]
    assert sorted(calls) == [("src/buffer.rs", 13), ("src/writer.rs", 4)]


def test_a_question_with_nothing_to_look_for_finds_nothing(tmp_path: Path) -> None:
    """ "who calls?" names no function and has no word to look for: no guess from the index
    ("calls" in some docstring) is made its Answer."""
    notes = "/// Defined once: it calls nothing and is called from the defined callers.\n"
    buffer_crate(tmp_path, notes=notes + "pub fn noop() {}\n")
    for question in ("who calls?", "where is it defined?"):
        run = run_cq("search", question, "--root", str(tmp_path))
        assert run.returncode == 1, (question, run.stdout)
        assert run.stdout.splitlines()[2] == f"No findings for `{question}`."


def test_a_callers_question_without_calls_says_so(tmp_path: Path) -> None:
    write_tree(tmp_path, {"app/loader.py": "def count_lines(path):\n    return 0\n"})
    answer = answer_of("search", "who calls count_lines", "--root", str(tmp_path))
    assert answer.startswith(
        "**Answer:** no callsite of `count_lines` among the shown findings (it may be called "
        "through a trait or a callback, or from outside the tree); `count_lines`"
    ), answer
    assert "defined at `app/loader.py:1:4` (src)" in answer


def test_where_is_it_called_after_a_follow_up_lists_the_calls_of_that_function(
    tmp_path: Path,
) -> None:
    buffer_crate(tmp_path)
    first = run_cq("search", "flush_buffer", "--root", str(tmp_path), "--follow-up")
    assert first.returncode == 0, first.stderr
    argv = ("search", "where is it called?", "--root", str(tmp_path), "--follow-up")
    data = run_cq(*argv, "--format", "json").json()
    assert data["summary"]["subject"] == "flush_buffer"  # "where is `flush_buffer` called?"
    answer = answer_of(*argv)
    assert answer.startswith("**Answer:** 2 shown callsites of `flush_buffer`"), answer


def test_calls_of_a_name_several_functions_have_are_not_tied_to_one_of_them(
    tmp_path: Path,
) -> None:
    """Without resolution, a call named like two definitions may reach either: the Answer
    counts the calls by name and says how many definitions share it."""
    other = (
        "pub struct Pipe;\n\nimpl Pipe {\n"
        "    pub fn flush_buffer(&mut self) -> usize {\n        0\n    }\n}\n"
    )
    buffer_crate(tmp_path, pipe=other)
    answer = answer_of("search", "who calls flush_buffer", "--root", str(tmp_path))
    assert answer.startswith(
        "**Answer:** 2 shown callsites named `flush_buffer`, not resolved: 2 shown definitions "
        "have that name (the best-ranked at `src/"
    ), answer


def test_a_rust_answer_does_not_repeat_the_words_its_line_prints(tmp_path: Path) -> None:
    """``pub struct Buffer {`` is fenced under the Answer: a line saying ``pub struct``
    again tells nothing; a trait the item implements, which its line does not say, is told."""
    buffer_crate(
        tmp_path,
        show="use std::fmt;\n\nimpl fmt::Display for crate::buffer::Buffer {\n"
        "    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n"
        '        write!(f, "buffer")\n    }\n}\n',
    )
    answer = answer_of("search", "Buffer", "--root", str(tmp_path), "--no-semantic")
    assert answer.splitlines()[:4] == [
        "**Answer:** `Buffer` — `pub struct Buffer` defined at `src/buffer.rs:1:11` (src)",
        "```rust",
        "pub struct Buffer {",
        "```",
    ], answer
    assert "pub struct" not in answer.splitlines()[4:], answer
    answer = answer_of("search", "flush_buffer", "--root", str(tmp_path), "--no-semantic")
    assert "function" not in answer.splitlines()[4:], answer  # its line says `pub fn`
    answer = answer_of("search", "fmt", "--root", str(tmp_path), "--no-semantic")
    assert "impl fmt::Display" in answer.splitlines()[-1], answer
