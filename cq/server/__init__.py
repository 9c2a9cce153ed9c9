"""The per-user cq server: warm searches for a thin ``cq search`` client.

In: a ``cq search`` command line, with the client's environment, directory and standard
streams. Out: the same bytes on the same streams and the same exit code as an in-process
run. Open ``client.py`` first (when a search goes to the server and what happens when the
server is missing, old or broken), then ``daemon.py`` (the server process), ``processes.py``
and ``worker.py`` (the search processes and how one search's environment stays its own),
``lifecycle.py`` (start, lock, stop), ``identity.py`` (when a server is replaced),
``paths.py`` (the private runtime dir), ``wire.py`` and ``messages.py`` (the protocol) and
``warm.py`` (the warm-up ``cq mcp`` can share).

Choices taken from other tools' daemons, and why:

- Start on first use, detached (mypy's dmypy: fork, ``setsid``, fork, stdio to /dev/null;
  here the grandchild execs a fresh interpreter so the server starts from a clean state).
  The search that starts it does not wait (eslint_d waits): it runs in-process, which costs
  what a cold server would, and the server is warm for the next one.
- One server per user, found at a fixed place in the user's runtime dir (eslint_d and dmypy
  keep a port or status file in the project; cq serves every root, so one per user), and a
  lock held for life so concurrent starts make one server (Gradle's daemon registry lock).
  The lock's holder is asked of the kernel (``F_GETLK``): no pid file to go stale.
- Compatibility by identity, not by negotiation: version, a hash of the package sources and
  the settings a process reads once (Gradle matches a daemon by Java home and JVM args and
  starts another when they differ; cq keeps one per user, so it replaces it instead).
- Health by a ``hello`` answered from a thread that runs no search (dmypy's ``status``
  times out; Gradle's client gives up on a busy or unresponsive daemon and starts one): no
  answer within ``client.HELLO_TIMEOUT_S`` and the search runs in-process, once reported.
- Idle exit (dmypy keeps running until stopped; Gradle's daemon exits after 3 h idle; ruff's
  server lives as long as its editor): 15 minutes by default (``CQ_SERVER_IDLE_S``), a pause
  in a working session, not a day; its Pyrefly servers and workers go with it.
- Searches run in separate processes with the client's own file descriptors (sent as
  ``SCM_RIGHTS``), not streamed through the server: output, ``isatty`` and a closed pipe
  behave as in the client, and no byte is re-encoded.

Security: the runtime dir is private (``paths.py``), the socket mode 0600, and the server
checks each peer's uid (``SO_PEERCRED``). Linux only; elsewhere every search is in-process.
"""
