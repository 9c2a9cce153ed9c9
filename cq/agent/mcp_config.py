"""``cq mcp``'s start-up settings, checked before the MCP SDK is imported: importing
``mcp.types`` costs about two CPU-seconds, which a bad ``--root`` or ``--max-tokens`` should not
pay before its one-line refusal."""

from __future__ import annotations

import os

import msgspec

from cq.agent.budget import MIN_SERVER_BUDGET
from cq.agent.mcp_args import MAX_WHOLE
from cq.env import env_int
from cq.errors import UsageError

DEFAULT_MAX_TOKENS = 8000


class ServerConfig(msgspec.Struct, frozen=True):
    """Per-process settings: the default root and the token budget no answer may exceed."""

    root: str
    max_tokens: int = DEFAULT_MAX_TOKENS

    @classmethod
    def from_args(cls, root: str | None, max_tokens: int | None) -> ServerConfig:
        root = os.path.abspath(root or os.environ.get("CQ_ROOT") or ".")
        if not os.path.isdir(root):  # worded as ``cq search`` words it (cq.confine)
            gone = not os.path.exists(root)
            raise UsageError(f"root {'does not exist' if gone else 'is not a directory'}: {root}")
        source = "--max-tokens"
        if max_tokens is None:  # checked with every CQ_* setting by cq.env
            source, max_tokens = (
                "CQ_MCP_MAX_TOKENS",
                env_int("CQ_MCP_MAX_TOKENS", DEFAULT_MAX_TOKENS),
            )
        if max_tokens < MIN_SERVER_BUDGET:
            raise UsageError(f"--max-tokens must be at least {MIN_SERVER_BUDGET}: {max_tokens}")
        if max_tokens > MAX_WHOLE:  # the frames to the search processes carry no more
            raise UsageError(f"{source} must be at most {MAX_WHOLE}: {max_tokens}")
        return cls(root=root, max_tokens=max_tokens)
