"""The command line, on top of everything else: ``cq``'s argv in, a subcommand run, an exit
code out. Nothing below it imports it (``tests/test_layout.py``); ``cq search``'s own command
line lives under it in ``cq.search``, which the server's search process shares.

Open ``dispatch.py`` first (``entry``: the installed script and ``python -m cq``, through the
server for a search; ``main``: one command line in this process; ``build_parser``). One module
per subcommand besides: ``agent.py`` (``cq agent``, ``cq mcp``), ``cache.py``, ``index.py``,
``embed.py``, ``server.py``, ``completions.py`` (scripts walked from the parser).
"""

from cq.cli.dispatch import build_parser, entry, main

__all__ = ["build_parser", "entry", "main"]
