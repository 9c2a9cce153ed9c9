"""The offline rewriter: no server, the repository's own vocabulary, the text's own mentions."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree
from rewrite_fixture import graph_repo

from cq.model import SearchRequest, SearchResult
from cq.pipeline import run_search
from cq.rewrite.extract import extract_mentions
from cq.rewrite.offline import offline_rewrite
from cq.rewrite.vocabulary import load_vocabulary

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)


def search(root: Path, query: str, **kw: object) -> SearchResult:
    return run_search(SearchRequest(query=query, root=str(root), **kw))  # type: ignore[arg-type]


def top_scopes(result: SearchResult, n: int = 3) -> list[str]:
    seen: list[str] = []
    for f in result.findings:
        name = f.text if f.category == "definition" else (f.containing_scope or "")
        if name and name not in seen:
            seen.append(name)
    return seen[:n]


@pytest.mark.parametrize(
    ("question", "implementation"),
    [
        ("how are edges inserted into the graph?", "insert_edge"),
        ("how are spans converted to byte offsets", "span_to_byte_offset"),
        ("where are nodes removed from the graph?", "remove_node"),
        ("where does the settings file get read", "load_config"),
    ],
)
def test_a_question_finds_the_implementing_function(
    tmp_path: Path, question: str, implementation: str
) -> None:
    result = search(graph_repo(tmp_path), question)
    rw = result.summary.rewrite
    assert rw is not None and rw.rewriter == "offline" and rw.trigger == "heuristic"
    assert "unreachable" in (rw.fallback_reason or "")  # conftest points CQ_LLM_URL nowhere
    assert implementation in top_scopes(result)


def test_without_rewriting_the_question_finds_nothing(tmp_path: Path) -> None:
    root = graph_repo(tmp_path)
    run = run_cq(
        "search",
        "how are spans converted to byte offsets",
        "--root",
        str(root),
        "--no-rewrite",
        "--format",
        "json",
    )
    assert run.returncode == 1 and run.json()["findings"] == []
    forced = run_cq("search", "spans offsets", "--root", str(root), "--rewrite", "--format", "json")
    data = forced.json()
    assert data["summary"]["rewrite"]["trigger"] == "forced"
    assert data["findings"][0]["text"] == "span_to_byte_offset"


def test_zero_results_fall_back_to_a_rewrite(tmp_path: Path) -> None:
    result = search(graph_repo(tmp_path), "spans offsets")  # two words: not rewritten up front
    rw = result.summary.rewrite
    assert rw is not None and rw.trigger == "zero_results"
    assert result.findings[0].text == "span_to_byte_offset"


def test_code_like_queries_are_searched_as_typed(tmp_path: Path) -> None:
    result = search(graph_repo(tmp_path), "insert_edge")
    assert result.summary.rewrite is None
    assert {f.text for f in result.findings} == {"insert_edge"}


ISSUE = """GraphStore forgets edges after a node is removed twice

Calling remove_node on a node that is already gone raises.

