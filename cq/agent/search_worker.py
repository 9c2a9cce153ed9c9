"""A search process of ``cq mcp``: runs the searches the server hands it, one at a time.

Why a process and not a thread of the server: a step that runs in C holds the interpreter
lock for as long as it runs (a regular expression over a long query held it for seconds),
and a server thread waiting on that lock answers no ping, no cancellation and no end of
input. In a process of its own a search can always be stopped: first by its ``CancelToken``
at the next checkpoint, then, if it does not stop, by the server killing the process group
(``cq.agent.workers``). The process lives as long as the server, so the parse caches, the
classifier's pool and the sqlite connection stay warm between calls, and all searches run
on its main thread, as in a one-shot ``cq search``.

Started as ``python -m cq.agent.search_worker`` with frames (``cq.agent.worker_protocol``) on
stdin and stdout. A job whose MCP client offers its model gets it as the rewrite's
``CallerModel``: a question goes to the server as a ``Sample`` and the search waits for its
``Sampled`` (the rewrite's deadline bounds the wait; a cancel ends it). When the server goes
away (end of stdin) the process kills its own group, so its classifier workers and rg go
with it. Like the ``cq server``'s search processes (``cq.server.memory``), a process past
``worker_max_rss()`` after a search retires (an MCP server has one root: its roots are not
counted): its answer says so, it ends its group, and the server starts a fresh one for the
next search, so a long-lived MCP server's memory does not grow with every search.
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import threading
import time
import traceback
from typing import TYPE_CHECKING, BinaryIO

import msgspec

from cq.agent.worker_protocol import (
    Cancel,
    Done,
    Failed,
    FromWorker,
    Job,
    Sample,
    Sampled,
    ToWorker,
    claim_stdio,
    read_frame,
    write_frame,
)
from cq.cancel import CancelToken
from cq.errors import CqError, SearchCancelledError
from cq.model import AnswerRecord, SearchRequest
from cq.server.memory import rss, worker_max_rss

if TYPE_CHECKING:
    from cq.rewrite import CallerModel
    from cq.settings import Settings

# Not tuned: the most tokens the client's model may answer the rewrite with. Its answer is one
# JSON object of a dozen names (~150 tokens); room for a model that wraps it in a sentence.
SAMPLE_MAX_TOKENS = 1000
_POLL_SECONDS = 0.1  # how often a wait for the client's model looks at the cancel token


class _Current:
    """The running job's id and token; cancels that arrive before their job starts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._id = 0
        self._token = CancelToken()
        self._early: set[int] = set()

    def start(self, job_id: int) -> CancelToken:
        with self._lock:
            self._id, self._token = job_id, CancelToken()
            if job_id in self._early:
                self._early.discard(job_id)
                self._token.cancel()
            return self._token

    def cancel(self, job_id: int) -> None:
        with self._lock:
            if job_id == self._id:
                self._token.cancel()
            elif job_id > self._id:  # ids grow: a smaller one is a finished job
                self._early.add(job_id)


class _RelayedModel:
    """The server's MCP client's model, asked through the server: one question at a time,
    from the searching thread; answers arrive on the listener thread."""

    def __init__(self, outbox: BinaryIO) -> None:
        self._outbox = outbox
        self._answers: queue.Queue[Sampled] = queue.Queue()
        self._asked = 0

    def answered(self, answer: Sampled) -> None:
        self._answers.put(answer)

    def for_job(self, job: Job, token: CancelToken) -> CallerModel | None:
        """The rewrite's ``CallerModel`` for ``job``, or None when its client offers none."""
        from cq.rewrite import CallerModel

        if job.client is None:
            return None

        def ask(system: str, user: str, deadline: float) -> str:
            return self._ask(system, user, deadline, token)

        return CallerModel(name=f"mcp-client:{job.client}", ask=ask)

    def _ask(self, system: str, user: str, deadline: float, token: CancelToken) -> str:
        from cq.rewrite import NoAnswer

        self._asked += 1
        seconds = max(deadline - time.monotonic(), 0.0)
        question = Sample(
            id=self._asked, system=system, user=user, max_tokens=SAMPLE_MAX_TOKENS, seconds=seconds
        )
        write_frame(self._outbox, question)
        while (left := deadline - time.monotonic()) > 0:
            token.check()
            try:
                answer = self._answers.get(timeout=min(left, _POLL_SECONDS))
            except queue.Empty:
                continue
            if answer.id != self._asked:
                continue  # the answer to an earlier question, given up on
            if answer.text is None:
                raise NoAnswer(answer.reason)
            return answer.text
        raise NoAnswer(f"timed out after {round(seconds):g} s")


