"""Where each agent looks for commands, skills and instructions, and what cq puts there.

Claude Code: a command file ``.claude/commands/cq.md`` (``/cq search <query>``, the rest of the
line is ``$ARGUMENTS``), the guidance block in ``CLAUDE.md`` (project root) or
``~/.claude/CLAUDE.md``. Codex: a skill ``.agents/skills/cq/SKILL.md`` (project root or home),
a custom prompt ``$CODEX_HOME/prompts/cq.md`` (``/prompts:cq search <query>``; Codex reads
prompts only from ``CODEX_HOME``, default ``~/.codex``, so only with ``--user``) and the guidance
block in ``AGENTS.md`` (project root) or ``$CODEX_HOME/AGENTS.md``.

The MCP server (``cq mcp``) is registered as ``mcpServers.cq`` in Claude Code's ``.mcp.json``
(project root) or ``~/.claude.json`` (user scope), and as a marked ``[mcp_servers.cq]`` block in
Codex's ``.codex/config.toml`` (project root; Codex reads it in trusted projects) or
``$CODEX_HOME/config.toml``. Cursor reads it from ``mcpServers.cq`` in ``.cursor/mcp.json``
(project root or home), Gemini CLI from ``mcpServers.cq`` in ``.gemini/settings.json`` (the
same); both take the same ``command``/``args`` object as Claude Code.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from importlib import resources
from pathlib import Path
from typing import Literal

import msgspec

from cq.tools import cq_argv, cq_script

Agent = Literal["claude", "codex", "cursor", "gemini"]
AGENTS: tuple[Agent, ...] = ("claude", "codex", "cursor", "gemini")
DEFAULT_AGENTS: tuple[Agent, ...] = ("claude", "codex")  # install without an agent flag
Scope = Literal["project", "user"]
Kind = Literal["file", "block", "json"]

JSON_SERVERS = "mcpServers"  # the object of MCP servers in Claude Code's, Cursor's, Gemini's
CODEX_SERVERS = "mcp_servers"  # the TOML table of MCP servers in Codex's config
SERVER_NAME = "cq"
_BLOCK_NOTE = "(written by `cq agent install`; `cq agent uninstall` removes it)"


class Artifact(msgspec.Struct, frozen=True):
    """One thing the installer writes: a whole file, a marked block inside a file, or the
    ``mcpServers.cq`` member of a JSON file."""

    agent: Agent
    kind: Kind
    path: str  # absolute
    content: str  # the file's text, the block's text with both markers, or the member's JSON


class McpServer(msgspec.Struct, frozen=True):
    """How an agent starts cq's MCP server over stdio; both agents' configs take these keys."""

    command: str
    args: tuple[str, ...]


class Markers(msgspec.Struct, frozen=True):
    """The lines around cq's block, in the comment syntax of the file they sit in."""

    opening: str
    closing: str

    @property
    def begin_prefix(self) -> str:
        return f"{self.opening}cq:agent:begin"

    @property
    def begin(self) -> str:
        return f"{self.begin_prefix} {_BLOCK_NOTE}{self.closing}"

    @property
    def end(self) -> str:
        return f"{self.opening}cq:agent:end{self.closing}"


def markers(path: str) -> Markers:
    return Markers("# ", "") if path.endswith(".toml") else Markers("<!-- ", " -->")


def label(kind: Kind, path: str) -> str:
    """What a block or JSON entry is, for the report line (a whole file needs no label)."""
    if kind == "json" or path.endswith(".toml"):
        return f"MCP server {SERVER_NAME}"
    return "guidance block" if kind == "block" else ""


def home_dir() -> Path:
    """``$HOME`` first (so tests and sandboxes can point it elsewhere), then the OS's idea."""
    home = os.environ.get("HOME")
    return Path(os.path.abspath(home)) if home else Path.home()


def codex_home() -> Path:
    value = os.environ.get("CODEX_HOME")
    return Path(os.path.abspath(value)) if value else home_dir() / ".codex"


def anchors(scope: Scope, base: Path) -> tuple[Path, ...]:
    """The directories the installer was pointed at, links allowed: the project root or the
    home, and for ``--user`` a ``$CODEX_HOME`` set explicitly. Below them it follows none."""
    explicit = os.environ.get("CODEX_HOME")
    return (base, codex_home()) if scope == "user" and explicit else (base,)


class Invocation(msgspec.Struct, frozen=True):
    """How the files of one install run cq: the shell words of the ``/cq`` command and the
    guidance, and the MCP server's command; ``off_path`` names this cq when a project's files
    say ``cq`` and no ``cq`` on this machine's PATH is this one."""

    words: tuple[str, ...]
    server: McpServer
    off_path: str = ""