```
Traceback (most recent call last):
  File "/home/me/app.py", line 3, in <module>
    s.remove_node(1)
  File "/venv/lib/python3.11/site-packages/graphstore/store.py", line 15, in remove_node
    self.edges.pop(node, None)
KeyError: 1
```
"""


def test_an_issue_text_points_at_the_frames_file_and_function(tmp_path: Path) -> None:
    root = graph_repo(tmp_path)
    mentions = extract_mentions(ISSUE)
    assert mentions.frame_functions == ("remove_node",)
    plan = offline_rewrite(ISSUE, mentions, load_vocabulary(root))
    assert plan.path_hints.get("graphstore/store.py") == 1.0
    assert plan.focus == "implementation"
    run = run_cq("search", "-", "--root", str(root), "--format", "json", stdin=ISSUE)
    data = run.json()
    assert data["findings"][0]["file"] == "graphstore/store.py"
    assert "remove_node" in top_scopes(_decode(run.stdout))


def _decode(text: str) -> SearchResult:
    import msgspec

    return msgspec.json.decode(text.encode(), type=SearchResult)


def test_context_and_follow_up_resolve_it(tmp_path: Path) -> None:
    root = graph_repo(tmp_path)
    with_context = search(
        root, "where is it called?", context="We looked at GraphStore.insert_edge before."
    )
    # read as written: "where is `GraphStore.insert_edge` called?", the name the context gave
    assert with_context.summary.subject == "GraphStore.insert_edge"
    assert with_context.summary.rewrite is None
    assert any(f.category == "callsite" and f.text == "insert_edge" for f in with_context.findings)
    first = run_cq(
        "search",
        "how are spans converted to byte offsets",
        "--root",
        str(root),
        "--follow-up",
        "--format",
        "json",
    )
    assert first.json()["findings"][0]["text"] == "span_to_byte_offset"
    again = run_cq(
        "search", "where is it used?", "--root", str(root), "--follow-up", "--format", "json"
    ).json()
    assert again["summary"]["subject"] == "span_to_byte_offset"  # its uses, asked as written
    plain = run_cq("search", "where is it used?", "--root", str(root), "--format", "json").json()
    assert "span_to_byte_offset" not in (plain["summary"]["rewrite"] or {}).get("identifiers", [])


def test_follow_up_resolves_it_in_a_root_whose_name_is_not_utf8(tmp_path: Path) -> None:
    root = graph_repo(tmp_path / "graphs_\udce9")
    first = run_cq("search", "span_to_byte_offset", "--root", str(root), "--follow-up")
    assert first.returncode == 0, first.stderr
    again = run_cq(
        "search", "where is it used?", "--root", str(root), "--follow-up", "--format", "json"
    ).json()
    assert again["summary"]["subject"] == "span_to_byte_offset"


def test_vocabulary_is_cached_and_follows_edits(tmp_path: Path) -> None:
    root = graph_repo(tmp_path)
    assert load_vocabulary(root).defines("insert_edge")
    (root / "graphstore" / "extra.py").write_text("def merge_graphs(a, b):\n    return a\n")
    assert load_vocabulary(root).defines("merge_graphs")


def test_a_vocabulary_over_its_cap_keeps_the_first_files_by_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rg's threads write files in any order: a tree with more definitions than the cap
    keeps those of the files first by path, the same ones each run, and each name's files
    come once, sorted."""
    from cq.rewrite import vocabulary

    files = {
        f"pkg/m{i:02}.py": f"def shared():\n    pass\n\ndef only_{i:02}():\n    pass\n"
        for i in range(40)
    }
    root = write_tree(tmp_path / "many", files)
    monkeypatch.setattr(vocabulary, "_MAX_NAMES", 9)
    runs = [load_vocabulary(root, use_cache=False).names for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]
    assert runs[0] == {
        "only_00": ("pkg/m00.py",),
        "only_01": ("pkg/m01.py",),
        "only_02": ("pkg/m02.py",),
        "only_03": ("pkg/m03.py",),
        "shared": ("pkg/m00.py", "pkg/m01.py", "pkg/m02.py", "pkg/m03.py", "pkg/m04.py"),
    }


def test_rust_names_and_constants_are_vocabulary_and_steer_a_question(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "crate",
        {
            "src/lib.rs": "pub mod delim;\n",
            "src/delim.rs": (
                "pub const MAX_DEPTH: usize = 8;\n\n"
                "pub fn close_delimiter(depth: usize) -> bool {\n    depth < MAX_DEPTH\n}\n"
            ),
            "tools/limits.py": "LIMIT_BYTES = 10\n\ndef read_limit():\n    return LIMIT_BYTES\n",
        },
    )
    vocabulary = load_vocabulary(root)
    for name in ("close_delimiter", "MAX_DEPTH", "LIMIT_BYTES", "read_limit"):
        assert vocabulary.defines(name), name
    result = search(root, "why does the parser fail to close a delimiter?")
    rw = result.summary.rewrite
    assert rw is not None and "close_delimiter" in rw.identifiers
    assert result.findings and result.findings[0].file == "src/delim.rs"


