"""``cq search``'s command line: its words in, the report or file names on stdout and an exit
code out, the same whether the CLI runs it in its own process or the server's search process
(``cq.server.worker``) runs it for a client.

Open ``command.py`` first: ``parse_search`` reads a search's words, ``run_search_args`` runs
them, ``exit_code`` turns a failure into one ``cq: ...`` line. ``options.py`` builds the flags
from ``cq.model.options`` (the table the MCP tool reads too), ``request.py`` turns the parsed
flags into a settled ``SearchRequest`` and prints the report, ``listing.py`` prints file names
(``-l``, ``-c``, ``--files``). Below the CLI and the server, above the pipeline: it imports
neither of them.
"""

from cq.search.command import (
    SEARCH_HELP,
    CommandParser,
    exit_code,
    left_over,
    parse_search,
    run_search_args,
    search_parser,
)

__all__ = [
    "SEARCH_HELP",
    "CommandParser",
    "exit_code",
    "left_over",
    "parse_search",
    "run_search_args",
    "search_parser",
]
