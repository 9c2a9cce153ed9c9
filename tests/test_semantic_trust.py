"""A searched repository never makes cq run its program, nor read outside its root, through
Pyrefly: a hostile tree plants every way Pyrefly would find an interpreter or a path of its
choosing, and the real CLI and the real MCP server search it with the semantic stage on."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cq, write_tree
from tests.semantic_cli import ANSWER_BUDGET, semantic_of, semantic_on  # noqa: F401

SECRET = "hunter2-outside-the-root"


def _interpreter(marker: Path) -> str:
    """A 'python' that records that it ran, then behaves like one."""
    return f'#!/bin/sh\necho "$0 $*" >> "{marker}"\nexec "{sys.executable}" "$@"\n'


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """(root, marker): the root plants a virtualenv interpreter, configs naming interpreters,
    a find-command, search paths outside the root and a link to a file outside it."""
    marker = tmp_path / "ran.log"
    outside = write_tree(
        tmp_path / "outside",
        {"secretmod.py": f'from typing import Literal\nSECRET: Literal["{SECRET}"] = "{SECRET}"\n'},
    )
    root = tmp_path / "repo"
    uses = "from secretmod import SECRET\nfrom pkg import handler\n\nvalue = SECRET\nhandler(1)\n"
    write_tree(
        root,
        {
            ".venv/pyvenv.cfg": f"home = {Path(sys.executable).parent}\n",
            "pkg/__init__.py": "def handler(x: int) -> int:\n    return x + 1\n",
            "pyrefly.toml": 'python-interpreter-path = "evil/python"\n'
            f'search-path = ["{outside}", "../outside"]\n',
            "app/main.py": uses,
            "tool/pyproject.toml": "[tool.pyrefly]\n"
            f'python-interpreter-find-command = ["{root}/evil/python", "-c", "print(1)"]\n',
            "tool/run.py": uses,
            "typed/mypy.ini": f"[mypy]\npython_executable = {root}/evil/python\n"
            f"mypy_path = {outside}\n",
            "typed/check.py": uses,
            "linked.py": "from secret_link import SECRET\n\nlinked_value = SECRET\n",
            "pkg/deep/use.py": "from pkg.ext.secretmod import SECRET\n\ndeep_value = SECRET\n",
        },
    )
    os.symlink(outside, root / "pkg" / "ext")
    for name in (".venv/bin/python", ".venv/bin/python3", "evil/python"):
        _executable(root / name, _interpreter(marker))
    os.symlink(outside / "secretmod.py", root / "secret_link.py")
    return root, marker


def _semantic_answers(result: dict) -> list[dict]:
    return [s for f in result["findings"] if (s := semantic_of(f)) and s["status"] == "applied"]


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
def test_a_search_runs_no_program_of_the_tree_and_reads_nothing_outside(
    hostile: tuple[Path, Path],
) -> None:
    root, marker = hostile
    for query in ("handler", "SECRET", "linked_value", "deep_value"):
        run = run_cq("search", query, "--root", str(root), "--format", "json", env=ANSWER_BUDGET)
        assert run.returncode == 0, run.stderr
        assert SECRET not in run.stdout, query
        assert not marker.exists(), marker.read_text()
        result = run.json()
        answers = _semantic_answers(result)
        assert answers, f"Pyrefly answered nothing for {query}: the test proves nothing"
        if query == "handler":
            calls = [f for f in result["findings"] if f["category"] == "callsite"]
            targets = {json.dumps(semantic_of(f).get("definition"), sort_keys=True) for f in calls}
            # Pyrefly still resolves within the root, from every directory's files.
            assert targets == {
                json.dumps(
                    {"col": 4, "file": "pkg/__init__.py", "line": 1, "via": "pyrefly"},
                    sort_keys=True,
                )
            }
            assert len(calls) == 3


def test_the_mcp_server_runs_no_program_of_the_tree(
    hostile: tuple[Path, Path], tmp_path: Path
) -> None:
    """``cq mcp`` keeps its language server warm across calls: the same confinement."""
    import anyio
    from forked_mcp import forked_stdio_client
    from mcp import Client, StdioServerParameters

    root, marker = hostile
    env = {k: v for k, v in os.environ.items() if k.startswith(("CQ_", "PATH", "HOME", "XDG_"))}
    env.update(ANSWER_BUDGET)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "cq", "mcp", "--root", str(root)], env=env
    )
    texts: list[str] = []

    async def scenario() -> None:
        with (tmp_path / "server.err").open("w") as errlog:
            transport = forked_stdio_client(params, errlog=errlog)
            async with Client(transport, mode="legacy", read_timeout_seconds=120) as client:
                for query in ("handler", "deep_value"):
                    args = {"query": query, "format": "json", "limit": 10}
                    result = await client.call_tool("search", args)
                    assert not result.is_error
                    texts.append("".join(block.text for block in result.content))

    anyio.run(scenario)
    assert not marker.exists(), marker.read_text()
    assert all(SECRET not in text for text in texts)
    assert _semantic_answers(json.loads(texts[0]))


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
def test_the_cache_dir_keeps_no_view_after_a_search(hostile: tuple[Path, Path]) -> None:
    """The links cq shows Pyrefly are removed when the search ends."""
    root, _ = hostile
    run = run_cq("search", "handler", "--root", str(root), "--format", "json", env=ANSWER_BUDGET)
    assert run.returncode == 0, run.stderr
    views = Path(os.environ["CQ_CACHE_DIR"]) / "pyrefly-tmp" / "views"
    assert not views.exists() or list(views.iterdir()) == []


HUGE_FRAME_SERVER = """\
import sys, time
stdin = sys.stdin.buffer
while stdin.readline().strip():
    pass  # the initialize request's headers, then its body is left unread
