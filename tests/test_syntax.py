"""One syntax layer: ranking and enrichment apply the same test-code rules, and ranking and
the rewriter the same test paths."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

from cq.parse.rust_syntax import is_cfg_test
from cq.parse.syntax import is_test_path
from cq.rank.roles import path_role

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

RUST = """\
pub fn register() {}

#[cfg(all(test, unix))]
mod unix_tests {
    fn calls() { super::register(); }
}

#[cfg(any(test, feature = "mock"))]
mod mocks {
    pub fn register_mock() { super::register(); }
}

#[cfg(test)]
mod tests {
    #[test]
    fn plain() { super::register(); }
}
"""


@pytest.mark.parametrize(
    ("attribute", "test_only"),
    [
        ("#[cfg(test)]", True),
        ("#[cfg( test )]", True),
        ("#[cfg(all(test, unix))]", True),
        ("#[cfg(all(unix, any(test, all(test, windows))))]", True),
        ("#[cfg(any(test, unix))]", False),  # also built outside tests
        ("#[cfg(not(test))]", False),
        ('#[cfg(all(feature = "alloc", not(test)))]', False),
        ('#[cfg(feature = "test")]', False),
        ("#[cfg_attr(test, derive(Debug))]", False),
    ],
)
def test_cfg_test_means_compiled_only_for_tests(attribute: str, test_only: bool) -> None:
    assert is_cfg_test(attribute) is test_only


def test_ranking_and_enrichment_agree_on_rust_test_code(tmp_path: Path) -> None:
    write_tree(tmp_path, {"src/lib.rs": RUST})
    run = run_cq("search", "register", "--root", str(tmp_path), "--format", "json", "--limit", "0")
    calls = {
        f["line"]: (f["role"], f["enrichment"]["rust"].get("cfg_test", False))
        for f in run.json()["findings"]
        if f["category"] == "callsite"
    }
    assert calls == {5: ("test", True), 10: ("src", False), 16: ("test", True)}


@pytest.mark.parametrize(
    ("path", "test"),
    [
        ("tests/test_api.py", True),
        ("pkg/testing/helpers.py", True),
        ("crate/benches/speed.rs", True),
        ("pkg/api_tests/cases.py", True),
        ("Lib/test/string_tests.py", True),
        ("src/tests.rs", True),
        ("conftest.py", True),
        ("pkg/contest.py", False),
        ("pkg/attestation.py", False),
        ("src/lib.rs", False),
    ],
)
def test_one_test_path_rule_for_roles_and_the_rewriter(path: str, test: bool) -> None:
    assert is_test_path(path) is test
    assert (path_role(path) == "test") is test
