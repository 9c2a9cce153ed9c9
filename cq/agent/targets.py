"""Where each agent looks for commands, skills and instructions, and what cq puts there.

Claude Code: a command file ``.claude/commands/cq.md`` (``/cq search <query>``, the rest of the
line is ``$ARGUMENTS``), the guidance block in ``CLAUDE.md`` (project root) or
``~/.claude/CLAUDE.md``. Codex: a skill ``.agents/skills/cq/SKILL.md`` (project root or home),
a custom prompt ``$CODEX_HOME/prompts/cq.md`` (``/prompts:cq search <query>``; Codex reads
prompts only from ``CODEX_HOME``, default ``~/.codex``, so only with ``--user``) and the guidance
block in ``AGENTS.md`` (project root) or ``$CODEX_HOME/AGENTS.md``.
"""

from __future__ import annotations

import os
import shutil
import sys
from importlib import resources
from pathlib import Path
from typing import Literal

import msgspec

Agent = Literal["claude", "codex"]
Scope = Literal["project", "user"]
Kind = Literal["file", "block"]

BLOCK_BEGIN = (
    "<!-- cq:agent:begin (written by `cq agent install`; `cq agent uninstall` removes it) -->"
)
BLOCK_END = "<!-- cq:agent:end -->"


class Artifact(msgspec.Struct, frozen=True):
    """One thing the installer writes: a whole file, or a marked block inside a file."""

    agent: Agent
    kind: Kind
    path: str  # absolute
    content: str  # the file's text, or the block's text including both markers


def home_dir() -> Path:
    """``$HOME`` first (so tests and sandboxes can point it elsewhere), then the OS's idea."""
    home = os.environ.get("HOME")
    return Path(home) if home else Path.home()


def codex_home() -> Path:
    value = os.environ.get("CODEX_HOME")
    return Path(value) if value else home_dir() / ".codex"


def cq_command() -> str:
    """How an agent should invoke this cq: ``cq`` when PATH finds this very install, else the
    absolute path of its script (another tool named ``cq`` may come first on PATH)."""
    beside = Path(sys.executable).parent / "cq"
    on_path = shutil.which("cq")
    if not beside.exists():
        return "cq" if on_path else f"{sys.executable} -m cq"
    if on_path and Path(on_path).resolve() == beside.resolve():
        return "cq"
    return str(beside)


def artifacts(
    agents: tuple[Agent, ...], scope: Scope, base: Path, guidance: bool
) -> list[Artifact]:
    """Everything ``install`` writes for these agents in this scope; ``base`` is the project
    root for ``project`` and the home directory for ``user``."""
    cq = cq_command()
    out: list[Artifact] = []
    if "claude" in agents:
        out.append(_file("claude", base / ".claude" / "commands" / "cq.md", "claude_command", cq))
        if guidance:
            md = base / "CLAUDE.md" if scope == "project" else base / ".claude" / "CLAUDE.md"
            out.append(_block("claude", md, cq))
    if "codex" in agents:
        out.append(
            _file("codex", base / ".agents" / "skills" / "cq" / "SKILL.md", "codex_skill", cq)
        )
        if scope == "user":
            out.append(_file("codex", codex_home() / "prompts" / "cq.md", "codex_prompt", cq))
        if guidance:
            md = base / "AGENTS.md" if scope == "project" else codex_home() / "AGENTS.md"
            out.append(_block("codex", md, cq))
    return out


def _file(agent: Agent, path: Path, template: str, cq: str) -> Artifact:
    text = _render(_template(template), cq)
    return Artifact(agent=agent, kind="file", path=str(path), content=text)


def _block(agent: Agent, path: Path, cq: str) -> Artifact:
    body = _render(_template("guidance"), cq).strip("\n")
    return Artifact(
        agent=agent, kind="block", path=str(path), content=f"{BLOCK_BEGIN}\n{body}\n{BLOCK_END}"
    )


def _render(text: str, cq: str) -> str:
    text = text.replace("{{usage}}", _template("usage").strip("\n"))
    return text.replace("{{cq}}", cq)


def _template(name: str) -> str:
    return resources.files("cq.agent").joinpath("templates", f"{name}.md").read_text("utf-8")
