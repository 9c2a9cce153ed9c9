"""The messages of the server's protocol, typed for the processes that act on them.

A conversation, each arrow one ``cq.server.wire`` frame:

- client -> server ``hello``; server -> client ``welcome`` (its pid and identity) or
  ``refused`` (the peer is another user). Then one of:
- client -> server ``search`` with the client's stdin, stdout and stderr as fds. The server
  hands the connection and the fds to an idle search process, which answers ``started`` (its
  pid, and its pidfd as a descriptor), waits for the client's ``go``, runs the search (what it
  writes to a pipe or socket of the client's comes as ``output`` frames, base64, for the
  client to write: ``relay.py``), and answers ``exit`` with the code. Meanwhile the client
  may send ``cancel`` (^C); end of input from the client cancels too. Or the server
  answers ``unserved`` (no process is free, or the descriptors did not come: its
  ``reason``) and the client searches in-process.
- client -> server ``status``; server -> client ``status`` (``ServerStatus``).
- client -> server ``stop``; server -> client ``stopping``, then it exits.

Between the server and a search process (a socket pair): the process says ``ready`` once
warm; then the ``search`` frame with the connection's fd first, then the stdio fds; the
process answers ``done`` when the search ended.
The client builds its frames as plain JSON objects with these fields (``cq.server.client``
avoids importing msgspec machinery on its path; the field names are the contract).
"""

from __future__ import annotations

import msgspec

from cq.server.memory import Memory


class Stream(msgspec.Struct, frozen=True):
    """One of the client's standard streams, as its Python had it open."""

    fd: int  # 0, 1 or 2 in the client
    encoding: str
    errors: str
    line_buffering: bool


class Search(msgspec.Struct, frozen=True, tag="search", tag_field="kind"):
    """Run ``cq search`` with these words (``search`` first), as the client's process would."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    umask: int
    streams: list[Stream]  # in the order of the fds sent with the frame


class ServerStatus(msgspec.Struct, frozen=True, tag="status", tag_field="kind"):
    pid: int
    version: str
    code: str
    settings: str
    up_s: float
    idle_s: float  # since the last search ended (0 while one runs); a status is no use
    idle_limit_s: float
    processes: int
    busy: int
    served: int
    socket: str
    ready: int = 0  # processes free to take a search now (a search never waits for one)
    memory: Memory | None = None  # resident bytes of the daemon, search processes, Pyrefly
