"""Property-based fuzz of file contents and query text through the real search.

Hypothesis builds files from hostile pieces (random bytes, byte order marks, CR/CRLF mixes,
control characters, NULs, invalid UTF-8, lines past the long-line limit, deep nesting) and
queries from any text; each example runs the real pipeline (``run_search``: real rg, real
parsers) and a few run the real CLI. Properties: no exception but a one-line ``CqError``; JSON
that parses, with ``line_text[col:end_col] == text`` (relative to ``line_window`` when a long
line was shortened) and rg's byte offsets landing on the match in the bytes the parsers read;
markdown without a raw control character; identical runs, identical output.

The budget is fixed and the search derandomized (``derandomize=True``, no example database),
so CI runs the same examples every time, in well under a minute.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cq.candidates import collect_candidates, patterns_for_query
from cq.errors import CqError
from cq.model import RunInfo, Scope, SearchRequest
from cq.parse.source import searched_bytes
from cq.pipeline import run_search
from cq.report import render_json, render_markdown
from tests.conftest import fuzz_examples, run_cq, scratch, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

_RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_FUZZ = settings(
    max_examples=fuzz_examples(20),
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_CODE = st.sampled_from(
    [
        b"target",
        b"def target(a, b):\n    return a\n",
        b"class K:\n    def target(self):\n        pass\n",
        b"target(1)\n",
        b"x = target\n",
        b"# target\n",
        b'"""target\n"""\n',
        b"f'{target}'\n",
        b"fn target() -> u8 { 1 }\n",
        b"impl K { pub fn target(&self) {} }\n",
        b"    ",
    ]
)
_HOSTILE = st.sampled_from(
    [
        b"\n",
        b"\r",
        b"\r\n",
        b"\r\r\n",
        b"\t",
        b"\x1b]0;title\x07",
        b"\x1b[2J",
        b"\x00",
        b"\xef\xbb\xbf",
        b"\xff",
        b"\xe2\x82",
        b"\xe2\x82\xac",
        b"\xf0\x9f\x98\x80",
        b"\xc3",
        b"\xc2\x9b",
        b"\xe2\x80\xae",
        b"\\",
        b'"',
        b"'''",
        b"(",
        b"}",
    ]
)
_PIECE = st.one_of(
    _CODE,
    _HOSTILE,
    st.binary(max_size=24),
    st.text(max_size=24).map(lambda t: t.encode("utf-8")),
    st.integers(990, 2500).map(lambda n: b"y = '" + b"z" * n + b"' + target\n"),
    st.integers(1, 400).map(lambda n: b"(" * n + b"target" + b")" * n + b"\n"),
)
_START = st.sampled_from([b"", b"", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"])
_ENDINGS = st.sampled_from([None, b"\r", b"\r\n"])


@st.composite
def _file(draw: st.DrawFn) -> tuple[str, bytes]:
    body = b"".join(draw(st.lists(_PIECE, max_size=24)))
    ending = draw(_ENDINGS)
    if ending is not None:
        body = body.replace(b"\n", ending)
    return draw(st.sampled_from(["a.py", "b.rs", "pkg/c.py"])), draw(_START) + body


_QUERIES = st.one_of(
    st.just(("target", None)),
    st.sampled_from(
        [
            (r"(?-u:\xe2)", "regex"),
            (r"(?-u:\x82)", "regex"),
            (r"(?-u:\x98\x80)\w*", "regex"),
            (r"\s+target", "regex"),
            (r"t\W*", "regex"),
            (r"[^\x00-\x7f]+", "regex"),
            (r"(?-u:[\x80-\xff])+", "regex"),
            (r"^", "regex"),
            ("z" * 30, "literal"),
        ]
    ),
)


@pytest.fixture(autouse=True)
def _no_time_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Enrichment's time budget depends on the machine's load: fuzz for the same output."""
    monkeypatch.setenv("CQ_ENRICH_BUDGET_MS", "600000")


def _search(root: Path, query: str, mode: str | None, rewrite: bool | None = False):
    request = None
    try:  # a query cq refuses (a NUL byte) is refused by the request itself
        request = SearchRequest(
            query=query, root=str(root), mode=mode, rewrite=rewrite, use_cache=False, limit=0
        )
        return request, run_search(request)
    except CqError as exc:
        message = str(exc)
        assert message and "internal error" not in message
        assert "\n" not in message
        if message.startswith("regex parse error"):  # told of the user's pattern
            assert "(?:" not in message or "(?:" in query, message  # not rg's wrapping
        return request, None


