"""``cq agent install|uninstall`` on a temp project and a temp home."""

from __future__ import annotations

import json
import os
import re
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

# What install writes and prints, not how cq starts (forked_cli.py): the files name this
# interpreter and its script, the same in a fork; the servers they register are started for
# real below, and the non-UTF-8 project keeps a process of its own (its streams' encoding).
pytestmark = pytest.mark.cli_forked

CLAUDE_CMD = Path(".claude/commands/cq.md")
CODEX_SKILL = Path(".agents/skills/cq/SKILL.md")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return home


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def agent(*args: str, cwd: Path, home: Path) -> str:
    run = run_cq("agent", *args, cwd=cwd, env={"HOME": str(home), "PATH": path_with_cq()})
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    return run.stdout


def outcomes(out: str, root: Path | None = None) -> dict[str, str]:
    """The report of install or uninstall: the outcome for each path shown (every one
    absolute), keyed by the path relative to ``root``."""
    found = {}
    for line in out.splitlines():
        outcome, path = line.split()[:2]
        assert Path(path).is_absolute(), line
        found[os.path.relpath(path, root) if root else path] = outcome
    return found


def test_project_install_is_idempotent_and_uninstall_restores_the_tree(project, home):
    (project / "CLAUDE.md").write_text("# House rules\n\nTabs, never spaces.\n")
    before = snapshot(project)
    first = agent("install", "--guidance", cwd=project, home=home)
    assert "written" in first
    cmd = (project / CLAUDE_CMD).read_text()
    assert "$ARGUMENTS" in cmd and cmd.startswith("---\ndescription:")
    skill = (project / CODEX_SKILL).read_text()
    assert re.search(r"^name: cq$", skill, re.M) and "description:" in skill
    claude_md = (project / "CLAUDE.md").read_text()
    assert claude_md.startswith("# House rules\n\nTabs, never spaces.\n")
    assert "cq:agent:begin" in claude_md and (project / "AGENTS.md").exists()
    installed = snapshot(project)

    second = agent("install", "--guidance", cwd=project, home=home)
    assert snapshot(project) == installed
    assert all(line.startswith("unchanged") for line in second.splitlines())

    agent("uninstall", cwd=project, home=home)
    assert snapshot(project) == before
    assert sorted(p.name for p in project.iterdir()) == ["CLAUDE.md", "app.py"]
    assert list(home.iterdir()) == []


@pytest.mark.cli_subprocess  # PYTHONIOENCODING is read when the interpreter starts
def test_a_project_whose_name_is_not_utf8_installs_and_uninstalls(project, home):
    odd = project.rename(project.with_name("proj_\udce9"))
    (odd / "CLAUDE.md").write_text("# House rules\n")
    before = snapshot(odd)
    strict = {
        "HOME": str(home),
        "PATH": path_with_cq(),
        "PYTHONIOENCODING": "utf-8:strict",
    }  # as en_US.UTF-8 has it
    installed = run_cq("agent", "install", "--guidance", cwd=odd, env=strict)
    assert installed.returncode == 0, installed.stderr
    assert "proj_\\udce9/.mcp.json" in installed.stdout  # the name as markdown shows it
    removed = run_cq("agent", "uninstall", cwd=odd, env=strict)
    assert removed.returncode == 0, removed.stderr
    assert snapshot(odd) == before  # what install wrote was recorded, and removed


def test_edited_files_are_kept_unless_forced(project, home):
    agent("install", "--claude", cwd=project, home=home)
    cmd = project / CLAUDE_CMD
    edited = cmd.read_text() + "\nAlways pass --lang python.\n"
    cmd.write_text(edited)

    out = agent("install", "--claude", cwd=project, home=home)
    assert outcomes(out, project)[str(CLAUDE_CMD)] == "kept" and cmd.read_text() == edited
    out = agent("uninstall", "--claude", cwd=project, home=home)
    assert outcomes(out, project)[str(CLAUDE_CMD)] == "kept" and cmd.read_text() == edited

    out = agent("install", "--claude", "--force", cwd=project, home=home)
    assert outcomes(out, project)[str(CLAUDE_CMD)] == "overwritten"
    assert "Always pass" not in cmd.read_text()
    agent("uninstall", "--claude", cwd=project, home=home)
    assert not (project / ".claude").exists()


