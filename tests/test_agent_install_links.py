"""``cq agent install|uninstall`` never leaves the project or home it was pointed at: links
and non-regular files among what it writes or removes are refused, nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import path_with_cq, run_cq

# what install writes and prints, not how cq starts (forked_cli.py)
pytestmark = pytest.mark.cli_forked

CLAUDE_CMD = Path(".claude/commands/cq.md")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beside the project, with a file a link in the project may point at."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "bashrc").write_text("export PATH=/usr/bin\n")
    (out / "servers.json").write_text('{"mcpServers": {}}\n')
    return out


def tree(root: Path) -> dict[str, bytes | str]:
    """Every entry under root: a file's bytes, a link's target, a directory's name."""
    found: dict[str, bytes | str] = {}
    for p in sorted(root.rglob("*")):
        key = str(p.relative_to(root))
        if p.is_symlink():
            found[key] = "-> " + os.readlink(p)
        elif p.is_file():
            found[key] = p.read_bytes()
        else:
            found[key] = "dir" if p.is_dir() else "other"
    return found


def agent(*args: str, cwd: Path, home: Path, timeout: float = 300):
    return run_cq(
        "agent", *args, cwd=cwd, env={"HOME": str(home), "PATH": path_with_cq()}, timeout=timeout
    )


def refused(run, path: Path) -> bool:
    """One ``cq:`` line naming ``path``, a non-zero exit, nothing on stdout."""
    return (
        run.returncode != 0
        and run.stderr.startswith(f"cq: {path} is ")
        and run.stderr.count("\n") == 1
        and "Traceback" not in run.stderr
        and run.stdout == ""
    )


@pytest.mark.parametrize(
    ("name", "target"),
    [
        ("CLAUDE.md", "bashrc"),
        ("AGENTS.md", "bashrc"),
        (".mcp.json", "servers.json"),
        (".claude", "."),
        (".agents", "."),
        (".codex", "."),
    ],
)
def test_install_refuses_a_link_in_the_project(project, home, outside, tmp_path, name, target):
    (project / name).symlink_to(Path("..") / "out" / target if target != "." else outside)
    before_out, before_proj = tree(outside), tree(project)
    run = agent("install", "--guidance", cwd=project, home=home)
    assert refused(run, project / name), (run.returncode, run.stderr)
    assert tree(outside) == before_out and tree(project) == before_proj  # nothing written
    run = agent("uninstall", "--force", cwd=project, home=home)
    assert refused(run, project / name)
    assert tree(outside) == before_out and tree(project) == before_proj


def test_force_never_overwrites_a_linked_command_file(project, home, outside):
    assert agent("install", "--claude", cwd=project, home=home).returncode == 0
    (project / CLAUDE_CMD).unlink()
    (project / CLAUDE_CMD).symlink_to(outside / "bashrc")
    run = agent("install", "--claude", "--force", cwd=project, home=home)
    assert refused(run, project / CLAUDE_CMD)
    assert (outside / "bashrc").read_text() == "export PATH=/usr/bin\n"


def test_uninstall_never_deletes_through_a_linked_directory(project, home, outside):
    assert agent("install", "--claude", "--no-mcp", cwd=project, home=home).returncode == 0
    (project / ".claude").rename(outside / ".claude")  # the same files, now outside
    (project / ".claude").symlink_to(outside / ".claude")
    before = tree(outside)
    run = agent("uninstall", "--claude", cwd=project, home=home)
    assert refused(run, project / ".claude")
    assert tree(outside) == before and (outside / CLAUDE_CMD).is_file()


def test_user_scope_refuses_a_linked_directory_under_home(project, home, outside):
    (home / ".codex").symlink_to(outside)
    run = agent("install", "--user", "--codex", cwd=project, home=home)
    assert refused(run, home / ".codex")
    assert sorted(p.name for p in outside.iterdir()) == ["bashrc", "servers.json"]


def test_a_fifo_is_refused_at_once(project, home):
    os.mkfifo(project / "CLAUDE.md")
    run = agent("install", "--guidance", cwd=project, home=home)
    assert refused(run, project / "CLAUDE.md")
    assert sorted(p.name for p in project.iterdir()) == ["CLAUDE.md", "app.py"]
    run = agent("uninstall", cwd=project, home=home)
    assert refused(run, project / "CLAUDE.md")


def test_a_directory_where_a_file_goes_is_refused(project, home):
    (project / CLAUDE_CMD).mkdir(parents=True)
    run = agent("install", "--claude", cwd=project, home=home)
    assert refused(run, project / CLAUDE_CMD) and "a directory" in run.stderr


@pytest.mark.parametrize(
    ("rel", "text"),
    [
        (".mcp.json", '{"a": ' + "[" * 200_000 + "]" * 200_000 + "}\n"),
        (".codex/config.toml", "a = " + "[" * 200_000 + "]" * 200_000 + "\n"),
    ],
)
def test_deeply_nested_configs_are_left_alone(project, home, rel, text):
    """Install cannot register cq in such a config, so it fails before writing anything."""
    path = project / rel
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    run = agent("install", "--force", cwd=project, home=home)
    assert run.returncode != 0 and len(run.stderr.splitlines()) == 1, run.stderr[-300:]
    assert rel in run.stderr and "nested deeper than 100 levels" in run.stderr
    assert path.read_text() == text
    assert sorted(p.name for p in project.iterdir()) == sorted(["app.py", rel.split("/")[0]])
    run = agent("uninstall", "--force", cwd=project, home=home)  # TOML: cq's block is absent
    assert run.returncode == 0 and run.stderr == "", run.stderr[-300:]
    assert all(x.startswith("kept") for x in run.stdout.splitlines() if x.endswith(rel))
    assert path.read_text() == text


def test_a_link_swapped_in_after_the_check_is_still_refused(tmp_path, outside):
    """The check runs before anything is written; the writes themselves reach each file one
    component at a time without following a link, so a link planted in between fails too."""
    from cq.agent.safefs import Refused, Tree

    project = tmp_path / "late"
    project.mkdir()
    tree = Tree((project,))
    command = project / CLAUDE_CMD
    tree.check(str(command))  # nothing there yet
    (project / ".claude").symlink_to(outside)
    before = sorted(p.name for p in outside.iterdir())
    with pytest.raises(Refused, match=r"\.claude is a symbolic link"):
        tree.write(str(command), "planted\n")
    assert sorted(p.name for p in outside.iterdir()) == before
    (project / "CLAUDE.md").symlink_to(outside / "bashrc")
    for step in (tree.read, tree.unlink, lambda p: tree.write(p, "x")):
        with pytest.raises(Refused, match=r"CLAUDE\.md is a symbolic link"):
            step(str(project / "CLAUDE.md"))
    assert (outside / "bashrc").read_text() == "export PATH=/usr/bin\n"
