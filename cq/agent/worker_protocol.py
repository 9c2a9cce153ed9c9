"""What the MCP server and its search processes say to each other: msgpack frames on pipes.

The server (``cq.agent.workers``) sends a ``Job`` or a ``Cancel``; a search process
(``cq.agent.search_worker``) answers each job with one ``Done`` or ``Failed``. While a job
runs, its process may ask the server's MCP client's model a question (``Sample``, for the
rewrite), answered by one ``Sampled``. A frame is a 4-byte big-endian length and a msgpack
body. Imports nothing of the MCP SDK, so a search process never loads it.
"""

from __future__ import annotations

import os
from typing import BinaryIO

import msgspec

from cq.model import AnswerRecord
from cq.model.options import tool_arguments

# The ``search`` tool's arguments, checked (``cq.agent.mcp_args``), one field per option of
# ``cq.model.options`` the tool takes; ``budget`` is the call's token budget, already capped
# by the server's.
SearchArgs = msgspec.defstruct(
    "SearchArgs",
    [
        *(
            (name, kind) if default is msgspec.NODEFAULT else (name, kind, default)
            for name, kind, default in tool_arguments()
        ),
        ("budget", int),
    ],
    frozen=True,
    kw_only=True,
    module=__name__,
)


class Job(msgspec.Struct, frozen=True, tag=True):
    """One search: the arguments, the server's root and the server's token budget.
    ``client``: the MCP client's name and version when it offers its model (sampling).
    ``server_root`` as its bytes (``os.fsencode``): a root whose name is not UTF-8 has lone
    surrogates in its text, which msgpack cannot write."""

    id: int
    args: SearchArgs
    server_root: bytes
    cap: int
    client: str | None = None


class Cancel(msgspec.Struct, frozen=True, tag=True):
    """Stop job ``id`` at its next checkpoint (the client sent ``notifications/cancelled``)."""

    id: int


class Done(msgspec.Struct, frozen=True, tag=True):
    """The rendered answer, whether the budget cut it, and the process's parse-cache counters."""

    id: int
    text: str
    note: str | None
    cut_to_budget: bool
    caches: dict[str, int]
    retiring: bool = False  # the process exits after this answer (``search_worker`` says why)
    # the report's Answer as data, which a markdown report's structured content carries too
    answer: AnswerRecord | None = None


class Failed(msgspec.Struct, frozen=True, tag=True):
    """The one-line error of a search (``cancelled``: it stopped because it was told to)."""

    id: int
    message: str
    cancelled: bool = False
    retiring: bool = False  # as ``Done.retiring``


class Sample(msgspec.Struct, frozen=True, tag=True):
    """Ask the MCP client's model (the running job's rewrite): the prompt, the most tokens
    to answer with, and the seconds left before the search stops waiting."""

    id: int  # this question's number in its process: an answer to an earlier one is stale
    system: str
    user: str
    max_tokens: int
    seconds: float


class Sampled(msgspec.Struct, frozen=True, tag=True):
    """The client model's answer to ``Sample`` ``id``: its text, or why there is none."""

    id: int
    text: str | None
    reason: str = ""


ToWorker = Job | Cancel | Sampled
FromWorker = Done | Failed
FromSearch = Done | Failed | Sample  # everything a search process writes

_encoder = msgspec.msgpack.Encoder()


def encode_frame(message: ToWorker | FromSearch) -> bytes:
    """The frame's bytes; raises before anything is written when ``message`` cannot be
    encoded (msgpack carries no integer beyond 64 bits)."""
    body = _encoder.encode(message)
    return len(body).to_bytes(4, "big") + body


def write_frame(out: BinaryIO, message: ToWorker | FromSearch | bytes) -> None:
    out.write(message if isinstance(message, bytes) else encode_frame(message))
    out.flush()


def read_frame(source: BinaryIO, decoder: msgspec.msgpack.Decoder) -> object | None:
    """The next message, or None at the end of the stream (the other side is gone)."""
    header = source.read(4)
    if len(header) < 4:
        return None
    size = int.from_bytes(header, "big")
    body = source.read(size)
    if len(body) < size:
        return None
    return decoder.decode(body)


def claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """Private copies of fds 0 and 1 for the protocol; fd 0 then reads /dev/null and fd 1
    writes to stderr, so a child process or a stray print cannot write into a message."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out