def _check_report(result) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(render_json(result))
    for f in data["findings"]:
        window = f.get("line_window")
        offset = window["start"] if window else 0
        assert f["line_text"][f["col"] - offset : f["end_col"] - offset] == f["text"], f
        if window:
            assert window["end"] - window["start"] == len(f["line_text"]) < window["length"] + 1
    markdown = render_markdown(result)
    assert _RAW_CONTROL.search(markdown) is None, _RAW_CONTROL.search(markdown)


def _stable(result) -> bytes:  # type: ignore[no-untyped-def]
    return render_json(msgspec.structs.replace(result, run=RunInfo())).encode()


@_FUZZ
@given(files=st.lists(_file(), min_size=1, max_size=3), query=_QUERIES)
def test_fuzzed_files(files: list[tuple[str, bytes]], query: tuple[str, str | None]) -> None:
    text, mode = query
    with tempfile.TemporaryDirectory(dir=scratch()) as tmp:
        root = write_tree(Path(tmp), dict(files))
        request, result = _search(root, text, mode)
        if result is None:
            return
        _check_report(result)
        assert _stable(result) == _stable(_search(root, text, mode)[1])
        # rg's offsets land on the match in the very bytes the parsers read
        patterns = patterns_for_query(text, mode or "identifier")
        for m in collect_candidates(Scope.of(request), patterns).matches:
            data = searched_bytes((root / m.file).read_bytes())
            assert data[m.byte_start : m.byte_end].decode("utf-8", "replace") == m.text, m


_TREE = {
    "app/core.py": "import os\n\nclass Store:\n    def insert(self, row):\n        return row\n",
    "app/use.py": "from app.core import Store\n\nStore().insert({'a': 1})  # \x1b[31m\n",
    "src/lib.rs": "pub fn parse(s: &str) -> usize {\n    s.len()\n}\n",
}


@_FUZZ
@given(
    query=st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=40),
    mode=st.sampled_from([None, "identifier", "literal", "regex"]),
)
def test_fuzzed_queries(query: str, mode: str | None) -> None:
    with tempfile.TemporaryDirectory(dir=scratch()) as tmp:
        root = write_tree(Path(tmp), _TREE)
        _, result = _search(root, query, mode, rewrite=None)
        if result is not None:
            _check_report(result)


@settings(_FUZZ, max_examples=fuzz_examples(6))
@given(query=st.text(min_size=1, max_size=30), fmt=st.sampled_from(["md", "json"]))
def test_fuzzed_queries_through_the_cli(query: str, fmt: str) -> None:
    """The real CLI, the query on stdin (any text, NUL and newlines included)."""
    with tempfile.TemporaryDirectory(dir=scratch()) as tmp:
        root = write_tree(Path(tmp), _TREE)
        run = run_cq("search", "-", "--root", str(root), "--format", fmt, stdin=query)
    assert run.returncode in (0, 1, 2)
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
    if run.returncode == 2:
        assert run.stderr.startswith("cq: ") and len(run.stderr.splitlines()) == 1
        return
    if fmt == "json":
        run.json()
    else:
        assert _RAW_CONTROL.search(run.stdout) is None


@settings(_FUZZ, max_examples=fuzz_examples(6))
@given(query=st.binary(min_size=1, max_size=30).filter(lambda b: b"\0" not in b))
def test_fuzzed_query_bytes_on_the_command_line(query: bytes) -> None:
    """Any bytes as the query argument: undecodable ones arrive surrogate-escaped."""
    with tempfile.TemporaryDirectory(dir=scratch()) as tmp:
        root = write_tree(Path(tmp), _TREE)
        argv = [os.fsencode(sys.executable), b"-m", b"cq", b"search", query]
        argv += [b"--root", os.fsencode(root)]
        run = subprocess.run(
            argv, capture_output=True, env={**os.environ}, timeout=120, check=False
        )
    stderr = run.stderr.decode("utf-8", "replace")
    assert run.returncode in (0, 1, 2)
    assert "Traceback" not in stderr and "internal error" not in stderr
    if run.returncode == 2:
        assert stderr.startswith("cq: ") and len(stderr.splitlines()) == 1
    else:
        assert _RAW_CONTROL.search(run.stdout.decode("utf-8")) is None
