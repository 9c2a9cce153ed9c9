"""``cq agent install --cursor/--gemini``: the MCP server in Cursor's ``.cursor/mcp.json`` and
Gemini CLI's ``.gemini/settings.json``, project and user scope, removed byte for byte; every
path the installer prints is absolute."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import path_with_cq, run_cq

# what install writes and prints, not how cq starts (forked_cli.py)
pytestmark = pytest.mark.cli_forked

CURSOR = Path(".cursor/mcp.json")
GEMINI = Path(".gemini/settings.json")
GEMINI_THEIRS = (
    '{\n  "theme": "GitHub",\n  "mcpServers": {\n    "git": {\n      "command": "uvx",\n'
    '      "args": ["mcp-server-git"]\n    }\n  },\n  "contextFileName": "AGENTS.md"\n}\n'
)


def agent(*args: str, cwd: Path, home: Path) -> dict[str, str]:
    """Run the installer; the outcome for each path it printed (each must be absolute)."""
    run = run_cq("agent", *args, cwd=cwd, env={"HOME": str(home), "PATH": path_with_cq()})
    assert run.returncode == 0 and run.stderr == "", run.stderr
    found = {}
    for line in run.stdout.splitlines():
        outcome, path = line.split()[:2]
        assert os.path.isabs(path), line
        found[path] = outcome
    return found


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def servers(path: Path) -> dict:
    return json.loads(path.read_text())["mcpServers"]


def test_cursor_and_gemini_project_configs_are_merged_and_restored(project, home):
    (project / ".gemini").mkdir()
    (project / GEMINI).write_text(GEMINI_THEIRS)
    before = snapshot(project)
    out = agent("install", "--cursor", "--gemini", cwd=project, home=home)
    assert out == {str(project / CURSOR): "written", str(project / GEMINI): "written"}
    cq = servers(project / CURSOR)["cq"]
    assert cq == {"command": "cq", "args": ["mcp"]}  # committed: cq as PATH finds it
    assert servers(project / GEMINI)["cq"] == cq
    gemini = json.loads((project / GEMINI).read_text())
    assert gemini["theme"] == "GitHub" and gemini["contextFileName"] == "AGENTS.md"
    assert servers(project / GEMINI)["git"] == {"command": "uvx", "args": ["mcp-server-git"]}
    assert not (project / ".claude").exists() and not (project / ".codex").exists()

    again = agent("install", "--cursor", "--gemini", cwd=project, home=home)
    assert set(again.values()) == {"unchanged"}
    out = agent("uninstall", cwd=project, home=home)  # no agent flag: every agent
    assert out == {str(project / CURSOR): "removed", str(project / GEMINI): "removed"}
    assert snapshot(project) == before and not (project / ".cursor").exists()


def test_user_scope_writes_under_home_and_prints_absolute_paths(project, home):
    out = agent("install", "--user", "--claude", "--cursor", "--gemini", cwd=project, home=home)
    assert set(out.values()) == {"written"}
    assert all(path.startswith(str(home) + os.sep) for path in out)
    assert str(home / ".claude/commands/cq.md") in out and str(home / ".claude.json") in out
    cq = servers(home / CURSOR)["cq"]  # the user's own: this cq by absolute path
    assert os.path.isabs(cq["command"]) and os.access(cq["command"], os.X_OK)
    assert cq["args"] == ["mcp"]
    assert servers(home / GEMINI)["cq"]["args"] == ["mcp"]
    out = agent("uninstall", "--user", cwd=project, home=home)
    assert set(out.values()) == {"removed"} and all(os.path.isabs(p) for p in out)
    assert list(home.iterdir()) == []


def test_an_edited_gemini_entry_is_kept_unless_forced(project, home):
    agent("install", "--gemini", cwd=project, home=home)
    settings = json.loads((project / GEMINI).read_text())
    settings["mcpServers"]["cq"]["trust"] = True
    (project / GEMINI).write_text(json.dumps(settings, indent=2))
    edited = (project / GEMINI).read_bytes()
    assert agent("uninstall", "--gemini", cwd=project, home=home) == {str(project / GEMINI): "kept"}
    assert (project / GEMINI).read_bytes() == edited
    agent("uninstall", "--gemini", "--force", cwd=project, home=home)
    assert not (project / ".gemini").exists()