def test_mentions_in_an_issue_text() -> None:
    text = (
        "Calling `pkg.util.do_thing()` breaks.\n\n```python\nfrom pkg.core import Engine\n"
        "Engine().run_all(fast=True)\n```\n\n```\nTraceback (most recent call last):\n"
        '  File "/x/site-packages/pkg/core.py", line 9, in run_all\n'
        '  File "/x/site-packages/pkg/steps.py", line 3, in _step\n'
        "ValueError: step 'a' failed: no handler registered for kind\n```\n"
    )
    m = extract_mentions(text)
    assert m.frame_functions == ("run_all", "_step")
    assert m.frame_paths[-1].endswith("pkg/steps.py")  # innermost last
    assert {"pkg/util.py", "pkg/core.py"} <= set(m.paths)
    assert {"Engine", "run_all"} <= set(m.code_names)
    assert "pkg.util.do_thing" in m.prose_names  # the reporter's own words
    assert "most" not in m.code_names and "recent" not in m.code_names
    assert m.messages == ("failed: no handler registered for kind",)  # after the value


def test_identical_rewritten_searches_give_identical_summaries(tmp_path: Path) -> None:
    root = graph_repo(tmp_path)
    runs = [
        run_cq("search", "-", "--root", str(root), "--format", "json", stdin=ISSUE).json()
        for _ in range(2)
    ]
    for data in runs:
        data.pop("run")
    assert runs[0] == runs[1] and runs[0]["summary"]["rewrite"]["rewriter"] == "offline"


def test_excluded_trees_do_not_steer_the_rewrite(tmp_path: Path) -> None:
    root = graph_repo(tmp_path)
    (root / "vendor").mkdir()
    (root / "vendor" / "other.py").write_text("def insert_edge_fast(a, b):\n    pass\n")
    assert load_vocabulary(root).defines("insert_edge_fast")
    assert not load_vocabulary(root, globs=("!vendor/**",)).defines("insert_edge_fast")
    result = search(root, "how are edges inserted fast?", exclude=("vendor/**",))
    rw = result.summary.rewrite
    assert rw is not None and "insert_edge_fast" not in rw.identifiers


WARNING_ISSUE = (
    "Spurious warning when describing a store\r\n\r\nRunning my script prints:\r\n```\r\n"
    "/home/me/venv/lib/python3.11/site-packages/graphstore/report.py:8: DeprecationWarning: "
    "the 'edges' mapping will become read-only\r\n"
    '    return ", ".join(f"{a}->{b}" for a, bs in store.edges.items() for b in bs)\r\n```\r\n'
)


def test_a_printed_warning_location_and_its_source_line_lead_to_the_function(
    tmp_path: Path,
) -> None:
    root = graph_repo(tmp_path)
    mentions = extract_mentions(WARNING_ISSUE)
    assert mentions.frame_paths == (
        "/home/me/venv/lib/python3.11/site-packages/graphstore/report.py",
    )
    assert mentions.messages == ("mapping will become read-only",)  # no stray \r
    plan = offline_rewrite(WARNING_ISSUE, mentions, load_vocabulary(root))
    assert plan.path_hints.get("graphstore/report.py") == 1.0
    source = 'return ", ".join(f"{a}->{b}" for a, bs in store.edges.items() for b in bs)'
    assert any(p.kind == "literal" and p.text == source for p in plan.patterns)
    result = search(root, WARNING_ISSUE)
    assert result.findings[0].file == "graphstore/report.py"
    assert "describe" in top_scopes(result)


def test_absolute_and_windows_paths_in_prose_are_mentions() -> None:
    m = extract_mentions("It fails in /opt/app/graphstore/store.py and in src\\pkg\\mod.py too")
    assert {"/opt/app/graphstore/store.py", "src\\pkg\\mod.py"} <= set(m.paths)


def _two_cli_libraries(tmp_path: Path) -> Path:
    """Two modules defining the same names (like argparse and optparse), one richer in them,
    a log package with a rotating handler beside an unrelated ``rotate``, and a one-word
    class name."""
    from conftest import write_tree

    formatter = "class HelpFormatter:\n    def format_help(self):\n        return ''\n"
    return write_tree(
        tmp_path / "repo",
        {
            "clilib/optcli.py": formatter
            + "class IndentedHelpFormatter(HelpFormatter):\n    pass\n"
            + "class TitledHelpFormatter(HelpFormatter):\n    pass\n"
            + "def format_option_help():\n    pass\n",
            "clilib/argcli.py": formatter
            + "class RawTextHelpFormatter(HelpFormatter):\n    pass\n"
            + "def parse_args():\n    pass\n",
            "applog/handlers.py": "class RotatingFileHandler:\n"
            "    def do_rollover(self):\n        pass\n",
            "geometry/vectors.py": "def rotate(v, angle):\n    return v\n",
            "archives/tarball.py": "class TarBall:\n    def open_member(self):\n        pass\n",
        },
    )


