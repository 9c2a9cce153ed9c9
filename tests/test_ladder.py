"""The fallback ladder (``cq.ladder``): which rung finds a query's candidates, with real rg
over a small tree. Each test climbs it for one query shape and checks what was searched,
in which modes, and why the climb stopped."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree

from cq.candidates import Candidates
from cq.ladder import Climb, Ladder
from cq.model import SearchRequest
from cq.parse import Corpus
from cq.rewrite import question_of
from cq.settings import settle

FILES = {
    "pkg/config.py": (
        "def parse_config_file(path):\n"
        "    return load_settings(path)\n"
        "\n"
        "\n"
        "def load_settings(path):\n"
        '    message = "reload_settings_now"\n'
        "    return message\n"
    ),
    "pkg/app.py": (
        "from pkg.config import parse_config_file\n"
        "\n"
        "\n"
        "def main():\n"
        '    return parse_config_file("app.toml")\n'
    ),
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path, FILES)


def climb(root: Path, query: str, **fields: object) -> tuple[Candidates, Climb]:
    request = SearchRequest(query=query, root=str(root), use_index=False, **fields)  # type: ignore[arg-type]
    request, settings = settle(request)
    tuning = settings.tuning
    question = question_of(request, tuning.rewrite)
    corpus = Corpus(root, tuning.scale.corpus_keep_bytes, remember=False)
    timings: dict[str, float] = {}
    ladder = Ladder(
        question, corpus, tuning, scope=settings.scope, switches=settings.ladder, timings=timings
    )
    candidates, found, index = ladder.climb()
    assert index is None  # use_index=False: no index run to close
    return candidates, found


def files_of(candidates: Candidates) -> set[str]:
    return {m.file for m in candidates.matches}


def test_a_name_found_stops_at_the_first_rung(tree: Path) -> None:
    candidates, found = climb(tree, "parse_config_file")
    assert found.stopped == "matched" and found.mode_chain == ("identifier",)
    assert not found.fallback_applied and found.rewrite is None
    assert files_of(candidates) == {"pkg/config.py", "pkg/app.py"}
    assert [(p.text, p.kind) for p in found.patterns] == [("parse_config_file", "identifier")]


def test_an_identifier_not_a_word_anywhere_is_searched_as_text(tree: Path) -> None:
    # "settings_now" is inside "reload_settings_now": no word boundary, so only as text
    candidates, found = climb(tree, "settings_now")
    assert found.stopped == "literal" and found.fallback_applied and found.mode == "literal"
    assert found.mode_chain == ("identifier", "literal")
    assert [(p.text, p.kind) for p in found.patterns] == [("settings_now", "literal")]
    assert files_of(candidates) == {"pkg/config.py"}


def test_an_identifier_the_user_asked_for_gets_no_literal_retry(tree: Path) -> None:
    candidates, found = climb(tree, "settings_now", mode="identifier")
    assert found.mode_chain == ("identifier",) and not candidates.matches
    assert found.stopped == "not_found"  # the names nearest it, still


def test_a_name_nowhere_gets_the_names_nearest_it_and_no_rewrite(tree: Path) -> None:
    candidates, found = climb(tree, "load_setings")
    assert found.stopped == "not_found" and found.rewrite is None
    assert found.mode_chain == ("identifier", "literal") and not candidates.matches
    assert found.mode == "identifier"  # the literal search found nothing either
    assert found.suggestions is not None
    assert found.suggestions[0].name == "load_settings"
    assert found.suggestions[0].file == "pkg/config.py"


def test_text_nowhere_is_rewritten_and_searched_again(tree: Path) -> None:
    candidates, found = climb(tree, "parse_config(")  # code, not prose: searched as typed first
    assert found.stopped == "rewritten" and found.rewrite is not None
    assert found.rewrite.summary.trigger == "zero_results"
    assert found.mode_chain == ("literal",) and not found.fallback_applied
    assert found.patterns[0].text == "parse_config(" and len(found.patterns) > 1
    assert "pkg/config.py" in files_of(candidates)


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ('parse_config_file("other.toml")', "parse_config_file"),
        ("self.load_settings(path);", "load_settings"),
        ("config.load_settings()", "config.load_settings"),
    ],
)
def test_a_call_nowhere_verbatim_is_searched_as_the_name_it_calls(
    tree: Path, query: str, name: str
) -> None:
    """A call pasted alone that no file writes as typed is about the function it calls: that
    name is searched (as typed alone it would be), not the call's words rewritten."""
    candidates, found = climb(tree, query)
    assert found.stopped == "called" and found.rewrite is None
    assert found.mode_chain == ("literal", "identifier") and found.mode == "identifier"
    assert found.patterns[0].text == name and found.patterns[0].kind == "identifier"
    assert "pkg/config.py" in files_of(candidates)


@pytest.mark.parametrize(("query", "mode"), [("parse_config(", "literal"), ("conf[i]gZZ", "regex")])
def test_a_mode_given_is_not_rewritten_when_nothing_matched(
    tree: Path, query: str, mode: str
) -> None:
    """-F or --regex says how to search: text nowhere is nothing found, not a rewrite's guess
    (``-F SchemaZZ`` was answered with ``_bind_to_schema``, "rewritten offline into names"),
    as a phrase under -F is."""
    candidates, found = climb(tree, query, mode=mode)
    assert found.stopped == "nothing" and found.rewrite is None
    assert not candidates.matches and found.patterns[0].text == query


def test_no_rewrite_means_none_even_when_nothing_matched(tree: Path) -> None:
    candidates, found = climb(tree, "parse_config(", rewrite=False)
    assert found.stopped == "nothing" and found.rewrite is None
    assert not candidates.matches and found.suggestions is None


def test_a_question_is_rewritten_before_rg_and_searched_with_its_guesses(tree: Path) -> None:
    candidates, found = climb(tree, "where is the config file parsed?")
    assert found.rewrite is not None and found.rewrite.summary.trigger == "heuristic"
    assert found.stopped == "matched" and found.mode_chain == ("literal",)
    guessed = {p.text for p in found.patterns if p.source != "query"}
    assert "parse_config_file" in guessed
    assert "pkg/config.py" in files_of(candidates)


def test_a_pasted_issue_searches_only_the_rewrite(tree: Path) -> None:
    issue = "Config is not reloaded\n\nparse_config_file ignores the path\nwe expected it to\n"
    candidates, found = climb(tree, issue)
    assert found.rewrite is not None and found.stopped == "matched"
    assert all(p.source != "query" for p in found.patterns)  # no pattern of several lines
    assert "pkg/config.py" in files_of(candidates)


def test_the_focus_is_the_requests_else_the_rewrites(tree: Path) -> None:
    question = "which tests cover parsing the config file?"
    assert climb(tree, question)[1].focus == "tests"  # the rewrite's guess
    assert climb(tree, question, focus="implementation")[1].focus == "implementation"
    assert climb(tree, "parse_config_file")[1].focus == "all"  # no rewrite, no --focus


def test_a_report_is_about_tests_only_when_its_title_says_so(tree: Path) -> None:
    report = "Config is not reloaded\n\nparse_config_file ignores the path on the test set\n"
    assert climb(tree, report)[1].focus == "all"  # the test set: said in passing
    failing = "Config tests fail\n\nparse_config_file ignores the path\n"
    assert climb(tree, failing)[1].focus == "tests"
