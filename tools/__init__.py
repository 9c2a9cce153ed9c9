"""Developer tools run from a clone (``python -m tools.NAME``); not part of the installed cq."""
