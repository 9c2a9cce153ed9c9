"""The Answer is the floor of every budget, over MCP as on the command line: the real MCP SDK
client against ``cq mcp``, and the real CLI, on a tree with many findings of one name."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from conftest import run_cq, write_tree
from test_mcp_server import session, text_of

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

SIGNATURE = (
    "    def get_bucket(\n"
    "        self,\n"
    "        bucket_name: str,\n"
    "        region_name: str | None = None,\n"
    "        expected_owner: str | None = None,\n"
    "    ) -> 'FakeBucket':\n"
)
FILES = {
    "moto/s3/models.py": (
        "class S3Backend:\n" + SIGNATURE + "        return self.buckets[bucket_name]\n"
    ),
    **{
        f"moto/s3/handlers/handler_{i:02}.py": (
            "from moto.s3.models import S3Backend\n\n\n"
            f"def handle_{i}(backend: S3Backend, name):\n"
            f"    return backend.get_bucket(name)  # get_bucket {i}\n"
        )
        for i in range(40)
    },
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("budget"), FILES)


def test_a_small_budget_keeps_the_answer_over_mcp(tree: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        with (tmp_path / "err").open("w") as errlog:
            async with session(tree, errlog) as client:
                for budget in (300, 400):
                    result = await client.call_tool(
                        "search", {"query": "get_bucket", "max_tokens": budget}
                    )
                    assert not result.is_error, text_of(result)
                    text = text_of(result)
                    assert len(text) <= budget * 4
                    lines = text.splitlines()
                    assert lines[2].startswith("**Answer:** `get_bucket`")
                    assert "`moto/s3/models.py:2:8`" in lines[2]
                    assert "No findings" not in text and "left out" in text

    anyio.run(scenario)


def test_a_small_budget_keeps_the_answer_on_the_command_line(tree: Path) -> None:
    for budget in (150, 300, 400):
        run = run_cq("search", "get_bucket", "--root", str(tree), "--max-tokens", str(budget))
        assert run.returncode == 0, run.stderr
        assert len(run.stdout) <= budget * 4
        assert run.stdout.splitlines()[2].startswith("**Answer:** `get_bucket`")
        assert "No findings" not in run.stdout


@pytest.mark.parametrize("semantic", [(), ("--no-semantic",)])
def test_a_callers_answer_keeps_its_callsites_in_a_small_budget(
    tree: Path, semantic: tuple[str, ...]
) -> None:
    question = ("search", "who calls get_bucket?", "--root", str(tree), *semantic)
    for budget in (120, 300):
        run = run_cq(*question, "--max-tokens", str(budget))
        assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
        assert len(run.stdout) <= budget * 4
        lines = run.stdout.splitlines()
        # all 40 calls counted, the budget's 3 shown
        assert lines[2].startswith("**Answer:** 40 callsites of `get_bucket` in the tree, 3 shown")
        assert lines[3].startswith("- `moto/s3/handlers/handler_00.py:5:19` in `handle_0`")