@pytest.mark.parametrize(
    ("question", "file", "name", "pattern"),
    [
        # the module the question names wins over one defining more of the same words
        # (its method leads: the Answer's Relevant Function, cq/assemble/result.py)
        ("where does argcli format the help", "clilib/argcli.py", "format_help", "format_help"),
        # a generic word ("files") as a name's second word, and the package named; the
        # method of the class that does it leads (its names say rotating and file)
        (
            "how does applog rotate files",
            "applog/handlers.py",
            "do_rollover",
            "RotatingFileHandler",
        ),
        # one prose word spelling a whole CamelCase name
        ("where is a tarball member opened", "archives/tarball.py", "open_member", "TarBall"),
    ],
)
def test_question_words_that_name_modules_and_whole_names(
    tmp_path: Path, question: str, file: str, name: str, pattern: str
) -> None:
    result = search(_two_cli_libraries(tmp_path), question)
    first = next(f for f in result.findings if f.category == "definition")
    assert (first.file, first.text) == (file, name)
    rw = result.summary.rewrite
    assert rw is not None and pattern in rw.identifiers


def test_a_question_lists_relevant_files_in_rank_order(tmp_path: Path) -> None:
    """An issue or question is answered by files: the report names them where to look first,
    while an identifier search keeps its count-ordered hot files."""
    root = _two_cli_libraries(tmp_path)
    md = run_cq("search", "how does applog rotate files", "--root", str(root)).stdout
    heading = next(
        i for i, line in enumerate(md.splitlines()) if line.startswith("## Relevant Files")
    )
    first = md.splitlines()[heading + 2].split(" · ")[0]
    assert first.startswith("`applog/handlers.py`")
    plain = run_cq("search", "HelpFormatter", "--root", str(root), "--format", "json").json()
    hot = next(s for s in plain["sections"] if s["type"] == "hot_files")
    assert hot["title"] == "Hot Files" and hot["order"] == "count"
    assert hot["files"][0]["file"] == "clilib/optcli.py"  # 3 findings against 2


def test_a_qualified_name_whose_last_part_says_little_searches_its_owner(tmp_path: Path) -> None:
    """``Arg::new`` and ``Model.__init__`` were dropped whole (``new`` is common, ``__init__``
    special): the report lost the one type it named. A file name is no owner."""
    m = extract_mentions("`Arg::new` panics and `Model.__init__` fails; see CODE_OF_CONDUCT.md")
    assert {"Arg::new", "Model.__init__"} <= set(m.prose_names)
    assert not any("CODE_OF_CONDUCT" in n for n in (*m.prose_names, *m.code_names))
    root = write_tree(
        tmp_path / "repo",
        {"nets/model.py": "class Model:\n    def __init__(self, depth):\n        self.d = depth\n"},
    )
    rw = search(root, "`Model.__init__` fails when depth is a list\n\nIt raises.").summary.rewrite
    assert rw is not None and "Model" in rw.identifiers, rw
    assert "__init__" not in rw.identifiers, rw


def test_a_phrase_the_prose_quotes_is_searched_as_a_message() -> None:
    """What the program printed, copied into a title in quotes, is searched as a literal; a
    word in quotes, the gap between two quoted words, and code blocks are not messages."""
    m = extract_mentions('TSQL: "Avoid using aliases in join condition" when no join present')
    assert m.messages == ("Avoid using aliases in join condition",)
    curly = extract_mentions("it prints \u201ccannot open the store file\u201d and stops")
    assert curly.messages == ("cannot open the store file",)
    assert extract_mentions('set "mode" and then some more words "fast"').messages == ()
    fenced = 'Fails:\n```\nprint("this text is code, not prose")\n```\n'
    assert extract_mentions(fenced).messages == ()