def invocation(scope: Scope, base: Path) -> Invocation:
    """How the files of an install in ``scope`` run cq.

    The user's own files (``--user``) name this very cq: the words its follow-ups start with
    (``cq.tools.cq_argv``), so the ``/cq`` command's ``allowed-tools`` covers them, and the
    server by absolute path (``mcp_server``). A project's files are committed and read on a
    teammate's machine, where this machine's venv path means nothing: they name an install
    inside the project by its path from the project root (a project's own ``.venv``, which
    each clone makes again; agents run commands and servers from the root), else ``cq`` as
    PATH finds it."""
    if scope == "user":
        return Invocation(cq_argv(), mcp_server())
    script = cq_script()
    beside = script or Path(sys.executable)
    inside = _below(beside, base)
    if inside is None:
        on_path = shutil.which("cq")
        mine = script is not None and on_path and Path(on_path).resolve() == script.resolve()
        return Invocation(("cq",), McpServer("cq", ("mcp",)), "" if mine else str(beside))
    words = (inside,) if script else (inside, "-P", "-m", "cq")
    return Invocation(words, McpServer(words[0], (*words[1:], "mcp")))


def _below(path: Path, base: Path) -> str | None:
    """``path`` relative to ``base`` (with a directory part, so a shell runs it rather than
    looking it up on PATH) when it lies inside ``base``, links followed or not."""
    for there, root in (
        (os.path.abspath(path), os.path.abspath(base)),
        (os.path.realpath(path), os.path.realpath(base)),
    ):
        rel = os.path.relpath(there, root)
        if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
            return rel if os.sep in rel else os.curdir + os.sep + rel
    return None


def mcp_server() -> McpServer:
    """How an agent starts this ``cq mcp`` from the user's own config: by absolute path,
    since an agent's PATH is not the shell's (a GUI launch, an unactivated venv); the
    interpreter itself if no script exists, with ``-P`` (Python 3.11+): the agent starts it
    inside the project, and ``-m`` alone would put that directory first on ``sys.path``, so a
    repository's own ``cq/`` or ``msgspec.py`` would be imported in place of cq's. (A script
    puts only its own directory there.)"""
    beside = cq_script()
    if beside is None:
        return McpServer(os.path.abspath(sys.executable), ("-P", "-m", "cq", "mcp"))
    return McpServer(str(beside), ("mcp",))


def artifacts(
    agents: tuple[Agent, ...], scope: Scope, base: Path, *, guidance: bool, mcp: bool
) -> list[Artifact]:
    """Everything ``install`` writes for these agents in this scope; ``base`` is the project
    root for ``project`` and the home directory for ``user``."""
    how = invocation(scope, base)
    cq, server = shlex.join(how.words), how.server
    project = scope == "project"
    out: list[Artifact] = []
    if "claude" in agents:
        out.append(_file("claude", base / ".claude" / "commands" / "cq.md", "claude_command", cq))
        if guidance:
            md = base / "CLAUDE.md" if project else base / ".claude" / "CLAUDE.md"
            out.append(_block("claude", md, _render(_template("guidance"), cq)))
        if mcp:
            config = base / ".mcp.json" if project else base / ".claude.json"
            out.append(_server("claude", config, server))
    if "codex" in agents:
        out.append(
            _file("codex", base / ".agents" / "skills" / "cq" / "SKILL.md", "codex_skill", cq)
        )
        if not project:
            out.append(_file("codex", codex_home() / "prompts" / "cq.md", "codex_prompt", cq))
        if guidance:
            md = base / "AGENTS.md" if project else codex_home() / "AGENTS.md"
            out.append(_block("codex", md, _render(_template("guidance"), cq)))
        if mcp:
            toml = (base / ".codex" if project else codex_home()) / "config.toml"
            out.append(_block("codex", toml, _codex_table(server)))
    if "cursor" in agents and mcp:
        out.append(_server("cursor", base / ".cursor" / "mcp.json", server))
    if "gemini" in agents and mcp:
        out.append(_server("gemini", base / ".gemini" / "settings.json", server))
    return out


def _server(agent: Agent, config: Path, server: McpServer) -> Artifact:
    """The ``mcpServers.cq`` member of a JSON config."""
    entry = msgspec.json.encode(server).decode()
    return Artifact(agent=agent, kind="json", path=str(config), content=entry)


def _file(agent: Agent, path: Path, template: str, cq: str) -> Artifact:
    text = _render(_template(template), cq)
    return Artifact(agent=agent, kind="file", path=str(path), content=text)


def _block(agent: Agent, path: Path, body: str) -> Artifact:
    mark, body = markers(str(path)), body.strip("\n")
    content = f"{mark.begin}\n{body}\n{mark.end}"
    return Artifact(agent=agent, kind="block", path=str(path), content=content)


def _codex_table(server: McpServer) -> str:
    args = ", ".join(_toml_string(a) for a in server.args)
    command = _toml_string(server.command)
    return f"[{CODEX_SERVERS}.{SERVER_NAME}]\ncommand = {command}\nargs = [{args}]"


def _toml_string(text: str) -> str:
    """A TOML basic string. JSON's escapes are TOML's, but TOML also escapes DEL."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _render(text: str, cq: str) -> str:
    text = text.replace("{{usage}}", _template("usage").strip("\n"))
    return text.replace("{{cq}}", cq)


def _template(name: str) -> str:
    return resources.files("cq.agent").joinpath("templates", f"{name}.md").read_text("utf-8")
