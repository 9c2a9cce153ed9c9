"""One ``pyrefly lsp`` process per searched root: started in the background, kept warm for the
life of the cq process (``cq mcp`` keeps it across searches), stopped at exit.

A server started for a one-shot search runs ``--indexing-mode none`` (``cq/settings.py`` says
why): it checks only the files cq opens, with all cores, since cq waits for it then; one that
indexes (``cq mcp``, ``index = "always"``) keeps half the cores for cq while it indexes.

Start-up: ``initialize`` with the root as the one workspace folder (and the client capability
``workspace.workspaceFolders``: without it Pyrefly 1.4.1 indexes nothing, and references stay
within open files), answers ``workspace/configuration`` with ``displayTypeErrors: force-on``
(type errors also where the tree has no Pyrefly config) and no hover go-to links. Pyrefly
then indexes the workspace in the background (``--workspace-indexing-limit`` raised from its
2000 files so a 4,000-file repository is covered). It reports the end of indexing only on
stderr ("Populated all files in the ..."), so that is what ``indexed`` watches; references
asked before then may be partial and are marked so by the stage. Pyrefly 1.4.1 indexes a
workspace with its own required excludes only (a client's ``extraProjectExcludes`` did not
keep an excluded ``vendor/`` out of the references) and finds no file under a hidden directory:
the stdlib of a pyenv Python (``~/.pyenv/...``) is not indexed at all ("Prepare to check 0
files"), its memory is that of the files cq opens and what they import (``MAX_OPEN_FILES``).

Files: Pyrefly reads the tree and writes nothing into it (checked: a tree diffed before and
after a session, with and without a ``pyproject.toml``). It has no on-disk cache; it unpacks
its bundled typeshed under ``$TMPDIR``, which points into cq's cache dir. The child gets a
parent death signal (Linux ``PR_SET_PDEATHSIG``, tied to the pool's spawner thread, which lives
as long as cq) so a killed cq leaves no orphan; ``atexit`` and cq's SIGTERM handler stop it
cleanly otherwise.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from cq.semantic.rpc import Connection, RpcError
from cq.semantic.view import WorkspaceView

INDEXING_LIMIT = 100_000  # files; Pyrefly's default 2000 leaves larger roots half-indexed
# Python files past which a server asked to index the workspace checks only the files cq opens
# (no reference counts): Pyrefly's index grows with the tree (the 24,914-file audit tree of
# bench/audit_scale.py: 1.8 GB RSS after 35 s of indexing, still growing), which no search's
# reference counts are worth. At ~75 KB a file, 4,000 files keep it near 300 MB.
WORKSPACE_INDEX_MAX_FILES = 4000
# Pyrefly's threads when it indexes: half the cores, so its background indexing leaves cq's
# classification and enrichment (whose LibCST stage has a wall-time budget) the other half.
# After indexing, Pyrefly publishes the open files' diagnostics again; when it has nothing new
# to say for a file it may not, so the earlier publish stands after this grace.
REPUBLISH_GRACE_S = 1.0
# Files kept open, least recently used closed past it: Pyrefly holds every open file checked,
# with what it imports. Measured (stdlib root, six searches of bench/semantic_cost.py kept
# open): 45 open files 400 MB, 79 570 MB, 151 1.1 GB; closing them gave 590 MB back at its next
# check. A search opens at most 40 (PREOPEN_FILES) + its shown hits' files; those stay open.
MAX_OPEN_FILES = 80
_INIT_TIMEOUT_S = 10.0
_STDERR_TAIL = 20


def pyrefly_binary(explicit: str | None = None) -> str | None:
    """``explicit`` (``CQ_PYREFLY``, ``SemanticSettings.pyrefly``) when given, else the
    ``pyrefly`` installed beside this Python, else PATH."""
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    beside = Path(sys.executable).parent / "pyrefly"
    if os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("pyrefly")


class PyreflyServer:
    """A running (or starting, or dead) language server for one root."""

    def __init__(self, root: str, binary: str, scratch: Path, *, indexing: bool = True) -> None:
        self.root = root
        self.binary = binary
        self.scratch = scratch
        self.requested_indexing = indexing  # what the pool was asked for (``pool._reusable``)
        self.indexing = indexing  # builds the workspace index (references); else none at all
        self.process: subprocess.Popen[bytes] | None = None
        self.conn: Connection | None = None
        self.view = WorkspaceView(root, scratch)
        self.error: str | None = None
        self.initialized = threading.Event()
        self.started_at = time.monotonic()
        self._lock = threading.Lock()
        # Held while a file is opened (``sync``): the search's early opening
        # (``stage.prepare``) and the batch's own may meet; the batch waits for the didOpen.
        self._sync_lock = threading.Lock()
        self._versions: dict[str, tuple[int, str]] = {}  # open path -> (version, digest)
        self._last_version: dict[str, int] = {}
        # Published diagnostics by file path: Pyrefly's URIs spell some characters unlike
        # ``Path.as_uri`` ("+" literal, not %2B: index-bench's "Lightning-AI+pytorch-lightning"
        # matched no published URI, and every search there waited out its whole budget).
        self._diagnostics: dict[str, tuple[int | None, list[Any], float]] = {}
        self._indexed_at = 0.0  # when the last indexing pass ended (stderr)
        self._diag_changed = threading.Condition(self._lock)
        self._indexing_started = 0
        self._indexing_done = 0
        self._workspace_indexed = threading.Event()
        self._stderr_tail: list[str] = []

    # -- lifecycle -------------------------------------------------------------------------

    def spawn(self) -> None:
        """Start the process (called on the pool's spawner thread, which lives as long as cq:
        the parent death signal is tied to the thread that forked)."""
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.view.build()
        if self.indexing and self.view.python_files > WORKSPACE_INDEX_MAX_FILES:
            self.indexing = False
        env = self.view.environment(self.scratch)
        argv = [self.binary, "lsp"]
        if self.indexing:
            argv += ["--workspace-indexing-limit", str(INDEXING_LIMIT)]
            argv += ["--threads", str(max(1, (os.cpu_count() or 2) // 2))]
        else:
            argv += ["--indexing-mode", "none", "--threads", "0"]  # 0: Pyrefly's choice, all
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(self.scratch),
            env=env,
            preexec_fn=_death_signal(),
        )
        threading.Thread(target=self._read_stderr, name="cq-lsp-stderr", daemon=True).start()
        self.conn = Connection(
            self.process,
            self._on_request,
            self._on_notification,
            outgoing=self.view.translate_out,
            incoming=self.view.translate_in,
        )

    def handshake(self) -> None:
        """``initialize`` and ``initialized``; on failure ``error`` says why."""
        try:
            if self.conn is None:
                raise RpcError("not started")
            uri = Path(self.root).as_uri()
            # a name to show, which JSON must carry: a root's bytes that are not UTF-8 as U+FFFD
            name = os.fsencode(Path(self.root).name).decode("utf-8", "replace") or "root"
            self.conn.request(
                "initialize",
                {
                    "processId": os.getpid(),
                    # The settings again, so they hold from the first file opened on (the
                    # workspace/configuration answer may come after indexing started).
                    "initializationOptions": self._settings(),
                    "rootUri": uri,
                    "workspaceFolders": [{"uri": uri, "name": name}],
                    "capabilities": {
                        "workspace": {"configuration": True, "workspaceFolders": True},
                        "textDocument": {
                            "hover": {"contentFormat": ["markdown", "plaintext"]},
                            "publishDiagnostics": {"versionSupport": True},
                        },
                    },
                },
                _INIT_TIMEOUT_S,
            )
            self.conn.notify("initialized", {})
        except (RpcError, OSError) as exc:
            self.error = f"initialize failed: {exc}"
        except UnicodeEncodeError:  # JSON cannot name a scratch dir whose name is not UTF-8
            self.error = "initialize failed: cq's cache dir has a name that is not UTF-8"
        finally:
            self.initialized.set()

    def alive(self) -> bool:
        return (
            self.process is not None
            and self.process.poll() is None
            and self.conn is not None
            and not self.conn.closed.is_set()
        )

    def stop(self) -> None:
        """Kill and reap. Pyrefly keeps no state to save, so neither an LSP ``shutdown``
        handshake (a busy server answered it only after its grace) nor SIGTERM is needed:
        a busy server was slow to act on SIGTERM (figures:
        bench/results/2026-11-29-figures-from-cq.md), which every one-shot search paid at
        exit; SIGKILL ends it at once."""
        process = self.process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        self.view.remove()

    # -- documents -------------------------------------------------------------------------

    def sync(self, path: str, text: str, digest: str) -> int:
        """Open ``path`` (absolute) with ``text``, or send the new text if it changed since;
        returns the version whose diagnostics belong to this text."""
        with self._sync_lock:  # a question about the file follows its didOpen, whoever sent it
            return self._sync(path, text, digest)

    def _sync(self, path: str, text: str, digest: str) -> int:
        assert self.conn is not None
        self.view.link(path)  # a file new since the view was built
        uri = Path(path).as_uri()
        with self._lock:
            known = self._versions.pop(path, None)
            self._versions[path] = known or (0, "")  # most recently used last
            if known is not None and known[1] == digest:
                return known[0]
            version = self._last_version.get(path, 0) + 1  # rising across close and reopen
            self._last_version[path] = version
            self._versions[path] = (version, digest)
        if known is None:
            document = {"uri": uri, "languageId": "python", "version": version, "text": text}
            self.conn.notify("textDocument/didOpen", {"textDocument": document})
        else:
            self.conn.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": text}],
                },
            )
        return version

    def trim(self, keep: set[str]) -> None:
        """Close the least recently used open files past ``MAX_OPEN_FILES``, never those in
        ``keep`` (the current search's)."""
        with self._lock:
            spare = [p for p in self._versions if p not in keep]
            closing = spare[: max(len(self._versions) - MAX_OPEN_FILES, 0)]
            for path in closing:
                del self._versions[path]
                self._diagnostics.pop(path, None)
        for path in closing:
            with contextlib.suppress(RpcError):
                uri = Path(path).as_uri()
                self.conn.notify("textDocument/didClose", {"textDocument": {"uri": uri}})  # type: ignore[union-attr]

    def diagnostics(self, path: str, version: int, deadline: float) -> list[Any] | None:
        """The diagnostics published for this version of the file after indexing ended (Pyrefly
        checks open files again then, and the first publish may rest on a state it had not
        finished), waiting until ``deadline`` (``time.monotonic``); None when none came."""
        with self._diag_changed:
            while True:
                got = self._diagnostics.get(path)
                indexed = not self.indexing or (
                    self._workspace_indexed.is_set()
                    and self._indexing_done >= self._indexing_started
                )
                if (
                    got is not None
                    and (got[0] is None or got[0] >= version)
                    and indexed
                    and (
                        got[2] > self._indexed_at
                        or time.monotonic() > self._indexed_at + REPUBLISH_GRACE_S
                    )
                ):
                    return got[1]
                left = deadline - time.monotonic()
                if left <= 0 or not self.alive():
                    return None
                self._diag_changed.wait(min(left, 0.05))

    def indexed(self) -> bool:
        """Pyrefly finished indexing the workspace and every config it started on (a server
        that does not index has nothing to finish)."""
        if not self.indexing:
            return True
        with self._lock:
            return self._workspace_indexed.is_set() and (
                self._indexing_done >= self._indexing_started
            )

    def wait_indexed(self, deadline: float) -> bool:
        while not self.indexed():
            if time.monotonic() >= deadline or not self.alive():
                return False
            self._workspace_indexed.wait(min(0.05, max(deadline - time.monotonic(), 0.0)))
            time.sleep(0.005)
        return True

    def stderr_tail(self) -> str:
        with self._lock:
            return self._stderr_tail[-1] if self._stderr_tail else ""

    # -- server to client --------------------------------------------------------------------

    def _on_request(self, method: str, message: dict[str, Any]) -> Any:
        if method == "workspace/configuration":
            items = (message.get("params") or {}).get("items") or [{}]
            return [self._settings() for _ in items]
        return None  # registerCapability, workDoneProgress/create: accepted, nothing to do

    def _settings(self) -> dict[str, Any]:
        """What cq tells Pyrefly: cq's own config (``view.py``: no interpreter, nothing outside
        the root), errors shown, no hover go-to links."""
        return {
            "analysis": {"showHoverGoToLinks": False},
            "pyrefly": {"displayTypeErrors": "force-on", "configPath": str(self.view.config)},
        }

    def _on_notification(self, method: str, params: Any) -> None:
        if method != "textDocument/publishDiagnostics" or not isinstance(params, dict):
            return
        with self._diag_changed:
            self._diagnostics[_uri_path(params.get("uri", ""))] = (
                params.get("version"),
                params.get("diagnostics") or [],
                time.monotonic(),
            )
            self._diag_changed.notify_all()

    def _read_stderr(self) -> None:
        stream = self.process.stderr if self.process is not None else None
        if stream is None:
            return
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", errors="replace").strip()
            with self._diag_changed:
                self._diag_changed.notify_all()
                if "Populating " in line:
                    self._indexing_started += 1
                elif "Populated all files in the " in line:
                    self._indexing_done += 1
                    self._indexed_at = time.monotonic()
                    if "in the workspace" in line:
                        self._workspace_indexed.set()
                elif line and " INFO " not in f" {line}" and "DEBUG" not in line:
                    self._stderr_tail = [*self._stderr_tail[-_STDERR_TAIL:], line]


def _uri_path(uri: str) -> str:
    """The file path of a ``file:`` URI as Pyrefly spells it (percent-escapes decoded; bytes
    that are not UTF-8 as lone surrogates, the key ``sync`` was given for that file)."""
    parsed = urlparse(uri)
    return unquote(parsed.path, errors="surrogateescape") if parsed.scheme == "file" else uri


def _death_signal() -> Callable[[], None]:
    """For the child, before exec: SIGKILL when the thread that forked it dies (Linux
    ``PR_SET_PDEATHSIG``), and a lower priority (``_NICE``). libc is looked up here, in the
    parent: nothing is imported or loaded between fork and exec."""
    if not sys.platform.startswith("linux"):
        return _lowered
    import ctypes

    try:
        prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return _lowered

    def before_exec() -> None:
        # SIGKILL, not SIGTERM: a stopped server (SIGSTOP, a debugger) holds SIGTERM until
        # it is continued, and outlived a killed cq; Pyrefly keeps no state a kill would lose.
        prctl(1, signal.SIGKILL)
        _lowered()

    return before_exec


# Pyrefly checks the tree for answers later searches read from the cache; a search does not
# wait for it unless asked to (``--semantic-wait``). At the searches' priority it took their
# CPU and warm questions through the server waited about twice as long as with the stage off
# (``python -m bench.cold_questions --issues 10 --busy 1 --via server``;
# bench/results/semantic-figures.md). Not tuned: the index's
# background build runs at the same priority (``cq.index.behind``).
_NICE = 10


def _lowered() -> None:
    if hasattr(os, "nice"):
        os.nice(_NICE)
