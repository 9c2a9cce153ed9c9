"""Every command cq prints runs as printed: in the shell that ran cq (whether or not this
install's ``cq`` is on ``PATH``) and within the ``/cq`` command's ``allowed-tools``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree

SCRIPT = Path(sys.executable).parent / "cq"  # this install's console script
BARE_PATH = "/usr/bin:/bin"  # a shell where the venv is not activated
FILES = {
    "pkg/store.py": "def save(item):\n    return item\n",
    "pkg/api.py": "from pkg.store import save\n\n\ndef handle(x):\n    return save(x)\n",
    "pkg/jobs.py": "from pkg.store import save\n\n\ndef nightly(x):\n    save(x)\n    save(x)\n",
    "tests/test_store.py": "from pkg.store import save\n\n\ndef test_save():\n    save(1)\n",
}


def shell(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``command`` as a user pastes it into a POSIX shell."""
    return subprocess.run(
        ["/bin/sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def follow_ups(markdown: str) -> list[str]:
    """The commands of the report's Suggested Follow-ups, as printed."""
    section = markdown.split("## Suggested Follow-ups", 1)[1].split("\n\n")[1]
    return [re.search(r": `(.+)`$", line).group(1) for line in section.splitlines()]


# Each launch prints the same follow-ups but for their first word: every one of them runs
# in the shell for the first launch, the first one (its prefix) for the other two.
@pytest.mark.parametrize(
    ("launch", "on_path", "every"),
    [
        ([str(SCRIPT)], False, True),  # .venv/bin/cq, the README's install, venv not activated
        ([sys.executable, "-m", "cq"], False, False),
        (["cq"], True, False),  # an activated venv: cq on PATH is this install
    ],
)
def test_follow_ups_run_in_the_shell_that_ran_cq(tmp_path, launch, on_path, every):
    repo = write_tree(tmp_path / "repo", FILES)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    path = f"{SCRIPT.parent}:{BARE_PATH}" if on_path else BARE_PATH
    env = {**os.environ, "PATH": path}
    cmd = [*launch, "search", "save", "--root", str(repo), "--limit", "2"]
    run = subprocess.run(cmd, cwd=elsewhere, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    commands = follow_ups(run.stdout)
    assert commands
    for command in commands:
        assert command.startswith("cq search " if on_path else f"{SCRIPT} search ")
    for command in commands if every else commands[:1]:
        done = shell(command, elsewhere, env)
        assert done.returncode in (0, 1), (command, done.stderr)
        assert done.stdout.startswith("# cq search"), (command, done.stderr)


@pytest.mark.parametrize(
    ("scope", "path"),
    [
        ("--project", f"{SCRIPT.parent}:{BARE_PATH}"),  # committed files: cq on PATH
        ("--user", BARE_PATH),  # the user's own: this cq by its path, on PATH or not
    ],
)
def test_follow_ups_are_within_the_installed_commands_permissions(tmp_path, scope, path):
    """``allowed-tools: Bash(<prefix>:*)`` lets the agent run a command starting with
    ``<prefix>``: every follow-up must, or the agent has to ask (or cannot run it)."""
    repo = write_tree(tmp_path / "repo", FILES)
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "PATH": path, "HOME": str(home)}
    install = [str(SCRIPT), "agent", "install", scope, "--claude", "--no-mcp"]
    subprocess.run(install, cwd=repo, env=env, check=True, capture_output=True)
    base = repo if scope == "--project" else home
    command_file = (base / ".claude/commands/cq.md").read_text()
    prefix = re.search(r"^allowed-tools: Bash\((.+):\*\)$", command_file, re.M).group(1)
    cmd = [str(SCRIPT), "search", "save", "--root", str(repo), "--limit", "2"]
    run = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)
    commands = follow_ups(run.stdout)
    assert commands and all(c.startswith(prefix + " search ") for c in commands), (prefix, commands)
    assert f"`{prefix} $ARGUMENTS`" in command_file
