"""``cq search QUERY PATH`` (and ``--in``) at the edges a terminal user meets: a named pipe, a
link that leads out of the current directory, a part whose name starts with '-', and
``--files PATH`` as ``rg --files PATH``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

STORE = "def get_bucket(name):\n    return name.lower()\n"
USE = "from store import get_bucket\n\n\ndef handler():\n    return get_bucket('a')\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", {"pkg/store.py": STORE, "app.py": USE})


def _one_line_refusal(run) -> str:  # type: ignore[no-untyped-def]
    assert run.returncode == 2, (run.returncode, run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cq: "), run.stderr
    return lines[0]


@pytest.mark.parametrize("how", [("pipe",), ("--in", "pipe")])
def test_a_named_pipe_is_refused_at_once_not_waited_on(repo: Path, how: tuple[str, ...]) -> None:
    """rg would block reading a FIFO; cq used to wait for its whole search timeout, then call
    the search timed out. A part to search is a directory or a regular file. The search's
    timeout here is longer than run_cq's bound: a cq that waited on the pipe would never
    answer in time, so the refusal is told from a wait by a condition, not by a clock."""
    os.mkfifo(repo / "pipe")
    run = run_cq("search", "get_bucket", *how, "--timeout", "3600", cwd=repo)
    said = _one_line_refusal(run)
    assert "'pipe' is not a directory or a regular file" in said


def test_a_linked_file_leading_outside_is_searched_where_it_leads(repo: Path) -> None:
    """A PATH outside the root becomes the root, a file its directory: for a link, the
    directory of the file it leads to (as for a linked directory), never a refusal that
    names an ``--in`` the user did not type."""
    write_tree(repo.parent / "other", {"x.py": "def get_bucket_elsewhere():\n    pass\n"})
    (repo / "ext.py").symlink_to(repo.parent / "other" / "x.py")
    run = run_cq("search", "-l", "get_bucket_elsewhere", "ext.py", cwd=repo)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["x.py"]
    named = run_cq("search", "-l", "get_bucket_elsewhere", "ext.py", "--root", ".", cwd=repo)
    assert "'ext.py' is outside the root" in _one_line_refusal(named)


def test_a_follow_up_into_a_part_named_with_a_dash_runs_as_printed(tmp_path: Path) -> None:
    """``--in -dash`` reads as a flag to any argument parser: the follow-up spells it
    ``--in=-dash``, and the printed command runs."""
    repo = write_tree(
        tmp_path / "repo",
        {
            "-dash/d.py": "def weird_fn():\n    return 1\n",
            "app.py": "from d import weird_fn\n\n\ndef caller_two():\n    return weird_fn()\n",
        },
    )
    run = run_cq("search", "weird_fn", "--format", "json", cwd=repo)
    assert run.returncode == 0, run.stderr
    (section,) = [s for s in run.json()["sections"] if s["type"] == "follow_ups"]
    into = [f for f in section["follow_ups"] if "-dash" in f["argv"] or "--in=-dash" in f["argv"]]
    assert into, section
    for follow in into:
        done = subprocess.run(
            ["/bin/sh", "-c", follow["command"]], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, (follow["command"], done.stderr)
        assert "-dash/d.py" in done.stdout


def test_files_takes_a_path_as_rg_files_does(repo: Path) -> None:
    """``rg --files pkg`` lists pkg's files; so does ``cq search --files pkg``."""
    run = run_cq("search", "--files", "pkg", cwd=repo)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["pkg/store.py"]
    both = run_cq("search", "--files", "pkg", "app.py", cwd=repo)
    assert "takes one PATH" in _one_line_refusal(both)
    assert "nowhere" in _one_line_refusal(run_cq("search", "--files", "nowhere", cwd=repo))


def test_in_dir_over_mcp_takes_a_file_inside_the_root_only(repo: Path, tmp_path: Path) -> None:
    """The MCP tool's ``in_dir`` as ``--in``: a file of the root is the part searched; a file
    outside it, a link leading out, or a named pipe is an error, and the server serves on."""
    import anyio
    from test_mcp_server import session, text_of

    write_tree(tmp_path / "outside", {"o.py": "def get_bucket():\n    pass\n"})
    (repo / "link.py").symlink_to(tmp_path / "outside" / "o.py")
    os.mkfifo(repo / "pipe")

    async def scenario() -> None:
        with (tmp_path / "err").open("w") as errlog:
            async with session(repo, errlog) as client:

                async def files(in_dir: str) -> set[str]:
                    args = {"query": "get_bucket", "in_dir": in_dir, "format": "json"}
                    result = await client.call_tool("search", args)
                    assert not result.is_error, text_of(result)
                    return {f["file"] for f in result.structured_content["findings"]}

                assert await files("app.py") == {"app.py"}
                assert await files(str(repo / "pkg" / "store.py")) == {"pkg/store.py"}
                for bad in (str(tmp_path / "outside" / "o.py"), "link.py", "pipe"):
                    args = {"query": "get_bucket", "in_dir": bad}
                    with anyio.fail_after(15):  # a pipe once waited out the search's timeout
                        refused = await client.call_tool("search", args)
                    said = text_of(refused)
                    assert refused.is_error and repr(bad) in said, said
                    assert said.startswith("in_dir ") and "--in" not in said  # what was sent
                assert await files("pkg") == {"pkg/store.py"}

    anyio.run(scenario)
    assert "Traceback" not in (tmp_path / "err").read_text()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        # after '--' every word is the query or the PATH: a flag there is misplaced, not unknown
        (("--", "-weird", "app.py", "-t", "py"), "unexpected argument '-t' after '--'"),
        (("--", "-weird", "app.py", "--limit", "3"), "'--limit' after '--': flags go before"),
        # ``-weird`` is ``-w`` with ``eird`` left over to argparse: a query, most likely
        (("-weird",), "a query starting with '-' goes after '--'"),
        (("-lower", "app.py"), "a query starting with '-' goes after '--'"),
    ],
)
def test_a_query_or_path_starting_with_a_dash_is_told_where_flags_go(
    repo: Path, args: tuple[str, ...], said: str
) -> None:
    assert said in _one_line_refusal(run_cq("search", *args, cwd=repo))


