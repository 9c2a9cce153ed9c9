"""The everyday-question bench: its matching rules, and whole runs of real cq over a small tree
extracted from a real bare git mirror."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree

from bench import _everyday
from bench._everyday import Place

REPO = Path(__file__).resolve().parent.parent

SHOP = '''"""Orders."""


class Basket:
    def add_item(self, name):
        if not name:
            raise ValueError("an item needs a name, got nothing")
        return name


def checkout(basket):
    return basket.add_item("tea")
'''
VIEWS = "from shop.orders import Basket\n\n\ndef page():\n    return Basket()\n"
LIB_RS = "pub struct Parser;\n\nimpl Default for Parser {\n    fn default() -> Self { Parser }\n}\n"


def test_a_name_matches_its_qualified_forms_in_the_same_file_only() -> None:
    gold = "shop/orders.py::Basket.add_item"
    assert _everyday.key_matches("shop/orders.py::Basket.add_item", gold, nested=False)
    assert _everyday.key_matches("shop/orders.py::add_item", gold, nested=False)
    assert _everyday.key_matches("shop/orders.py::mod.Basket.add_item", gold, nested=False)
    assert not _everyday.key_matches("shop/views.py::Basket.add_item", gold, nested=False)
    assert not _everyday.key_matches("shop/orders.py::Cart.add_item", gold, nested=False)
    assert not _everyday.key_matches("shop/orders.py::Basket", gold, nested=False)


def test_a_scope_inside_the_gold_counts_except_for_a_definition_question() -> None:
    inner = Place("shop/orders.py", 7, "shop/orders.py::Basket.add_item.check")
    gold = ["shop/orders.py::Basket.add_item"]
    assert _everyday.matches(inner, gold, "concept")
    assert not _everyday.matches(inner, gold, "definition")


def test_rust_impl_headers_read_as_their_self_type() -> None:
    key = "src/lib.rs::impl Default for Parser::default"
    assert _everyday.key_matches(key, "src/lib.rs::Parser::default", nested=False)
    assert not _everyday.key_matches(key, "src/lib.rs::Lexer::default", nested=False)


def test_a_site_matches_within_one_line() -> None:
    assert _everyday.matches(Place("shop/views.py", 2, ""), ["shop/views.py:1"], "usage")
    assert not _everyday.matches(Place("shop/views.py", 3, ""), ["shop/views.py:1"], "usage")
    assert not _everyday.matches(None, ["shop/views.py:1"], "usage")


def test_first_places_are_distinct() -> None:
    a = Place("a.py", 1, "a.py::f")
    places = [a, Place("a.py", 9, "a.py::f"), Place("a.py", 3, ""), Place("a.py", 3, "")]
    assert _everyday.first_places(places) == [a, Place("a.py", 3, "")]
    # for a question about sites, a call inside a function is a place of its own
    assert _everyday.first_places(places, sites=True) == [a, places[1], places[2]]


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return proc.stdout.strip()


def _run(*args: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.everyday", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A bare mirror of a small repository, its tree made by ``--make-trees``, three
    questions about it."""
    base = tmp_path_factory.mktemp("everyday")
    work = write_tree(
        base / "work",
        {
            "shop/__init__.py": "",
            "shop/orders.py": SHOP,
            "shop/views.py": VIEWS,
            "src/lib.rs": LIB_RS,
            "Cargo.toml": '[package]\nname = "shop"\n',
        },
    )
    _git(work, "init", "-q")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    commit = _git(work, "rev-parse", "HEAD")
    (work / "shop/orders.py").write_text("# changed after the recorded commit\n")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two")
    mirrors = base / "mirrors"
    _git(base, "clone", "-q", "--bare", str(work), str(mirrors / "acme+shop" / "repo"))
    trees_file = base / "trees.json"
    trees_file.write_text(json.dumps({"shop": {"repo": "acme/shop", "commit": commit}}))
    trees = base / "trees"
    _run("--make-trees", trees, "--mirrors", mirrors, "--trees-file", trees_file)

    def row(n: int, kind: str, query: str, gold: list[str]) -> dict:
        return {"id": f"shop-{n}", "repo": "shop", "kind": kind, "query": query, "gold": gold}

    rows = [
        row(1, "definition", "where is Basket defined?", ["shop/orders.py::Basket"]),
        row(2, "error", "an item needs a name, got nothing", ["shop/orders.py::Basket.add_item"]),
        row(3, "usage", "where is Basket imported?", ["shop/views.py:1"]),
        row(4, "error", "quartz xylophone zeppelin", ["shop/orders.py::Basket.add_item"]),
    ]
    data = base / "everyday.jsonl"
    data.write_text("".join(json.dumps({**r, "reason": "read"}) + "\n" for r in rows))
    return {"base": base, "trees": trees, "data": data}


