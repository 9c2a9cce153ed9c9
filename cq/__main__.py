"""``python -m cq``."""

from cq.cli import entry

entry()
