"""The ``CqError`` family: every message is one line a user can act on.

The CLI prints ``cq: <message>`` and exits 2; the MCP server returns the message as an error.
"""

from __future__ import annotations


class CqError(Exception):
    """Base of every error cq reports to a user instead of a traceback."""

    exit_code = 2


class UsageError(CqError):
    """Bad flags, bad arguments, an unknown profile or a missing root."""


class RgNotFoundError(CqError):
    """No usable ``rg`` binary."""


class PatternError(CqError):
    """rg rejected a pattern (invalid regex)."""


class SearchFailedError(CqError):
    """rg or another stage failed in a way a user must hear about."""


class OutputError(CqError):
    """Standard output refused the report (a full disk, an I/O error); a reader gone is not
    one (``BrokenPipeError``: exit 0, as rg)."""


class SearchCancelledError(CqError):
    """The caller cancelled the search (MCP ``notifications/cancelled``)."""
