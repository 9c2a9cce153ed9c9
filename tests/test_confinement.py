"""Confinement: no request reads outside its root, through the CLI or the MCP server.

A secret is planted outside the root, next to links that lead to it from inside; every way a
request can name a path (``--in``/``in_dir``, globs, a profile file, the MCP ``root``) is tried,
through a real ``cq`` subprocess and the real MCP SDK client, and the secret never comes back.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import run_cq, run_hooked, write_tree
from test_mcp_server import session, text_of

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

SECRET = "PLANTED-SECRET-7f3a"


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    """``root`` (the searched tree) and ``outside`` (the secret), links from one to the other."""
    outside = write_tree(
        tmp_path / "outside",
        {
            "secret.py": f'def needle():\n    return "{SECRET}"\n',
            "deep/more.py": f'needle = "{SECRET}"\n',
            "limits.toml": "max_files = 1\n",
            "lib.rs": "#[cfg(test)]\nmod helpers;\n",
        },
    )
    root = write_tree(
        tmp_path / "root",
        {
            "app.py": "def needle():\n    return 1\n",
            "sub/use.py": "from app import needle\n\nneedle()\n",
            "mine.toml": "max_total_matches = 1\n",
            # Two crates alike but for how lib.rs gets there: a real file, a link out.
            "own/src/lib.rs": "#[cfg(test)]\nmod helpers;\n",
            "own/src/helpers.rs": "pub fn needle() {}\n",
            "linked/src/helpers.rs": "pub fn needle() {}\n",
        },
    )
    (root / "linked_dir").symlink_to(outside, target_is_directory=True)
    (root / "linked_file.py").symlink_to(outside / "secret.py")
    (root / "sub" / "escape").symlink_to(outside, target_is_directory=True)
    (root / "linked" / "src" / "lib.rs").symlink_to(outside / "lib.rs")
    return root, outside


def cq_search(root: Path, *extra: str) -> Any:
    return run_cq("search", "needle", "--root", str(root), "--limit", "0", *extra)


def assert_refused(run: Any, *words: str) -> str:
    """Exit 2, one ``cq: ...`` line naming the reason, and nothing of the secret anywhere."""
    assert SECRET not in run.stdout + run.stderr
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.startswith("cq: ") and run.stderr.count("\n") == 1, run.stderr
    assert "Traceback" not in run.stderr
    for word in words:
        assert word in run.stderr
    return run.stderr


def test_cli_in_dir_cannot_leave_the_root(planted: tuple[Path, Path]) -> None:
    root, outside = planted
    assert_refused(cq_search(root, "--in", ".."), "outside the root")
    assert_refused(cq_search(root, "--in", str(outside)), "outside the root")
    assert_refused(cq_search(root, "--in", "linked_dir"), "outside the root")
    assert_refused(cq_search(root, "--in", "sub/escape/deep"), "outside the root")
    assert_refused(cq_search(root, "--in", "sub/../.."), "outside the root")
    there = assert_refused(cq_search(root, "--in", str(outside / "deep")))
    absent = assert_refused(cq_search(root, "--in", str(outside / "none")))
    assert there.replace("deep", "X") == absent.replace("none", "X")  # existence not told


def test_cli_in_dir_inside_the_root_still_works(planted: tuple[Path, Path]) -> None:
    root, _ = planted
    for where in ("sub", str(root / "sub"), f"{root}/sub/../sub"):
        run = cq_search(root, "--in", where, "--format", "json")
        assert run.returncode == 0, run.stderr
        assert {f["file"] for f in run.json()["findings"]} == {"sub/use.py"}  # root-relative


def test_cli_globs_cannot_name_paths_outside(planted: tuple[Path, Path]) -> None:
    root, outside = planted
    assert_refused(cq_search(root, "--include", "../outside/*.py"), "'..'")
    assert_refused(cq_search(root, "--include", "**/../../outside/*"), "'..'")
    assert_refused(cq_search(root, "--exclude", "!{..,x}/*.py"), "'..'")
    assert_refused(cq_search(root, "--include", f"{outside}/*.py"), "absolute")


def test_root_anchored_globs_select_as_rg_reads_them(planted: tuple[Path, Path]) -> None:
    """A leading '/' anchors a glob at the root (rg's gitignore rule): it cannot escape, so
    it is searched; the root's own absolute path is refused with the anchored spelling."""
    root, _ = planted

    def files(*extra: str) -> set[str]:
        run = cq_search(root, "--format", "json", *extra)
        assert run.returncode == 0, run.stderr
        return {f["file"] for f in run.json()["findings"]}

    assert files("--include", "/*.py") == {"app.py"}  # not sub/use.py: anchored
    assert files("--include", "*.py") >= {"app.py", "sub/use.py"}  # unanchored: any depth
    assert files("--exclude", "/*.py", "--lang", "python") == {"sub/use.py"}
    assert files("--include", "/sub/*.py", "--in", "sub") == {"sub/use.py"}
    refused = assert_refused(cq_search(root, "--include", f"{root}/sub/*.py"), "absolute")
    assert "'/sub/*.py'" in refused


def test_links_inside_the_tree_are_not_followed(planted: tuple[Path, Path]) -> None:
    """rg walks without --follow: a linked file or directory leading out is not searched."""
    root, _ = planted
    for extra in ((), ("--hidden", "--no-ignore")):
        run = cq_search(root, "--format", "json", *extra)
        assert run.returncode == 0, run.stderr
        files = {f["file"] for f in run.json()["findings"]}
        assert SECRET not in run.stdout
        assert "app.py" in files and not any(f.startswith("linked_") for f in files)


def test_a_parent_module_linked_out_of_the_tree_is_not_read(planted: tuple[Path, Path]) -> None:
    """``#[cfg(test)] mod helpers;`` in lib.rs makes helpers.rs test code; a lib.rs that is a
    link to a file outside the root must not be read to decide that."""
    root, _ = planted
    run = cq_search(root, "--lang", "rust", "--format", "json")
    roles = {f["file"]: f["role"] for f in run.json()["findings"]}
    assert roles["own/src/helpers.rs"] == "test"  # read: the real lib.rs declares it so
    assert roles["linked/src/helpers.rs"] == "src"  # not read: the link leads outside


def test_a_link_swapped_in_after_the_walk_is_not_read(planted: tuple[Path, Path]) -> None:
    """rg reported app.py; before cq reads it, app.py becomes a link to the secret (a
    swap after every check). The open file is checked, so the secret is never read: the
    finding keeps rg's line and nothing of the link's target (the markdown report shows
    a read definition's signature)."""
    root, outside = planted
    # Its first line matches where rg's match was: read, it would give the signature.
    (outside / "twin.py").write_text(f'def needle(key="{SECRET}"):\n    return key\n')
    run = run_hooked(
        "link-before-read=app.py",
        *("search", "needle", "--root", str(root), "--limit", "0"),
        env={"CQ_TEST_LINK_TARGET": str(outside / "twin.py")},
    )
    assert run.returncode == 0, run.stderr
    assert SECRET not in run.stdout + run.stderr
    assert "app.py:1:" in run.stdout and (root / "app.py").is_symlink()


def test_cli_profile_file_must_be_inside_the_root(planted: tuple[Path, Path]) -> None:
    root, outside = planted
    there = assert_refused(cq_search(root, "--profile", str(outside / "limits.toml")))
    absent = assert_refused(cq_search(root, "--profile", str(outside / "absent.toml")))
    # The same reason whether or not the file exists: nothing is learnt about outside paths.
    assert there.replace("limits.toml", "X") == absent.replace("absent.toml", "X")
    assert "outside the root" in there
    inside = cq_search(root, "--profile", str(root / "mine.toml"), "--format", "json")
    assert inside.returncode == 0 and len(inside.json()["findings"]) == 1


def test_cli_profile_that_is_a_fifo_is_refused_without_hanging(planted: tuple[Path, Path]) -> None:
    root, _ = planted
    os.mkfifo(root / "pipe.toml")
    assert_refused(cq_search(root, "--profile", str(root / "pipe.toml")), "not a regular file")


def test_own_profiles_are_chosen_by_name_from_the_cli_and_mcp(
    planted: tuple[Path, Path], tmp_path: Path
) -> None:
    """A user keeps profiles in ``$XDG_CONFIG_HOME/cq/profiles`` (outside any root) and names
    them; the file checks of an in-root profile apply; a path outside the root stays refused."""
    root, outside = planted
    own = Path(os.environ["XDG_CONFIG_HOME"]) / "cq" / "profiles"
    own.mkdir(parents=True)
    (own / "mine.toml").write_text("max_total_matches = 1\n")
    run = cq_search(root, "--profile", "mine", "--format", "json")
    assert run.returncode == 0 and len(run.json()["findings"]) == 1, run.stderr  # of 3+
    assert_refused(cq_search(root, "--profile", str(own / "mine.toml")), "outside the root")
    unknown = assert_refused(cq_search(root, "--profile", "theirs"), "unknown profile")
    assert "mine" in unknown and str(own) in unknown  # listed, and where to put one
    os.mkfifo(own / "pipe.toml")
    assert_refused(cq_search(root, "--profile", "pipe"), "not a regular file")
    (own / "linked.toml").symlink_to(outside / "limits.toml")  # the user's own link: followed
    linked = cq_search(root, "--profile", "linked", "--format", "json")
    assert linked.returncode == 0 and len({f["file"] for f in linked.json()["findings"]}) == 1

    async def scenario() -> None:
        with (tmp_path / "err").open("w") as errlog:
            async with session(root, errlog) as client:
                found = await client.call_tool(
                    "search", {"query": "needle", "limit": 0, "profile": "mine", "format": "json"}
                )
                assert not found.is_error and len(json.loads(text_of(found))["findings"]) == 1
                refused = await client.call_tool("search", {"query": "needle", "profile": "pipe"})
                assert refused.is_error and "not a regular file" in text_of(refused)

    anyio.run(scenario)


MCP_REFUSED = [
    ({"in_dir": ".."}, "outside the root"),
    ({"in_dir": "OUTSIDE"}, "outside the root"),
    ({"in_dir": "linked_dir"}, "outside the root"),
    ({"in_dir": "sub/escape"}, "outside the root"),
    ({"root": "/"}, "not this server's root"),
    ({"root": ".."}, "not this server's root"),
    ({"root": "OUTSIDE"}, "not this server's root"),
    ({"root": "linked_dir"}, "not this server's root"),
    ({"root": "sub"}, "not this server's root"),
    ({"include": ["../outside/*.py"]}, "'..'"),
    ({"exclude": ["/etc/*"]}, "absolute"),
    ({"profile": "OUTSIDE/limits.toml"}, "outside the root"),
    ({"profile": "../outside/limits.toml"}, "outside the root"),
    ({"profile": "linked_dir/limits.toml"}, "outside the root"),
    ({"profile": "/etc/shadow"}, "outside the root"),
    ({"profile": "/etc/no-such-file"}, "outside the root"),
]


def test_mcp_requests_cannot_read_outside_the_servers_root(
    planted: tuple[Path, Path], tmp_path: Path
) -> None:
    root, outside = planted

    def resolved(arguments: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(arguments).replace("OUTSIDE", str(outside))
        return {"query": "needle", "limit": 0, **json.loads(text)}

    async def scenario() -> None:
        with (tmp_path / "err").open("w") as errlog:
            async with session(root, errlog) as client:
                for arguments, reason in MCP_REFUSED:
                    result = await client.call_tool("search", resolved(arguments))
                    text = text_of(result)
                    assert result.is_error and reason in text, (arguments, text)
                    assert SECRET not in text and "\n" not in text.strip(), (arguments, text)
                shadow, absent = [
                    text_of(await client.call_tool("search", resolved({"profile": p})))
                    for p in ("/etc/shadow", "/etc/no-such-file")
                ]
                assert shadow.replace("shadow", "X") == absent.replace("no-such-file", "X")
                # What stays allowed: the server's root however spelt, subtrees, files inside.
                for arguments in (
                    {},
                    {"root": "."},
                    {"root": str(root)},
                    {"root": "sub/.."},
                    {"in_dir": "sub"},
                    {"in_dir": str(root / "sub")},
                    {"profile": "mine.toml"},
                    {"hidden": True, "no_ignore": True},
                    {"format": "json"},
                    {"include": ["/*.py"]},
                ):
                    result = await client.call_tool("search", resolved(arguments))
                    text = text_of(result)
                    assert not result.is_error and "needle" in text, (arguments, text)
                    assert SECRET not in text and "linked_" not in text, (arguments, text)

    anyio.run(scenario)
    assert "Traceback" not in (tmp_path / "err").read_text()