def test_a_file_the_user_wrote_first_is_never_replaced_or_removed(project, home):
    mine = project / CLAUDE_CMD
    mine.parent.mkdir(parents=True)
    mine.write_text("my own /cq command\n")
    assert agent("install", "--claude", cwd=project, home=home).startswith("kept")
    agent("uninstall", "--claude", "--project", cwd=project, home=home)
    assert mine.read_text() == "my own /cq command\n"


def test_edited_guidance_block_is_kept_and_the_rest_of_the_file_untouched(project, home):
    (project / "AGENTS.md").write_text("Intro line without newline")
    agent("install", "--codex", "--guidance", cwd=project, home=home)
    text = (project / "AGENTS.md").read_text()
    assert text.startswith("Intro line without newline\n\n<!-- cq:agent:begin")
    (project / "AGENTS.md").write_text(text.replace("## Code search", "## Code search (mine)"))
    agent("uninstall", "--codex", cwd=project, home=home)
    assert "(mine)" in (project / "AGENTS.md").read_text()
    agent("uninstall", "--codex", "--force", cwd=project, home=home)
    assert (project / "AGENTS.md").read_text() == "Intro line without newline"


def test_user_scope_writes_under_home_only(project, home):
    before = snapshot(project)
    agent("install", "--user", "--guidance", cwd=project, home=home)
    assert snapshot(project) == before
    assert (home / CLAUDE_CMD).is_file()
    assert (home / CODEX_SKILL).is_file()
    prompt = home / ".codex" / "prompts" / "cq.md"
    assert "$ARGUMENTS" in prompt.read_text()
    assert "cq:agent:begin" in (home / ".claude" / "CLAUDE.md").read_text()
    assert "cq:agent:begin" in (home / ".codex" / "AGENTS.md").read_text()
    agent("uninstall", "--user", cwd=project, home=home)
    assert list(home.iterdir()) == []


def test_codex_home_is_honoured_for_user_prompts(project, home, tmp_path):
    codex_home = tmp_path / "codex-home"
    env = {"HOME": str(home), "PATH": path_with_cq(), "CODEX_HOME": str(codex_home)}
    run = run_cq("agent", "install", "--codex", "--user", cwd=project, env=env)
    assert run.returncode == 0, run.stderr
    assert (codex_home / "prompts" / "cq.md").is_file()
    assert not (home / ".codex").exists() and (home / CODEX_SKILL).is_file()
    assert run_cq("agent", "uninstall", "--user", cwd=project, env=env).returncode == 0
    assert list(codex_home.rglob("*.md")) == [] and list(home.iterdir()) == []


def test_uninstall_without_a_manifest_removes_only_pristine_files(project, home, tmp_path):
    agent("install", "--claude", cwd=project, home=home)
    # A different cache dir: the manifest is gone, as after clearing the cache.
    run = run_cq(
        "agent",
        "uninstall",
        cwd=project,
        env={"HOME": str(home), "PATH": path_with_cq(), "CQ_CACHE_DIR": str(tmp_path)},
    )
    assert run.returncode == 0 and set(outcomes(run.stdout).values()) == {"removed"}
    assert not (project / CLAUDE_CMD).exists() and not (project / ".mcp.json").exists()


def test_uninstall_without_a_manifest_removes_files_holding_only_cqs_block(project, home, tmp_path):
    """As a JSON config holding only cq's server goes, a TOML config or guidance file holding
    nothing but cq's block goes too (none is left behind empty); one with the user's own
    text keeps it."""
    (project / "CLAUDE.md").write_text("# House rules\n")
    agent("install", "--guidance", cwd=project, home=home)
    assert (project / ".codex" / "config.toml").is_file() and (project / "AGENTS.md").is_file()
    env = {"HOME": str(home), "PATH": path_with_cq(), "CQ_CACHE_DIR": str(tmp_path / "other-cache")}
    run = run_cq("agent", "uninstall", cwd=project, env=env)
    assert run.returncode == 0 and set(outcomes(run.stdout).values()) == {"removed"}, run.stdout
    assert not (project / ".codex" / "config.toml").exists()
    assert not (project / "AGENTS.md").exists() and not (project / ".mcp.json").exists()
    assert (project / "CLAUDE.md").read_text().strip() == "# House rules"  # blank line: no record


