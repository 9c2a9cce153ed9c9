"""The MCP server's search processes: start them, hand each one search at a time, stop them.

A search runs in a process of its own (``cq.agent.search_worker`` says why), so the server's
event loop only parses messages and waits: it answers pings, lists and cancellations while a
search runs, whatever that search is doing. The first process is started with the server and
serves every search while it is idle; a search that arrives while all are busy starts
another, up to ``MAX_PROCESSES`` (a long search does not hold up the next one); past that,
searches wait for the first process free. A cancelled search is told to stop at its next
checkpoint; if it still runs ``CANCEL_GRACE_SECONDS`` later, its process group is killed and
the process replaced. A process whose answer says it retires (past its memory bound:
``cq.agent.search_worker``) is never handed another job; the next search starts a fresh
one. ``close`` kills every group, so the server exits at once on end of
input even while a search runs. A job's frame is encoded before a process takes it: a job
that cannot be sent never holds a process. While a search runs, the questions its process
asks the client's model (``Sample``) are answered by the call's ``ask``, on the event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable

import anyio
import msgspec

from cq.agent.worker_protocol import (
    Cancel,
    Done,
    Failed,
    FromSearch,
    FromWorker,
    Job,
    Sample,
    Sampled,
    SearchArgs,
    encode_frame,
    read_frame,
    write_frame,
)


class ClientModel(msgspec.Struct, frozen=True):
    """The MCP client's model for one call: ``client`` names it (its name and version),
    ``ask`` puts one question to it."""

    client: str
    ask: Callable[[Sample], Awaitable[Sampled]]


MAX_PROCESSES = 2  # each keeps its own warm caches; a second one only serves an overlap
# A cancelled search stops at its next checkpoint (each rg file, classification batch, stage
# and enriched hit). `bench/mcp_latency.py --cancel 3 -q self --limit 0 --cancel-after T` on
# the stdlib, T = 0.5, 1.5, 3, 6 s, load average ~20: stopped 0.02-0.97 s after the cancel
# (median 0.2 s). Twice the worst; a search still running then is stuck in one step (a C
# call, a network read) and is killed.
CANCEL_GRACE_SECONDS = 2.0

_decoder = msgspec.msgpack.Decoder(FromSearch)
_EXITED = "the search process exited (its error, if any, is on the server's stderr)"


class _Process:
    """One search process: its pipes, the job it runs, and a thread reading its answers."""

    def __init__(self, owner: SearchProcesses) -> None:
        self.proc = subprocess.Popen(
            # -P: the current directory (the searched repository, often) is not on sys.path,
            # so a ``cq`` package there is never imported in place of this one.
            [sys.executable, "-P", "-m", "cq.agent.search_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=hasattr(os, "killpg"),  # its own group: killed as one
        )
        self._owner = owner
        self._lock = threading.Lock()  # one writer at a time on the pipe
        self._state = threading.Lock()  # job_id, future and alive change together
        self.job_id = 0  # the job it runs; 0: idle
        self.future: concurrent.futures.Future[FromWorker] | None = None
        self.on_sample: Callable[[Sample], None] | None = None  # the running job's
        self.caches: dict[str, int] = {}
        self.alive = True
        threading.Thread(target=self._read, daemon=True, name="cq-search-reader").start()

    @property
    def idle(self) -> bool:
        return self.alive and self.job_id == 0

    def take(
        self, job_id: int, on_sample: Callable[[Sample], None] | None
    ) -> concurrent.futures.Future[FromWorker]:
        """Assign a job; its future holds the answer (or the process's death)."""
        future: concurrent.futures.Future[FromWorker] = concurrent.futures.Future()
        with self._state:
            if self.alive:
                self.job_id, self.future, self.on_sample = job_id, future, on_sample
                return future
        future.set_result(Failed(id=job_id, message=_EXITED))
        return future

    def send(self, message: Cancel | Sampled | bytes) -> None:
        # A dead process's pipe fails: its reader reports the end of its output.
        with self._lock, contextlib.suppress(OSError):
            write_frame(self.proc.stdin, message)  # type: ignore[arg-type]

    def cancel(self, job_id: int) -> None:
        self.send(Cancel(id=job_id))
        timer = threading.Timer(CANCEL_GRACE_SECONDS, self._kill_if_running, (job_id,))
        timer.daemon = True
        timer.start()

    def _kill_if_running(self, job_id: int) -> None:
        if self.job_id == job_id:
            self._owner.stopped_early += 1
            self._owner.killed += 1
            self.kill()

    def kill(self) -> None:
        if self.proc.poll() is not None:
            return
        if hasattr(os, "killpg"):
            with contextlib.suppress(ProcessLookupError):  # the process, its pool and rg
                os.killpg(self.proc.pid, signal.SIGKILL)
        else:
            self.proc.kill()

    def _read(self) -> None:
        while (message := read_frame(self.proc.stdout, _decoder)) is not None:  # type: ignore[arg-type]
            if isinstance(message, Sample):
                self._sample(message)
                continue
            assert isinstance(message, Done | Failed)
            if isinstance(message, Done):
                self.caches = message.caches
            elif message.cancelled:
                self._owner.stopped_early += 1
            if message.retiring:  # never handed another job: it is exiting
                with self._state:
                    self.alive = False
                self._owner.retired += 1
            self._settle(message)
        with self._state:
            self.alive = False
            job_id = self.job_id
        self.proc.wait()
        self._settle(Failed(id=job_id, message=_EXITED))
        self._owner.freed()

    def _sample(self, question: Sample) -> None:
        with self._state:
            on_sample = self.on_sample
        if on_sample is None:  # a job whose client offers no model never asks
            self.send(Sampled(id=question.id, text=None, reason="no client model"))
        else:
            on_sample(question)

    def _settle(self, outcome: FromWorker) -> None:
        with self._state:
            future = self.future
            if future is None or outcome.id != self.job_id:
                return
            self.job_id, self.future, self.on_sample = 0, None, None
        # A cancelled call cancelled the future (asyncio.wrap_future); nobody reads it then.
        with contextlib.suppress(concurrent.futures.InvalidStateError):
            future.set_result(outcome)
        self._owner.freed()


class SearchProcesses:
    """The pool of search processes of one server; ``search`` is called on its event loop."""

    def __init__(self) -> None:
        self._processes: list[_Process] = []
        self._next_id = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed: asyncio.Event | None = None
        self._closed = False
        self.stopped_early = 0  # cancelled searches that stopped (or were killed) unfinished
        self.killed = 0  # of those, searches still running CANCEL_GRACE_SECONDS after
        self.retired = 0  # processes that ended themselves to give their memory back

    def start(self) -> None:
        """Start the first process now: it imports the pipeline while the client connects."""
        self._processes.append(_Process(self))

    async def search(
        self, args: SearchArgs, server_root: str, cap: int, ask: ClientModel | None = None
    ) -> FromWorker:
        """Run one search in an idle process; a cancelled call stops it (see the module).
        ``ask`` answers the questions the search puts to the client's model."""
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop, self._changed = loop, asyncio.Event()
        self._next_id += 1
        client = ask.client if ask is not None else None
        job = Job(
            id=self._next_id,
            args=args,
            server_root=os.fsencode(server_root),
            cap=cap,
            client=client,
        )
        frame = encode_frame(job)  # before a process takes it (see the module)
        questions: asyncio.Queue[Sample] = asyncio.Queue()
        on_sample = None
        if ask is not None:

            def on_sample(question: Sample) -> None:  # on the process's reader thread
                with contextlib.suppress(RuntimeError):  # the loop closed: exiting
                    loop.call_soon_threadsafe(questions.put_nowait, question)

        process = await self._idle_process()
        future = process.take(job.id, on_sample)
        try:
            await anyio.to_thread.run_sync(process.send, frame)
            async with anyio.create_task_group() as tg:
                if ask is not None:
                    tg.start_soon(_answer_questions, process, questions, ask.ask)
                outcome = await asyncio.wrap_future(future)
                tg.cancel_scope.cancel()  # a question still open is abandoned
            return outcome
        except asyncio.CancelledError:
            process.cancel(job.id)
            raise

    def caches(self) -> dict[str, int]:
        """Parse-cache counters summed over the live processes (as of their last search)."""
        total: dict[str, int] = {}
        for process in self._processes:
            if process.alive:
                for key, value in process.caches.items():
                    total[key] = total.get(key, 0) + value
        return total

    def close(self) -> None:
        """Kill every process group (their searches are abandoned; the server is exiting)."""
        self._closed = True
        for process in self._processes:
            process.kill()

    async def _idle_process(self) -> _Process:
        assert self._changed is not None
        while True:
            self._processes = [p for p in self._processes if p.alive]
            for process in self._processes:
                if process.idle:
                    return process  # taken by the caller before it next awaits
            if len(self._processes) < MAX_PROCESSES:
                process = _Process(self)
                self._processes.append(process)
                return process
            changed = self._changed
            await changed.wait()

    def freed(self) -> None:
        """Called from a reader thread when a process finished its job or exited."""
        if self._loop is not None and not self._closed:
            with contextlib.suppress(RuntimeError):  # the loop closed: the server is exiting
                self._loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        assert self._changed is not None
        self._changed.set()
        self._changed = asyncio.Event()
        if not self._closed and not any(p.alive for p in self._processes):
            self.start()  # a killed process is replaced at once, ready for the next search


async def _answer_questions(
    process: _Process,
    questions: asyncio.Queue[Sample],
    ask: Callable[[Sample], Awaitable[Sampled]],
) -> None:
    """Put each question of the job's process to the client's model, one at a time (the
    search waits for each answer), and send the answer back."""
    while True:
        question = await questions.get()
        answer = await ask(question)
        await anyio.to_thread.run_sync(process.send, answer)
