"""One search through the server, from the client's side: every wait bounded, signals passed on.

``search(channel, message, fds)`` returns the search's exit code, or None when this process
must search itself. The waits, and what ends each:

- sending the request, and the server's answer to it (``started`` or ``unserved``): within
  ``ANSWER_S``; no answer and the client searches in-process, saying so in one line. The
  server answers ``unserved`` when no search process is free (the client searches in-process
  and says nothing: two overlapping searches are ordinary) or when it could not receive the
  client's descriptors (said in one line). A request too big for a frame is never sent.
- the search itself: as long as it runs, as an in-process search would; but a search process
  that someone stopped (SIGSTOP) for ``_STOPPED_S`` is left (one line; the server kills a
  stopped process whose client left, so it cannot hold the client's pipes).

Signals reach the search as they would reach an in-process one: ^C (SIGINT), SIGTERM and
SIGHUP cancel it (the client exits 130 on ^C, and dies of the other two as cq would); ^Z
(SIGTSTP) stops the search process (through the pidfd it sent, so a reused pid is never
signalled) before the client stops itself, and ``fg`` continues both. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator

from cq.server.relay import Writer
from cq.server.wire import MAX_FRAME, Channel, WireError, encode

# The server answers a request from a thread that does nothing else, and an idle search
# process answers ``started`` at once; on a loaded machine (load 18 on 2 cores seen in the
# test suite) either may wait for cores for seconds. The bound catches a server stopped
# after its hello; a stopped search process is never handed a search.
ANSWER_S = 5.0
_CHECK_S = 1.0  # how often a client waiting for its search looks whether it was stopped
_STOPPED_S = 2.0  # a search process seen stopped this long is left (a state, not a delay)
_CANCEL_GRACE_S = 2.0  # how long a cancel waits for the search's end before the client exits
_PASSED_ON = (signal.SIGTERM, signal.SIGHUP)


class _Signalled(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def search(channel: Channel, message: dict[str, object], fds: list[int]) -> int | None:
    if len(encode(message)) > MAX_FRAME:
        return None  # the in-process search handles any size of arguments and environment
    channel.sock.settimeout(ANSWER_S)
    try:
        channel.send(message, fds)
        reply, received = channel.recv()
    except TimeoutError:
        _note(f"the cq server did not take the search within {ANSWER_S:g} s; searching without it")
        return None
    if reply is not None and reply["kind"] == "unserved":
        if reply.get("reason"):
            _note(f"{reply['reason']}; searching without it")
        return None
    if reply is None or reply["kind"] != "started":
        for fd in received:
            os.close(fd)
        _note("the cq server closed the connection before searching; searching without it")
        return None
    pidfd = received[0] if received else None
    try:
        channel.send({"kind": "go"})
        with _passed_on(pidfd) as signalled:
            code = _wait(channel, _worker_pid(pidfd), signalled)
    finally:
        if pidfd is not None:
            os.close(pidfd)
    if signalled:
        signal.signal(signalled[0], signal.SIG_DFL)
        os.kill(os.getpid(), signalled[0])  # dies of it, as an in-process cq would
        return 128 + signalled[0]
    return code


def _wait(channel: Channel, pid: int | None, signalled: list[int]) -> int | None:
    """The search's exit code (130 when cancelled by ^C), None to search in-process; what
    the search relays (``relay.py``) written meanwhile, all of it before the exit code."""
    writer = Writer()
    try:
        code = _answer(channel, pid, signalled, writer)
        if code is not None:
            writer.finish()
    except KeyboardInterrupt:
        return 130  # a ^C while the last output is written
    except _Signalled as exc:
        signalled.append(exc.signum)
        return 128 + exc.signum
    if code is not None and writer.failed:
        return 2
    return 0 if writer.broken and code is not None else code


def _answer(channel: Channel, pid: int | None, signalled: list[int], writer: Writer) -> int | None:
    channel.sock.settimeout(_CHECK_S)
    cancelled = False
    stopped_for = 0.0
    while True:
        try:
            reply, _ = channel.recv()
        except (KeyboardInterrupt, _Signalled) as exc:
            if cancelled:
                return 130  # a second ^C leaves at once
            cancelled = True
            if isinstance(exc, _Signalled):
                signalled.append(exc.signum)
            with contextlib.suppress(OSError):
                channel.send({"kind": "cancel"})
                # The server stops the search at its next checkpoint; a client does not wait
                # longer than an interrupted in-process search would take to exit.
                channel.sock.settimeout(_CANCEL_GRACE_S)
            continue
        except TimeoutError:
            if cancelled:
                return 130
            stopped_for = stopped_for + _CHECK_S if pid and _stopped(pid) else 0.0
            if stopped_for >= _STOPPED_S and writer.started:  # part of its answer is out
                _note(f"the cq server's search process (pid {pid}) stopped amid its answer")
                return 2
            if stopped_for >= _STOPPED_S:
                _note(f"the cq server's search process (pid {pid}) is stopped; searching alone")
                return None
            continue
        except (OSError, WireError):
            reply = None
        if reply is None:
            break
        if reply["kind"] == "output" and not cancelled:
            writer.put(reply)
            if writer.broken:  # the reader went away: as in-process, the search ends
                cancelled = True
                with contextlib.suppress(OSError):
                    channel.send({"kind": "cancel"})
        elif reply["kind"] == "exit":
            return 130 if cancelled and not writer.broken else int(reply["code"])
    if cancelled:
        return 130
    writer.finish()
    print("cq: the cq server's search process ended before its answer", file=sys.stderr)
    return 2


@contextlib.contextmanager
def _passed_on(pidfd: int | None) -> Iterator[list[int]]:
    """SIGTERM and SIGHUP raised as ``_Signalled`` in the wait (the signal kept in the list
    yielded), ^Z passed on to the search process; the previous handlers back after."""

    def cancel(signum: int, frame: object) -> None:
        raise _Signalled(signum)

    def stop(signum: int, frame: object) -> None:
        _signal(pidfd, signal.SIGSTOP)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        try:
            os.kill(os.getpid(), signal.SIGTSTP)  # stopped here until continued (``fg``)
        finally:  # continued by ``kill %1`` too, whose SIGTERM may be raised here
            _signal(pidfd, signal.SIGCONT)
            signal.signal(signal.SIGTSTP, stop)

    wanted = {signum: cancel for signum in _PASSED_ON}
    if pidfd is not None:
        wanted[signal.SIGTSTP] = stop
    previous = {}
    for signum, handler in wanted.items():
        if signal.getsignal(signum) is not signal.SIG_IGN:  # nohup, a job control-less shell
            previous[signum] = signal.signal(signum, handler)
    try:
        yield []
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _signal(pidfd: int | None, signum: int) -> None:
    if pidfd is not None:
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(pidfd, signum)


def _worker_pid(pidfd: int | None) -> int | None:
    """The search process's pid as this process sees it (the pidfd's ``Pid:``), or None
    when it is not visible from here."""
    if pidfd is None:
        return None
    try:
        with open(f"/proc/self/fdinfo/{pidfd}", encoding="ascii") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    pids = [int(line.split()[1]) for line in lines if line.startswith("Pid:")]
    return pids[0] if pids and pids[0] > 0 else None


def _stopped(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state == b"T"


def _note(text: str) -> None:
    print(f"cq: {text}", file=sys.stderr)
    sys.stderr.flush()
