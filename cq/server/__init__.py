"""The per-user cq server: warm searches for a thin ``cq search`` client.

In: a ``cq search`` command line, with the client's environment, directory and standard
streams. Out: the same bytes on the same streams and the same exit code as an in-process
run. Open ``client.py`` first (when a search goes to the server and what happens when the
server is missing, old or broken) and ``conversation.py`` (one search from the client's side:
every wait bounded, signals passed on), then ``daemon.py`` (the server process),
``processes.py`` and ``worker.py`` (the search processes and how one search's environment
stays its own), ``relay.py`` (output to a pipe, written by the client),
``lifecycle.py`` (start, lock, stop), ``identity.py`` (when a server is replaced),
``context.py`` (when a server may search for a client), ``paths.py`` (the private runtime
dir), ``wire.py`` and ``messages.py`` (the protocol) and
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
  bytes, ``isatty`` and a closed pipe behave exactly as in the client. Output to a pipe or a
  socket is the exception: the search process sends it to the client, which writes it, so
  a reader that never reads (``| less``) blocks its own client, never a shared process.
- Never wait on another search. A search goes to a free process or runs in the client's
  process (as Gradle starts a new daemon when every compatible one is busy, and dmypy's
  client gives up on a daemon that does not answer): a busy, stopped or blocked process
  holds back nobody else.

- Serve only a client of the server's own process context (``context.py``), as Gradle's
  client uses only a daemon that meets its compatibility criteria: namespaces, credentials,
  confinement, limits and niceness decide what a search sees and may spend, and a warm process
  cannot take on another's. A client of another context searches in-process, silently; it
  does not replace the server (both contexts would then pay cold starts in turn).

Security: the runtime dir is private and reached through the descriptor it was checked on
(``paths.py``), the socket mode 0600; the client talks only to a listener of its own uid and
the server only to peers of its own uid (``SO_PEERCRED`` both ways), and it reads a client's
context from ``/proc`` itself. Linux only; elsewhere every search is in-process.
"""
