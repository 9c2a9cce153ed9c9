"""Assembly on hand-made classified findings: sections keep rank order, follow-ups all run."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from conftest import run_cq, write_tree

from cq.assemble import SearchFacts, assemble_result, fit_budget
from cq.model import (
    Echo,
    Finding,
    FindingList,
    FollowUps,
    Pattern,
    SearchRequest,
    SearchStats,
    Tally,
    TopContexts,
)
from cq.parse import Corpus
from cq.rank import RankContext, rank_findings
from cq.report import render_markdown
from cq.rewrite import question_of

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

FILES = {
    "pkg/core.py": "class Registry:\n    def register(self, item):\n        pass\n",
    "pkg/use.py": "from pkg.core import Registry\n\ndef setup(r):\n    r.register(1)\n",
    "app/main.py": "def main(r):\n    r.register(2)\n    # register later\n",
    "tests/test_core.py": "def test_it(r):\n    r.register(3)\n",
}


def f(file: str, line: int, col: int, category: str, scope: str | None = None) -> Finding:
    text = FILES[file].split("\n")[line - 1]
    return Finding(
        file=file,
        line=line,
        col=col,
        end_col=col + 8,
        text="register",
        line_text=text,
        language="python",
        category=category,  # type: ignore[arg-type]
        confidence=0.95,
        containing_scope=scope,
    )


FINDINGS = [
    f("pkg/core.py", 2, 8, "definition", "Registry"),
    f("pkg/use.py", 4, 6, "callsite", "setup"),
    f("app/main.py", 2, 6, "callsite", "main"),
    f("app/main.py", 3, 6, "comment_match", "main"),
    f("tests/test_core.py", 2, 6, "callsite", "test_it"),
]


def assemble(root: Path, limit: int = 3, max_tokens: int = 0):
    request = SearchRequest(
        query="register", root=str(root), limit=limit, max_tokens=max_tokens, exclude=("*.txt",)
    )
    patterns = (Pattern(text="register", kind="identifier"),)
    ranked = rank_findings(FINDINGS, RankContext(patterns=patterns), Corpus(root))
    facts = SearchFacts(
        echo=Echo.of(request),
        question=question_of(request),
        mode_requested="auto",
        mode="identifier",
        mode_chain=("identifier",),
        fallback_applied=False,
        patterns=patterns,
        stats=SearchStats(),
        by_language={"python": SearchStats()},
    )
    shown = ranked if limit <= 0 else ranked[:limit]
    return request, ranked, assemble_result(shown, Tally.of(ranked), facts)


def test_sections_list_findings_in_rank_order(tmp_path: Path) -> None:
    write_tree(tmp_path, FILES)
    _, ranked, result = assemble(tmp_path, limit=0)
    assert result.findings == tuple(ranked)
    assert result.summary.primary == 0
    top = next(s for s in result.sections if isinstance(s, TopContexts))
    firsts = [g.finding_indexes[0] for g in top.groups]
    assert firsts == sorted(firsts)
    for group in top.groups:
        assert list(group.finding_indexes) == sorted(group.finding_indexes)
    lists = {s.title: s for s in result.sections if isinstance(s, FindingList)}
    assert list(lists["Callsites"].finding_indexes) == sorted(lists["Callsites"].finding_indexes)
    assert lists["Callsites"].total == 3
    assert lists["Non-Code Matches"].collapsed


def test_every_follow_up_of_a_classified_result_runs(tmp_path: Path) -> None:
    write_tree(tmp_path, FILES)
    _, _, result = assemble(tmp_path, limit=3)
    follow = next(s for s in result.sections if isinstance(s, FollowUps)).follow_ups
    whys = " | ".join(item.why for item in follow)
    assert "Registry" in whys and "defining package" in whys and "calls" in whys, whys
    markdown = render_markdown(result)
    for item in follow:
        assert item.command in markdown
        assert "--exclude" in item.argv  # the follow-up searches the same tree
        done = run_cq(*item.argv[1:], cwd=Path("/"))
        assert done.returncode in (0, 1), (item.command, done.stderr)


def test_budget_keeps_a_prefix_and_says_so(tmp_path: Path) -> None:
    write_tree(tmp_path, FILES)
    request, _, result = assemble(tmp_path, limit=0)
    full = render_markdown(result)
    # under the report without what repeats Top Contexts, which goes first
    tight = Echo.of(msgspec.structs.replace(request, max_tokens=len(full) // 4 - 1))
    budget = len(render_markdown(fit_budget(result, tight, render_markdown))) // 4 - 60
    fitted = fit_budget(result, msgspec.structs.replace(tight, max_tokens=budget), render_markdown)
    assert 0 < len(fitted.findings) < len(result.findings)
    assert fitted.findings == result.findings[: len(fitted.findings)]
    text = render_markdown(fitted)
    assert len(text) / 4 <= budget
    dropped = len(result.findings) - len(fitted.findings)
    assert f"{dropped} dropped to fit --max-tokens {budget}" in text


def test_no_follow_up_asks_who_calls_a_test(tmp_path: Path) -> None:
    write_tree(tmp_path, FILES)
    request = SearchRequest(query="register", root=str(tmp_path), limit=3)
    patterns = (Pattern(text="register", kind="identifier"),)
    only_test_caller = [FINDINGS[0], FINDINGS[4]]
    ranked = rank_findings(only_test_caller, RankContext(patterns=patterns), Corpus(tmp_path))
    facts = SearchFacts(
        echo=Echo.of(request),
        question=question_of(request),
        mode_requested="auto",
        mode="identifier",
        mode_chain=("identifier",),
        fallback_applied=False,
        patterns=patterns,
        stats=SearchStats(),
        by_language={"python": SearchStats()},
    )
    follow = next(
        s
        for s in assemble_result(ranked[:3], Tally.of(ranked), facts).sections
        if isinstance(s, FollowUps)
    ).follow_ups
    assert not any("test_it" in item.argv for item in follow), follow


def test_no_follow_up_searches_a_generic_parameter(tmp_path: Path) -> None:
    """``impl<P> Parse for P``: a search for ``P`` finds every P of the tree, not a type."""
    from cq.assemble.followups import follow_ups

    def owner_followups(scope: str) -> list[str]:
        definition = msgspec.structs.replace(
            FINDINGS[0], file="src/lib.rs", language="rust", containing_scope=scope
        )
        request = SearchRequest(query="register", root=str(tmp_path))
        got = follow_ups(Echo.of(request), (definition,), 0, 0).follow_ups
        return [item.argv[-1] for item in got if "which defines it" in item.why]

    assert owner_followups("impl Parse for P::register") == []
    assert owner_followups("impl Parse for Parser::register") == ["Parser"]


def test_a_special_method_answer_suggests_its_class_not_its_name(tmp_path: Path) -> None:
    """An answer ``Accuracy.__init__``: a search for ``__init__`` finds every constructor of the
    tree; its class's uses are where it runs."""
    from cq.assemble.followups import follow_ups

    def suggested(text: str, scope: str) -> list[str]:
        definition = msgspec.structs.replace(FINDINGS[0], text=text, containing_scope=scope)
        request = SearchRequest(query="how is accuracy computed?", root=str(tmp_path))
        got = follow_ups(Echo.of(request), (definition,), 0, 0, rewritten=True).follow_ups
        return [item.argv[-1] for item in got]

    assert suggested("__init__", "Accuracy.__init__")[:1] == ["Accuracy"]
    # a method is named with its class: a bare ``update`` finds every class's
    assert suggested("update", "Accuracy.update")[:2] == ["Accuracy.update", "Accuracy"]


def test_no_follow_up_asks_who_calls_a_rust_main(tmp_path: Path) -> None:
    """clap's ``Arg::new`` suggested "who calls `main`, the best-ranked caller": nothing in a
    crate calls its program's entry point, so that search only finds the definition."""
    root = write_tree(
        tmp_path,
        {
            "src/lib.rs": "pub struct Arg;\n\nimpl Arg {\n    pub fn new() -> Self {\n"
            "        Arg\n    }\n}\n",
            "src/main.rs": "use demo::Arg;\n\nfn main() {\n    let _ = Arg::new();\n}\n",
        },
    )
    run = run_cq("search", "Arg::new", "--root", str(root))
    assert run.returncode == 0, run.stderr
    assert "## Suggested Follow-ups" in run.stdout
    assert "who calls `main`" not in run.stdout, run.stdout