sys.stdout.buffer.write(b"Content-Length: 100000000000000\\r\\n\\r\\n{")
sys.stdout.buffer.flush()
time.sleep(30)
"""


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
def test_a_language_server_announcing_a_huge_message_is_cut_off(tmp_path: Path) -> None:
    """A frame announced at 100 TB is refused unread: the search ends at once and reports the
    stage as failed (it was a MemoryError traceback)."""
    root = write_tree(tmp_path / "repo", {"a.py": "def handler():\n    pass\n\nhandler()\n"})
    server = tmp_path / "bin" / "pyrefly"
    _executable(server, f"#!{sys.executable}\n{HUGE_FRAME_SERVER}")
    run = run_cq(
        *("search", "handler", "--root", str(root), "--format", "json"),
        env={**ANSWER_BUDGET, "CQ_PYREFLY": str(server)},
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "MemoryError" not in run.stderr
    statuses = {semantic_of(f)["status"] for f in run.json()["findings"]}
    assert statuses == {"failed"}


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _state(pid: int) -> str:
    """The process's state letter (``T`` stopped, ``Z`` zombie), "" when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent death signal: Linux")
def test_a_stopped_language_server_dies_with_a_killed_cq(tmp_path: Path) -> None:
    """A language server that is stopped (SIGSTOP, a debugger) when cq is killed goes with
    it: it outlived cq before, holding the death signal until continued."""
    import signal
    import subprocess
    import time

    from cq.semantic.server import pyrefly_binary

    root = write_tree(tmp_path / "repo", {"a.py": "def handler():\n    pass\n\nhandler()\n"})
    stopping = tmp_path / "bin" / "pyrefly"  # stops itself at once, as a SIGSTOP would
    _executable(stopping, f'#!/bin/sh\nkill -STOP $$\nexec "{pyrefly_binary()}" "$@"\n')
    env = {**os.environ, **ANSWER_BUDGET, "CQ_SEMANTIC": "1", "CQ_PYREFLY": str(stopping)}
    cq = subprocess.Popen(
        [sys.executable, "-m", "cq", "search", "handler", "--root", str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    stopped: list[int] = []
    try:
        deadline = time.monotonic() + 300
        while not stopped and time.monotonic() < deadline and cq.poll() is None:
            stopped = [c for c in _children(cq.pid) if _state(c) == "T"]
            time.sleep(0.01)
        assert stopped, "cq started no language server"
    finally:
        cq.kill()
        cq.wait()
    # the kernel's signal is sent at once, but the stopped server is scheduled to die (and
    # its new parent to reap it) only when the CPU is free: seconds at load 25-30
    deadline = time.monotonic() + 120
    while _state(stopped[0]) not in ("", "Z", "X") and time.monotonic() < deadline:
        time.sleep(0.05)
    state = _state(stopped[0])
    if state not in ("", "Z", "X"):
        os.kill(stopped[0], signal.SIGKILL)
    assert state in ("", "Z", "X"), f"the stopped server outlived cq (state {state})"