def test_a_path_relative_to_a_named_root_is_pointed_to_in(repo: Path, tmp_path: Path) -> None:
    """PATH is relative to the current directory, as rg's; with ``--root`` or ``$CQ_ROOT``
    naming a root elsewhere, a PATH found only under that root is told its ``--in``, which
    then runs."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for how in ({"CQ_ROOT": str(repo)}, {}):
        root = [] if how else ["--root", str(repo)]
        run = run_cq("search", "get_bucket", "pkg", *root, cwd=elsewhere, env=how)
        said = _one_line_refusal(run)
        assert "relative to the current directory; the root's is --in pkg" in said
        again = run_cq("search", "-l", "get_bucket", "--in", "pkg", *root, cwd=elsewhere, env=how)
        assert again.stdout.splitlines() == ["pkg/store.py"], again.stderr
    unrelated = run_cq("search", "get_bucket", "nowhere", "--root", str(repo), cwd=elsewhere)
    assert "quote a query with spaces" in _one_line_refusal(unrelated)


@pytest.mark.parametrize(
    "args",
    [
        ("get_bucket", "-l", "pkg"),  # argparse gave PATH no word once a flag followed QUERY
        ("get_bucket", "-t", "py", "pkg", "-l"),
        ("get_bucket", "--root", ".", "pkg", "-l"),
        ("get_bucket", "-l", "--", "pkg"),  # and left the '--' for an unknown flag
    ],
)
def test_flags_between_query_and_path_as_rg_takes_them(repo: Path, args: tuple[str, ...]) -> None:
    """``rg foo -t py src``: flags anywhere, the words in order QUERY then PATH."""
    run = run_cq("search", *args, cwd=repo)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["pkg/store.py"]


def test_a_current_directory_removed_under_cq_is_said_not_an_internal_error(
    repo: Path, tmp_path: Path
) -> None:
    """A shell left in a removed directory: '.' (the default root) and every relative path
    lead nowhere; cq says so in one line, and absolute paths still search."""
    gone = tmp_path / "gone"
    gone.mkdir()
    script = (
        f"cd {gone} && rmdir {gone} && "
        f"{sys.executable} -m cq search -l get_bucket; echo rc=$?; "
        f"{sys.executable} -m cq search -l get_bucket {repo}/pkg --root {repo}"
    )
    run = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, timeout=120)
    assert run.stderr.splitlines() == [
        "cq: the current directory no longer exists: cd to one, or name the root with --root "
        "(absolute paths only)"
    ]
    assert run.stdout.splitlines() == ["rc=2", "pkg/store.py"]


def test_in_through_a_link_or_a_detour_is_the_part_it_leads_to(repo: Path) -> None:
    """``--in pkglink`` (a link to ``pkg``) or ``--in ../repo/pkg`` searches ``pkg`` under its
    own name: the index knows the files by it, so a question finds them as through PATH."""
    (repo / "pkglink").symlink_to("pkg")
    question = "where is the bucket name lowered?"
    for how in (("--in", "pkglink"), ("pkglink",), ("--in", "../repo/pkg"), ("--in", "pkg/.")):
        run = run_cq("search", question, *how, "--format", "json", cwd=repo)
        assert run.returncode == 0, (how, run.stderr)
        assert {f["file"] for f in run.json()["findings"]} == {"pkg/store.py"}, how
        listed = run_cq("search", "-l", "get_bucket", *how, cwd=repo)
        assert listed.stdout.splitlines() == ["pkg/store.py"], how


@pytest.mark.parametrize("name", ["nl\ndir", "bad_\udcffdir", "-dash\x1bdir"])
def test_follow_ups_into_a_part_whose_name_prints_escaped_run_as_printed(
    tmp_path: Path, name: str
) -> None:
    """A newline, a byte that is not UTF-8 or an escape in a part's name prints escaped in the
    report (``nl\\ndir``); the follow-up spells it for the shell instead, and runs."""
    repo = write_tree(
        tmp_path / "repo",
        {f"{name}/f.py": "def get_bucket():\n    pass\n\n\ndef user_fn():\n    get_bucket()\n"},
    )
    run = run_cq("search", "--", "get_bucket", name, cwd=repo)
    assert run.returncode == 0, run.stderr
    printed = run.stdout.split("## Suggested Follow-ups", 1)[1].strip().splitlines()
    commands = [line.split(": `", 1)[1].removesuffix("`") for line in printed]
    assert commands, printed
    for command in commands:
        done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, timeout=120)
        assert done.returncode == 0, (command, done.stderr)
        assert b"user_fn" in done.stdout


def test_a_newline_or_escape_in_a_named_path_keeps_the_refusal_one_visible_line(
    repo: Path,
) -> None:
    for args in (("--root", "no\nwhere"), ("--in", "no\nwhere"), ("--in", "x\x1b]0;t\x07")):
        said = _one_line_refusal(run_cq("search", "get_bucket", *args, cwd=repo))
        assert "\x1b" not in said and ("no\\nwhere" in said or "\\x1b" in said), said