def test_bad_invocations_are_one_line_errors(project, home):
    for args in (["agent"], ["agent", "install", "--user", "--project"], ["agent", "nope"]):
        run = run_cq(*args, cwd=project, env={"HOME": str(home), "PATH": path_with_cq()})
        assert run.returncode == 2
        assert run.stderr.startswith("cq: ") and run.stderr.count("\n") == 1
    run = run_cq(
        "agent",
        "install",
        "--root",
        str(project / "missing"),
        env={"HOME": str(home), "PATH": path_with_cq()},
    )
    assert run.returncode == 2 and "not found" in run.stderr


def test_templates_only_mention_flags_cq_search_accepts():
    from cq.agent.targets import artifacts

    helptext = run_cq("search", "--help").stdout
    texts = [
        a.content
        for a in artifacts(("claude", "codex"), "user", Path("/h"), guidance=True, mcp=False)
    ]
    flags = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", "\n".join(texts)))
    assert flags, "templates should teach some flags"
    assert sorted(f for f in flags if f not in helptext) == []


def test_project_and_user_installs_in_the_home_dir_stay_separate(home):
    agent("install", "--user", cwd=home, home=home)
    agent("install", "--project", "--guidance", cwd=home, home=home)
    agent("uninstall", "--project", cwd=home, home=home)
    assert not (home / "CLAUDE.md").exists() and not (home / "AGENTS.md").exists()
    assert (home / ".codex" / "prompts" / "cq.md").is_file()  # user scope untouched
    agent("uninstall", "--user", cwd=home, home=home)
    assert list(home.iterdir()) == []


MCP_JSON = Path(".mcp.json")
CODEX_TOML = Path(".codex/config.toml")
THEIRS = '{\n    "mcpServers": {\n        "docs": {"command": "docs-server", "args": []}\n    },\n'
THEIRS += '    "note": "kept as written"\n}\n'


def configs(out: str, project: Path) -> set[str]:
    """The outcomes for the project's two MCP configs (one when both agree)."""
    found = outcomes(out, project)
    return {found[str(MCP_JSON)], found[str(CODEX_TOML)]}


def cq_server(config: dict) -> dict:
    """The ``cq`` server an agent would start from this config (JSON or TOML, as parsed)."""
    return (config.get("mcpServers") or config["mcp_servers"])["cq"]


def test_mcp_server_is_merged_into_existing_configs_and_uninstall_restores_them(project, home):
    (project / MCP_JSON).write_text(THEIRS)
    (project / ".codex").mkdir()
    (project / CODEX_TOML).write_text('model = "o3"\n\n[mcp_servers.docs]\ncommand = "docs"\n')
    before = snapshot(project)

    out = agent("install", cwd=project, home=home)
    assert configs(out, project) == {"written"}
    claude = json.loads((project / MCP_JSON).read_text())
    assert claude["note"] == "kept as written"
    assert claude["mcpServers"]["docs"] == {"command": "docs-server", "args": []}
    server = cq_server(claude)
    assert server == {"command": "cq", "args": ["mcp"]}  # committed: cq as PATH finds it
    codex = tomllib.loads((project / CODEX_TOML).read_text())
    assert codex["model"] == "o3" and codex["mcp_servers"]["docs"] == {"command": "docs"}
    assert cq_server(codex) == server
    installed = snapshot(project)

    again = agent("install", cwd=project, home=home)
    assert set(outcomes(again).values()) == {"unchanged"} and snapshot(project) == installed

    out = agent("uninstall", cwd=project, home=home)
    assert configs(out, project) == {"removed"}
    assert snapshot(project) == before


def test_config_files_cq_created_are_removed_with_its_server(project, home):
    agent("install", cwd=project, home=home)
    assert set(json.loads((project / MCP_JSON).read_text())["mcpServers"]) == {"cq"}
    agent("uninstall", cwd=project, home=home)
    assert sorted(p.name for p in project.iterdir()) == ["app.py"]

    # User scope: Claude Code keeps its state in ~/.claude.json and rewrites it as it runs.
    agent("install", "--user", cwd=project, home=home)
    state = json.loads((home / ".claude.json").read_text())
    assert cq_server(state)["args"] == ["mcp"]
    assert cq_server(tomllib.loads((home / ".codex/config.toml").read_text()))["args"] == ["mcp"]
    rewritten = {"numStartups": 3, **state, "projects": {str(project): {}}}
    (home / ".claude.json").write_text(json.dumps(rewritten, indent=2))
    agent("uninstall", "--user", cwd=project, home=home)
    assert json.loads((home / ".claude.json").read_text()) == {
        "numStartups": 3,
        "projects": {str(project): {}},
    }
    (home / ".claude.json").unlink()
    assert list(home.iterdir()) == []


