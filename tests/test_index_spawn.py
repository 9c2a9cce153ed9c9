"""A large index update inside a search runs in a child process (``cq/index/spawn.py``).

A profile lowers ``[index] spawn_bytes`` so a small tree takes that path for real (real
``cq search`` subprocesses, the real child, tantivy): the index it builds answers exactly as
one built in the search's thread, an unchanged tree is not indexed again, and a child whose
cq was killed outright does not outlive it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cq, write_tree

MODULE = '''"""Uploads of module {i}."""


class UploadHandler{i}:
    """Receive the chunks of an upload and store them."""

    def receive_chunk(self, chunk):
        return chunk

    def file_complete(self, size):
        return size
'''
QUESTION = "where are the chunks of an upload received?"


def _ask(repo: Path, cache: Path, spawn_bytes: int) -> dict:
    profile = repo / f"spawn-{spawn_bytes}.toml"
    profile.write_text(f"[index]\nspawn_bytes = {spawn_bytes}\n")
    run = run_cq(
        "search",
        "-",
        "--root",
        str(repo),
        "--format",
        "json",
        "--profile",
        str(profile),
        stdin=QUESTION,
        env={"CQ_CACHE_DIR": str(cache), "CQ_SEMANTIC": "0"},
    )
    assert run.returncode in (0, 1), run.stderr
    return run.json()


def _answer(data: dict) -> tuple[list, list]:
    functions = next(s for s in data["sections"] if s["type"] == "functions")
    return data["findings"], functions["functions"]


def test_a_build_apart_answers_as_a_build_in_the_thread(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "repo", {f"app/uploads/m{i:02d}.py": MODULE.format(i=i) for i in range(24)}
    )
    apart = _ask(repo, tmp_path / "apart", 1)
    counters = apart["run"]["counters"]
    assert counters["index.files_updated"] == 24
    assert counters["index.files_built_apart"] == 24
    here = _ask(repo, tmp_path / "here", 1 << 40)
    assert here["run"]["counters"]["index.files_updated"] == 24
    assert here["run"]["counters"].get("index.files_built_apart", 0) == 0
    assert apart["summary"]["telemetry"]["index"] == here["summary"]["telemetry"]["index"]
    assert _answer(apart)[1] and _answer(apart) == _answer(here)
    again = _ask(repo, tmp_path / "apart", 1)  # the tree did not change: nothing re-indexed
    assert again["run"]["counters"].get("index.files_updated", 0) == 0
    assert _answer(again) == _answer(apart)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(fields[1]) == pid and b"cq.index.spawn" in cmdline:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(sys.platform != "linux", reason="reads the process table from /proc")
def test_the_child_dies_with_a_killed_cq(tmp_path: Path) -> None:
    repo = write_tree(
        tmp_path / "repo",
        {f"pkg{i // 100}/m{i:04d}.py": MODULE.format(i=i) * 8 for i in range(1500)},
    )
    profile = write_tree(repo, {"p.toml": "[index]\nspawn_bytes = 1\n"}) / "p.toml"
    env = {**os.environ, "CQ_CACHE_DIR": str(tmp_path / "cache"), "CQ_SEMANTIC": "0"}
    argv = [sys.executable, "-m", "cq", "search", QUESTION, "--root", str(repo)]
    cq = subprocess.Popen(
        [*argv, "--rewrite", "--profile", str(profile)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    children: list[int] = []
    deadline = time.monotonic() + 60
    while not children and cq.poll() is None and time.monotonic() < deadline:
        children = _children(cq.pid)
        time.sleep(0.01)
    assert children, "the search finished before its index child was seen"
    cq.send_signal(signal.SIGKILL)
    cq.wait()
    deadline = time.monotonic() + 20
    while any(_alive(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(c) for c in children)
    run = run_cq(
        "search",
        "-",
        "--root",
        str(repo),
        "--format",
        "json",
        stdin=QUESTION,
        env={"CQ_CACHE_DIR": str(tmp_path / "cache"), "CQ_SEMANTIC": "0"},
    )
    assert run.returncode in (0, 1), run.stderr
    assert run.json()["summary"]["telemetry"]["index"]["files"] == 1500
