"""cq for coding agents: the /cq command files and their installer, and the MCP server.

In: an agent choice and a scope (``cq agent install``), or MCP requests on stdin (``cq mcp``).
Out: command files, skills, guidance blocks and the MCP server's registration in each agent's
config on disk (recorded in a manifest so uninstall removes exactly them), or MCP tool results
rendered by ``cq.report``. Open ``targets.py`` for where each agent looks, ``install.py`` for
the write/remove rules (``jsonedit.py`` edits one member of a JSON file in place, ``safefs.py``
reaches each file without following a link out of the project or home, ``nesting.py`` bounds
the depth of a config before it is parsed),
``mcp_server.py`` for the server (``mcp_args.py`` the checks on a call's arguments,
``mcp_wire.py`` its stdio transport, ``mcp_sampling.py`` the client's model for the rewrite,
``workers.py`` the search processes it runs searches in, ``search_worker.py`` their main
loop, ``worker_protocol.py`` what the two say to each other). Nothing here is imported on the
``cq search`` path; the ``mcp`` SDK is imported only by ``mcp_server``, ``mcp_sampling`` and
``mcp_wire``, never by a search process.
"""