def test_edited_mcp_entries_are_kept_unless_forced(project, home):
    agent("install", cwd=project, home=home)
    claude = json.loads((project / MCP_JSON).read_text())
    cq_server(claude)["env"] = {"CQ_LLM": "off"}
    (project / MCP_JSON).write_text(json.dumps(claude))
    toml = (project / CODEX_TOML).read_text().replace('args = ["mcp"]', 'args = ["mcp", "-h"]')
    (project / CODEX_TOML).write_text(toml)
    edited = [(project / MCP_JSON).read_bytes(), (project / CODEX_TOML).read_bytes()]

    out = agent("install", cwd=project, home=home)
    assert configs(out, project) == {"kept"}
    out = agent("uninstall", cwd=project, home=home)
    assert configs(out, project) == {"kept"}
    assert [(project / MCP_JSON).read_bytes(), (project / CODEX_TOML).read_bytes()] == edited

    out = agent("install", "--force", cwd=project, home=home)
    assert configs(out, project) == {"overwritten"}
    assert "env" not in cq_server(json.loads((project / MCP_JSON).read_text()))
    assert cq_server(tomllib.loads((project / CODEX_TOML).read_text()))["args"] == ["mcp"]
    agent("uninstall", cwd=project, home=home)
    assert sorted(p.name for p in project.iterdir()) == ["app.py"]  # cq made those files


def test_a_config_with_its_own_cq_server_is_left_alone(project, home):
    (project / ".codex").mkdir()
    (project / CODEX_TOML).write_text('[mcp_servers.cq]\ncommand = "my-own-cq"\n')
    before = snapshot(project)
    out = agent("install", "--codex", "--force", cwd=project, home=home)
    assert outcomes(out, project)[str(CODEX_TOML)] == "kept"
    assert "defined outside cq's block" in out
    agent("uninstall", "--codex", "--force", cwd=project, home=home)
    assert snapshot(project) == before


@pytest.mark.parametrize(
    ("config", "text", "said"),
    [
        (MCP_JSON, '{"mcpServers": {"docs": {"command": "d"},}}\n', "not valid JSON"),  # comma
        (CODEX_TOML, "model = \n", "not valid TOML"),
    ],
    ids=["json", "toml"],
)
def test_install_into_a_config_that_does_not_parse_fails_and_changes_nothing(
    project, home, config, text, said
):
    """It said "kept ... left alone" and exited 0, though the MCP server was not registered:
    an agent then finds no cq, and nothing said so but a line among the others."""
    (project / config).parent.mkdir(exist_ok=True)
    (project / config).write_text(text)
    before = snapshot(project)
    run = run_cq("agent", "install", cwd=project, env={"HOME": str(home), "PATH": path_with_cq()})
    assert run.returncode != 0 and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert str(config) in run.stderr and said in run.stderr, run.stderr
    assert "Traceback" not in run.stderr
    assert snapshot(project) == before


def test_uninstall_keeps_the_codex_block_that_tables_of_the_users_extend(project, home):
    """A user who gave cq's server an env table of their own: removing cq's block alone left
    `[mcp_servers.cq.env]`, a server with no command, which Codex cannot load."""
    agent("install", "--codex", cwd=project, home=home)
    config = project / CODEX_TOML
    config.write_text(config.read_text() + '\n[mcp_servers.cq.env]\nFOO = "1"\n')
    before = config.read_text()
    for force in ((), ("--force",)):
        out = agent("uninstall", "--codex", *force, cwd=project, home=home)
        assert outcomes(out, project)[str(CODEX_TOML)] == "kept", out
        assert "[mcp_servers.cq.env]" in out and config.read_text() == before
    servers = tomllib.loads(config.read_text())["mcp_servers"]
    assert servers["cq"]["command"] and servers["cq"]["env"] == {"FOO": "1"}


def test_no_mcp_registers_nothing(project, home):
    out = agent("install", "--no-mcp", cwd=project, home=home)
    assert "MCP" not in out
    assert not (project / MCP_JSON).exists() and not (project / ".codex").exists()
    assert "--no-mcp" in run_cq("agent", "install", "--help").stdout


