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

- Start on first use, detached. eslint_d's client starts its server when none answers and
  forwards every argument; dmypy daemonizes with fork, ``setsid``, fork. Here the client
  double-forks and the grandchild execs a fresh interpreter (a clean process, not a copy of
  the client). The search that starts it does not wait for it: it runs in-process, which
  costs what a cold server would, and the next search finds the server warm.
- One server per user and install, found at a fixed place. eslint_d keeps its port and a
  token in a file in the home dir (its socket is TCP, so the token proves the client is the
  user); here a Unix socket in a private runtime dir, and the peer's uid, checked by the
  kernel, stand in for the token. One server serves every root, as ruff's language server
  serves every workspace of its editor. A lock held for the server's life makes concurrent
  starts end in one server; its holder is asked of the kernel (``F_GETLK``), so no pid file
  goes stale.
- Replace on mismatch. Gradle's client sends its build environment and starts another daemon
  when no running one is compatible (Java home, JVM arguments); eslint_d restarts its server
  for another eslint. Gradle keeps daemons of different compatibility side by side, each
  found by its own criteria: here the place itself is named by the install and the settings
  a process reads once (``identity.install_key``: two venvs, or two cache dirs, never replace
  each other's server), and within it cq compares the version and a hash of its sources
  (``identity.py``), replacing the server of an edited checkout.
- Health by a ``hello`` answered by a process that runs no search (a busy Gradle daemon is
  passed over for another; dmypy's client gives up on a daemon that does not answer in
  time): no answer within ``client.HELLO_TIMEOUT_S`` and the search runs in-process, the
  one line saying so printed by the client that replaces that server.
- Idle exit. Gradle's daemon exits after 3 hours idle; eslint_d after an idle time or with
  its editor; dmypy only when told (or after its ``--timeout``); ruff's server with its
  editor. A shell tool has no editor to follow: 15 minutes (``CQ_SERVER_IDLE_S``), a pause in
  a working session rather than a day, and its Pyrefly servers and workers go with it.
- Searches run in separate processes with the client's own file descriptors (sent as
  ``SCM_RIGHTS``), not streamed through the server as Gradle and eslint_d relay output:
  bytes, ``isatty`` and a closed pipe behave exactly as in the client.

Security: the runtime dir is private (``paths.py``), the socket mode 0600, and the server
checks each peer's uid (``SO_PEERCRED``). Linux only; elsewhere every search is in-process.
"""