def main() -> None:
    inbox, outbox = claim_stdio()
    jobs: queue.Queue[Job] = queue.Queue()
    current = _Current()
    model = _RelayedModel(outbox)
    searching = threading.Event()
    threading.Thread(target=_listen, args=(inbox, jobs, current, model), daemon=True).start()
    from cq.server.warm import search_begins, warm_between, warm_process

    warm_process(searching)  # as the cq server's search processes: imports, Pyrefly kept warm

    while True:
        job = jobs.get()
        search_begins(searching)
        token = current.start(job.id)
        outcome = _run(job, token, model.for_job(job, token))
        retiring = rss(os.getpid()) > worker_max_rss()  # one root: only its size counts
        write_frame(outbox, msgspec.structs.replace(outcome, retiring=retiring))
        if retiring:  # its memory goes back with it; the server starts a fresh process
            _end_group()
        warm_between(searching)


def _listen(
    inbox: BinaryIO, jobs: queue.Queue[Job], current: _Current, model: _RelayedModel
) -> None:
    """Read the server's frames; at the end of input the server is gone: end the group."""
    decoder = msgspec.msgpack.Decoder(ToWorker)
    while (message := read_frame(inbox, decoder)) is not None:
        if isinstance(message, Job):
            jobs.put(message)
        elif isinstance(message, Cancel):
            current.cancel(message.id)
        elif isinstance(message, Sampled):
            model.answered(message)
    _end_group()


def _end_group() -> None:
    """Exit with this process's group: its classifier workers, rg and Pyrefly."""
    sys.stderr.flush()
    if hasattr(os, "killpg") and os.getpgrp() == os.getpid():  # started as a group leader
        os.killpg(os.getpid(), signal.SIGKILL)
    os._exit(0)


def _run(job: Job, token: CancelToken, model: CallerModel | None) -> FromWorker:
    """One search to its answer or its one-line error; a bug in cq is reported, not fatal."""
    try:
        request, settings = build_request(job)
        return _answer(job, request, settings, token, model)
    except SearchCancelledError:
        return Failed(id=job.id, message="search cancelled", cancelled=True)
    except CqError as exc:
        from cq.agent.mcp_args import in_tool_words

        return Failed(id=job.id, message=_printed(in_tool_words(str(exc))))
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        return Failed(id=job.id, message=_printed(f"internal error: {type(exc).__name__}: {exc}"))


def _printed(message: str) -> str:
    """The message as the CLI's stderr prints it: a name that is not UTF-8 (the root's) with
    ``\\udcXX`` for its lone surrogates, which msgpack cannot write."""
    return message.encode("utf-8", "backslashreplace").decode("utf-8")


def build_request(job: Job) -> tuple[SearchRequest, Settings]:
    """The ``SearchRequest`` of a tool call, settled with its ``Settings`` (``cq.settings``:
    the root confined once, then the profile parsed once against it for the limits and the
    rest); its root is the server's (``cq.confine``). Every tool argument is the request
    field of the same name (``cq.model.options``)."""
    from cq.confine import server_root
    from cq.model.options import request_fields
    from cq.settings import settle

    args = job.args
    root = server_root(os.fsdecode(job.server_root), args.root)
    fields = request_fields({name: getattr(args, name) for name in args.__struct_fields__})
    fields |= {"root": root, "max_tokens": args.budget}
    for name in ("budget", "format"):  # how to answer, not what to search
        fields.pop(name)
    return settle(msgspec.convert(fields, SearchRequest), {})  # the profile's limits


def _answer(
    job: Job,
    request: SearchRequest,
    settings: Settings,
    token: CancelToken,
    model: CallerModel | None,
) -> Done:
    """Run the search, then cut and render it within the budget (as ``cq search`` does, with
    a note saying what was left out in the tool's argument names)."""
    from functools import partial

    from cq.agent.budget import left_out_note
    from cq.assemble import fit_answer
    from cq.parse import cache_stats
    from cq.pipeline import run_search
    from cq.report import render_json, render_markdown

    is_json = job.args.format == "json"
    markdown = partial(render_markdown, verbose=request.explain, tool=True)
    render = render_json if is_json else markdown
    answer = fit_answer(
        settings.echo,
        run_search(request, cancel=token, model=model, settings=settings),
        render,
        note=lambda result: left_out_note(result, request, job.cap),
        is_json=is_json,
        names=("max_tokens", "format md"),
        report=settings.tuning.report,
    )
    return Done(
        id=job.id,
        text=answer.text,
        note=answer.note,
        cut_to_budget=answer.result.summary.omitted.by_budget > 0,
        caches=dict(cache_stats()),
        answer=_spelled(answer.result.answer),
    )


def _spelled(said: AnswerRecord | None) -> AnswerRecord | None:
    """The Answer with a name that is not UTF-8 spelled as ``_printed`` spells it, which
    msgpack can write and the JSON report's escapes read as."""
    if said is None:
        return None
    return msgspec.structs.replace(
        said,
        name=_printed(said.name) if said.name is not None else None,
        file=_printed(said.file) if said.file is not None else None,
        evidence=tuple(_printed(e) for e in said.evidence),
    )


if __name__ == "__main__":
    main()