def test_registered_command_starts_a_working_mcp_server(project, home, tmp_path):
    """Start cq's server as the agents would, from the configs install wrote: a project's
    on a machine with cq on PATH (a teammate's), the user's with an environment that does
    not put this venv on PATH (an agent started from a GUI)."""
    agent("install", cwd=project, home=home)
    agent("install", "--user", cwd=project, home=home)
    base = {"HOME": str(home), "CQ_CACHE_DIR": str(tmp_path / "c")}
    bare = "/usr/bin:/bin"
    with_cq = os.pathsep.join([str(Path(sys.executable).parent), bare])
    servers = [
        (cq_server(json.loads((project / MCP_JSON).read_text())), with_cq),
        (cq_server(tomllib.loads((project / CODEX_TOML).read_text())), with_cq),
        (cq_server(json.loads((home / ".claude.json").read_text())), bare),
        (cq_server(tomllib.loads((home / ".codex" / "config.toml").read_text())), bare),
    ]

    async def tools_and_answer(server: dict, path: str) -> tuple[set[str], str]:
        params = StdioServerParameters(
            command=server["command"], args=server["args"], env={**base, "PATH": path}, cwd=project
        )
        with (tmp_path / "server.err").open("w") as errlog:
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, mode="legacy", read_timeout_seconds=120) as client:
                tools = {t.name for t in (await client.list_tools()).tools}
                found = await client.call_tool("search", {"query": "main", "limit": 3})
                return tools, "".join(block.text for block in found.content)

    # Configs that register the same command start the same process: each is started once.
    distinct = {(s["command"], tuple(s["args"]), path): (s, path) for s, path in servers}
    assert len(distinct) >= 2  # the project's command and the user's
    for server, path in distinct.values():
        tools, answer = anyio.run(tools_and_answer, server, path)
        assert tools == {"search", "stats"}
        assert "app.py:1:" in answer


@pytest.mark.parametrize(
    "theirs",
    [
        '{"mcpServers":{"docs":{"command":"d"}},"n":1}',  # minified
        '{\r\n\t"mcpServers": {\r\n\t\t"docs": {"command": "d"}\r\n\t}\r\n}\r\n',  # CRLF, tabs
        '{\n    "theme": "dark",\n    "mcpServers": {}\n}\n',  # no server yet
        '{\n  "theme": "dark"\n}',  # no mcpServers at all
    ],
)
def test_cq_entry_is_laid_out_like_its_neighbours(project, home, theirs):
    (project / MCP_JSON).write_bytes(theirs.encode())
    agent("install", "--claude", cwd=project, home=home)
    ours = (project / MCP_JSON).read_bytes().decode()
    assert cq_server(json.loads(ours))["args"] == ["mcp"]
    assert json.loads(ours) | {"mcpServers": {}} == json.loads(theirs) | {"mcpServers": {}}
    if "\r\n" in theirs:
        assert ours.count("\n") == ours.count("\r\n")
    if "\t" in theirs:
        assert "\n " not in ours
    if "\n" not in theirs:
        assert "\n" not in ours and '"cq":{"command":' in ours
    agent("uninstall", "--claude", cwd=project, home=home)
    assert (project / MCP_JSON).read_bytes() == theirs.encode()


def test_interpreter_registration_is_not_shadowed_by_the_project(project, home, tmp_path):
    """Without a ``cq`` script beside the interpreter, a user install registers the
    interpreter itself. An agent starts that server with the project as its working directory: a
    project's own ``msgspec.py`` or ``cq/`` package must not be imported in place of cq's
    modules (``python -m`` alone puts the working directory first on ``sys.path``)."""
    bare = tmp_path / "bare"  # an interpreter with no cq script beside it
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    source = Path(cq.__file__).parent.parent  # cq and its dependencies, by PYTHONPATH
    packages = [p for p in sys.path if p.endswith("site-packages")]
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": os.pathsep.join([str(source), *packages]),
        "CQ_RG": find_rg(),
        "CQ_CACHE_DIR": str(tmp_path / "c"),
    }
    python = str(bare / "bin" / "python")
    cmd = [python, "-m", "cq", "agent", "install", "--claude", "--user"]
    subprocess.run(cmd, cwd=project, env=env, check=True, capture_output=True)
    server = cq_server(json.loads((home / ".claude.json").read_text()))
    assert server["command"] == python
    shadow = "raise ImportError(\"the project's {} was imported instead of cq's\")\n"
    (project / "msgspec.py").write_text(shadow.format("msgspec.py"))
    (project / "cq").mkdir()
    (project / "cq" / "__init__.py").write_text(shadow.format("cq/"))

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
    assert "was imported instead" not in (tmp_path / "server.err").read_text()
