"""``cq agent install --project`` writes files people commit: they must work on a teammate's
clone, so they name no path of this machine; and an install that fails half way puts back
what it wrote and says so in its one line."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import anyio
import pytest
from conftest import path_with_cq, run_cq
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import cq
from cq.tools import find_rg

# what install writes and prints, not how cq starts (forked_cli.py)
pytestmark = pytest.mark.cli_forked

ALL = ("--claude", "--codex", "--cursor", "--gemini")


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def machine_paths(home: Path) -> list[str]:
    """Paths that exist only on this machine: this cq's venv, the interpreter, the home."""
    venv = Path(sys.executable).parent.parent
    return [str(venv), os.path.realpath(venv), sys.prefix, str(home)]


def test_project_files_name_no_path_of_this_machine(project, home):
    run = run_cq(
        "agent", "install", "--guidance", *ALL,
        cwd=project, env={"HOME": str(home), "PATH": path_with_cq()},
    )  # fmt: skip
    assert run.returncode == 0 and run.stderr == "", run.stderr
    written = snapshot(project)
    assert {".mcp.json", "CLAUDE.md", "AGENTS.md", ".codex/config.toml"} <= set(written)
    for name, data in written.items():
        text = data.decode()
        assert not [p for p in machine_paths(home) if p in text], (name, text)
    assert "allowed-tools: Bash(cq:*)" in written[".claude/commands/cq.md"].decode()
    assert "`cq search QUERY`" in written["CLAUDE.md"].decode()
    server = {"command": "cq", "args": ["mcp"]}
    for config in (".mcp.json", ".cursor/mcp.json", ".gemini/settings.json"):
        assert json.loads(written[config])["mcpServers"]["cq"] == server, config
    assert tomllib.loads(written[".codex/config.toml"].decode())["mcp_servers"]["cq"] == server

    user = run_cq("agent", "install", "--user", "--claude", cwd=project, env={"HOME": str(home)})
    assert user.returncode == 0, user.stderr  # the user's own files: this cq, by its path
    mine = json.loads((home / ".claude.json").read_text())["mcpServers"]["cq"]["command"]
    assert os.path.isabs(mine) and os.access(mine, os.X_OK)


def test_without_cq_on_path_the_project_files_say_cq_and_a_warning_says_why(project, home):
    run = run_cq(
        "agent", "install", "--claude",
        cwd=project, env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert run.returncode == 0
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("cq: warning: "), run.stderr
    assert "is not on PATH" in run.stderr and "--user" in run.stderr
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["cq"]["command"] == "cq"


def test_a_venv_inside_the_project_is_named_from_the_projects_root(project, home, tmp_path):
    """cq installed in the project's own ``.venv`` (which each clone makes again): the files
    say ``.venv/bin/cq``, and the server starts from the root as an agent starts it."""
    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    script = venv / "bin" / "cq"  # what pip would write: run cq with this interpreter
    script.write_text(f"#!{python} -P\nimport sys\nfrom cq.cli import entry\nsys.exit(entry())\n")
    script.chmod(0o755)
    source = Path(cq.__file__).parent.parent
    packages = [p for p in sys.path if p.endswith("site-packages")]
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": os.pathsep.join([str(source), *packages]),
        "CQ_RG": find_rg(),
        "CQ_CACHE_DIR": str(tmp_path / "c"),
    }
    install = [str(script), "agent", "install", "--guidance", "--claude", "--codex"]
    run = subprocess.run(install, cwd=project, env=env, capture_output=True, text=True)
    assert run.returncode == 0 and run.stderr == "", run.stderr
    command = (project / ".claude" / "commands" / "cq.md").read_text()
    assert "allowed-tools: Bash(.venv/bin/cq:*)" in command
    assert "`.venv/bin/cq search QUERY`" in (project / "AGENTS.md").read_text()
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["cq"]
    assert server == {"command": ".venv/bin/cq", "args": ["mcp"]}
    codex = tomllib.loads((project / ".codex" / "config.toml").read_text())
    assert codex["mcp_servers"]["cq"] == server
    for name, data in snapshot(project).items():
        if not name.startswith(".venv/"):
            assert str(project) not in data.decode(), name

    async def answer() -> str:
        params = StdioServerParameters(
            command=server["command"], args=server["args"], env=env, cwd=project
        )
        with (tmp_path / "server.err").open("w") as errlog, anyio.fail_after(120):
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, mode="legacy", read_timeout_seconds=120) as client:
                found = await client.call_tool("search", {"query": "main", "limit": 3})
                return "".join(block.text for block in found.content)

    assert "app.py:1:" in anyio.run(answer)


def test_a_failed_install_puts_back_what_it_wrote_and_says_so(project, home):
    """A file-size limit (as a full disk would) stops the install at AGENTS.md, after the
    Claude Code files and Codex's skill were written: they are removed again, AGENTS.md is
    whole, and the one error line names each path."""
    theirs = "# Agents\n\n" + "Keep every line under 100 characters.\n" * 2000  # 76 KB
    (project / "AGENTS.md").write_text(theirs)
    (project / "CLAUDE.md").write_text("# House rules\n")
    before = snapshot(project)
    limit = 32 * 1024

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails, EFBIG

    argv = [sys.executable, "-m", "cq", "agent", "install", "--guidance"]
    env = {**os.environ, "HOME": str(home), "PATH": path_with_cq()}
    run = subprocess.run(
        argv, cwd=project, env=env, capture_output=True, text=True, preexec_fn=limits, timeout=120
    )
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1, run.stderr
    p = str(project)
    assert run.stderr == (
        f"cq: cannot update {p}/AGENTS.md: File too large; the install is undone: "
        f"{p}/.claude/commands/cq.md removed, {p}/CLAUDE.md restored, {p}/.mcp.json removed, "
        f"{p}/.agents/skills/cq/SKILL.md removed\n"
    )
    assert snapshot(project) == before
    assert sorted(p.name for p in project.iterdir()) == ["AGENTS.md", "CLAUDE.md", "app.py"]
    again = run_cq("agent", "uninstall", cwd=project, env={"HOME": str(home)})
    assert again.returncode == 0 and again.stdout == "nothing to do\n", again.stdout
    assert snapshot(project) == before
