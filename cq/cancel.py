"""Cooperative cancellation: a search its caller gave up on stops at the next checkpoint.

The MCP server cancels a search when its client sends ``notifications/cancelled``; the
stages call ``check`` between units of work (each file rg reports, each classification batch,
each enriched hit), so the server's search process is free again within a fraction of a
second instead of finishing work nobody will read. The CLI never cancels (Ctrl-C suffices).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from cq.errors import SearchCancelledError

Check = Callable[[], None]


def never() -> None:
    """The checkpoint of a search nobody can cancel."""


class CancelToken:
    """Set from one thread (a search process's listener), checked from the searching one."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise ``SearchCancelledError`` once cancelled."""
        if self._event.is_set():
            raise SearchCancelledError("search cancelled")