def test_make_trees_extracts_the_recorded_commit(shop) -> None:
    tree = shop["trees"] / "shop"
    assert "class Basket" in (tree / "shop/orders.py").read_text()
    assert not (tree / ".git").exists()


def test_a_run_scores_every_question_and_keeps_what_cq_answered(shop) -> None:
    out = shop["base"] / "run.json"
    args = ["--data", shop["data"], "--trees", shop["trees"], "--jobs", "2", "--by-repo"]
    proc = _run(*args, "--json-out", out)
    assert "| definition | 1 |" in proc.stdout
    assert "| **pooled** | 4 |" in proc.stdout
    assert "| shop |" in proc.stdout  # the --by-repo table
    run = _everyday.read(str(out))
    by_id = {o.id: o for o in run.outcomes}
    assert [o.id for o in run.outcomes] == ["shop-1", "shop-2", "shop-3", "shop-4"]
    definition = by_id["shop-1"]
    assert definition.answer == Place("shop/orders.py", 4, "shop/orders.py::Basket")
    assert definition.ans and definition.top5
    assert definition.note in ("derived", "json-answer")
    assert 0 < len(definition.top) <= _everyday.TOP
    assert by_id["shop-2"].top5  # the raise site's function is among the first five
    assert by_id["shop-3"].top5  # the import line is among the first five findings
    # a message no file holds: cq exits 1 with a report of no findings, scored as no Answer
    nothing = by_id["shop-4"]
    assert (nothing.answer_kind, nothing.answer, nothing.ans) == ("nothing", None, False)
    assert nothing.note in ("derived", "json-answer")


def test_compare_lists_the_questions_that_changed(shop) -> None:
    out = shop["base"] / "run.json"
    if not out.exists():
        _run("--data", shop["data"], "--trees", shop["trees"], "--json-out", out)
    run = _everyday.read(str(out))
    first = run.outcomes[0]
    worse = _everyday.RunFile(
        run.data,
        run.options,
        [
            _everyday.Outcome(**{**_as_dict(first), "ans": False, "top5": False}),
            *run.outcomes[1:],
        ],
    )
    _everyday.write(str(shop["base"] / "worse.json"), worse)
    proc = _run("--compare", out, shop["base"] / "worse.json")
    assert "worse (1):" in proc.stdout
    assert "- shop-1 (definition)" in proc.stdout
    assert "better (0):" in proc.stdout


def _as_dict(outcome: _everyday.Outcome) -> dict:
    return {f: getattr(outcome, f) for f in outcome.__struct_fields__}


def test_a_json_answer_object_is_read_as_it_says(shop) -> None:
    from bench import everyday

    tree = shop["trees"] / "shop"
    proc = subprocess.run(
        [sys.executable, "-m", "cq", "search", "who calls add_item?", "--format", "json"],
        capture_output=True,
        cwd=tree,
        env={**os.environ, "CQ_SERVER": "0", "CQ_CACHE_DIR": str(shop["base"] / "c")},
        check=True,
    )
    report = json.loads(proc.stdout)
    assert any(f["line"] == 12 for f in report["findings"])  # the call in checkout
    report["answer"] = {"kind": "callers", "name": "add_item", "file": "shop/orders.py", "line": 12}
    question = _everyday.Question(
        "shop-5", "shop", "callers", "who calls add_item?", ["shop/orders.py::checkout"], "read"
    )
    kind, answer, note, top = everyday.read_report(json.dumps(report).encode(), question)
    assert (kind, note) == ("callers", "json-answer")
    assert answer == Place("shop/orders.py", 12, "shop/orders.py::checkout")
    assert top[0] == answer
