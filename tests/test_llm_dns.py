"""The LLM exchange's deadline covers name resolution, against a real slow resolver.

A DNS server on loopback holds its answers; ``cq`` runs in its own mount namespace
(``unshare -m``) whose ``/etc/resolv.conf`` names that server, so the system resolver that
cq's probe and httpx call is itself slow. The model's URL names a host only that server
knows; the model is a real HTTP server on loopback. This needs root (a mount namespace and
port 53): elsewhere the test is skipped, saying why.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import ModelServer
from rewrite_fixture import graph_repo

QUESTION = "how are edges inserted into the graph?"
HOST = "model.cq-dns-test"
# CQ_LLM_TIMEOUT: the whole exchange, resolution included. The fast part (the probe's
# loopback lookup and connect, when fast=2) must fit in it on a busy machine: at 1.5 s it
# did not always, nor at 6 s beside CPU burners, and the reason named the probe instead of
# the request. The held lookup is answered only after cq exits, so the deadline's length
# decides nothing else (each run waits it out once): when the probe's own lookup is held
# (fast=0) nothing has to fit in it, and a short one spares the wait.
TIMEOUT = 15.0
HELD_PROBE_TIMEOUT = 2.0
HOLD = 120.0  # a held lookup is answered then at the latest (a cq that waits for it); the
# resolver waits longer (resolv.conf: 5 attempts of 30 s, glibc's caps), so it never gives up first


class SlowDns:
    """Answers A queries for ``HOST`` with 127.0.0.1 (other types with no records): the first
    ``fast`` queries at once, later ones only when ``release`` is called (the test does
    once cq has exited; a timer after ``HOLD`` seconds, so a cq that waits is not stuck)."""

    def __init__(self, fast: int) -> None:
        self.fast = fast
        self.queries = 0
        self.released = False
        self._held: list[tuple[bytes, tuple[str, int]]] = []
        self._lock = threading.Lock()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        for attempt in range(20):  # a loopback address (127/8) whose port 53 is free
            self.address = f"127.77.{random.randrange(256)}.{random.randrange(1, 255)}"
            try:
                self.sock.bind((self.address, 53))
                break
            except OSError:
                if attempt == 19:
                    self.sock.close()
                    raise
        self._timer = threading.Timer(HOLD, self.release)
        self._timer.daemon = True
        self._timer.start()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                query, client = self.sock.recvfrom(512)
            except OSError:
                return  # closed
            with self._lock:
                self.queries += 1
                if self.queries > self.fast and not self.released:
                    self._held.append((query, client))
                    continue
            self._reply(query, client)

    def release(self) -> None:
        with self._lock:
            self.released = True
            held, self._held = self._held, []
        for query, client in held:
            self._reply(query, client)

    def _reply(self, query: bytes, client: tuple[str, int]) -> None:
        end = query.index(b"\0", 12) + 5  # the question: labels, then type and class
        qtype = int.from_bytes(query[end - 4 : end - 2], "big")
        answers = 1 if qtype == 1 else 0
        header = query[:2] + b"\x81\x80" + b"\0\x01" + answers.to_bytes(2, "big") + b"\0\0\0\0"
        record = b"\xc0\x0c\0\x01\0\x01\0\0\0\x3c\0\x04" + socket.inet_aton("127.0.0.1")
        with contextlib.suppress(OSError):  # closed meanwhile
            self.sock.sendto(header + query[12:end] + record * answers, client)

    def close(self) -> None:
        self._timer.cancel()
        self.sock.close()


def _namespaces_usable() -> str | None:
    """Why the slow resolver cannot be set up here, or None."""
    if sys.platform != "linux" or shutil.which("unshare") is None:
        return "needs Linux and unshare(1)"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return "cannot make a mount namespace (needs root)"
    return None


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


@pytest.mark.parametrize(
    ("fast", "timeout", "reason"),
    [
        (0, HELD_PROBE_TIMEOUT, "name resolution timed out"),
        (2, TIMEOUT, f"timed out after {TIMEOUT:g} s"),
    ],
    ids=["probe-resolves-slowly", "request-resolves-slowly"],
)
def test_a_slow_resolver_cannot_hold_the_search_past_the_llm_deadline(
    tmp_path: Path, model: ModelServer, fast: int, timeout: float, reason: str
) -> None:
    """The probe's lookup (fast=0), or the request's own lookup after a fast probe (fast=2:
    the probe's A and AAAA queries), is answered only once cq has exited: cq must finish
    without it, at its deadline, with the offline rewriter, saying why. (A cq that waited
    for the resolver could not finish first: the lookup is answered after ``HOLD`` s.)"""
    why = _namespaces_usable()
    if why is not None:
        pytest.skip(f"a slow resolver cannot be set up for real: {why}")
    try:
        dns = SlowDns(fast)
    except OSError as exc:
        pytest.skip(f"a slow resolver cannot be set up for real: port 53 ({exc.strerror})")
    resolv = tmp_path / "resolv.conf"
    resolv.write_text(f"nameserver {dns.address}\noptions timeout:30 attempts:5\n")
    port = model.url.rsplit(":", 1)[1]
    env = {
        "CQ_LLM_URL": f"http://{HOST}:{port}",
        "CQ_LLM_MODEL": "test-model",
        "CQ_LLM_TIMEOUT": str(timeout),
        "CQ_LLM": "on",
    }
    root = graph_repo(tmp_path)
    cq = [sys.executable, "-m", "cq", "search", QUESTION, "--root", str(root), "--format", "json"]
    inside = 'mount --bind "$0" /etc/resolv.conf && exec "$@"'
    try:
        run = subprocess.run(
            ["unshare", "-m", "sh", "-c", inside, str(resolv), *cq],
            capture_output=True,
            env={**os.environ, **env},
            timeout=600,
            check=False,
        )
        resolving = not dns.released  # cq finished while its lookup was still unanswered
        dns.release()
    finally:
        dns.close()
    assert run.returncode == 0, run.stderr.decode()
    assert resolving and dns.queries > fast  # the lookup went to the slow server, and waits
    rewrite = json.loads(run.stdout)["summary"]["rewrite"]
    assert rewrite["rewriter"] == "offline", rewrite
    assert reason in rewrite["fallback_reason"], rewrite
    assert model.requests == []  # no exchange began after the deadline
