"""The world a process searches in, read from ``/proc``: a server serves only its own kind.

A search through the server runs in the server's search process, with the server's
namespaces, credentials, confinement and limits, not the client's. Where they differ, the
search sees other files (a mount namespace with a tmpfs over a tree, a supplementary group
dropped), reaches other hosts (a client with no network would have its question sent to the
LLM URL), or costs what the client was not allowed (``ulimit``, ``nice``). So, as Gradle's
client runs a build only on a daemon whose compatibility criteria match its own and ssh's
ControlMaster serves only its own user, a search goes to the server only when the process
contexts are equal. Both sides compute ``fingerprint()``: the server publishes its own in
its ``welcome`` and the client compares; the server also reads the client's from
``/proc/PEERPID`` itself (the pid the kernel gives with the connection, never the client's
word) and refuses a search from another context. Either way the client searches in-process,
silently: the answer is the one it would have had.

What is compared, and why:

- namespaces (mnt, net, pid, user, uts, ipc, cgroup, time) and the root directory (a chroot):
  which files, hosts and processes the search sees;
- user and group ids (real, effective, saved, filesystem), supplementary groups and
  capabilities: what it may open;
- NoNewPrivs, the seccomp mode and number of filters, the LSM label: confinement. The filters
  themselves and Landlock domains are not visible in ``/proc``; both are inherited and never
  lifted, so a sandbox adds a filter (or sets NoNewPrivs, which Landlock needs) to what its
  parent had: equal counts under equal namespaces are taken as the same confinement (two
  sandboxes that differ only in their filters' or Landlock rules' contents look alike);
- the limits of its cgroups (not their paths: ``_cgroups``), the CPUs and memory nodes
  allowed, the nice value and scheduling policy, and the limits that can change a result or
  its cost (``LIMITS``): cost.

Not compared: the environment, the working directory and the umask, which travel with each
search and apply to it alone (``worker.py``); the I/O priority (``ionice``), which ``/proc``
does not show. A finite CPU time limit is never served (see
``servable``). Standard library only: the client computes its fingerprint on every search.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import resource
import socket
import struct

NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts")
# Lines of /proc/PID/status: credentials, confinement, CPU and memory placement.
STATUS_FIELDS = (
    "Uid",
    "Gid",
    "Groups",
    "CapInh",
    "CapPrm",
    "CapEff",
    "CapBnd",
    "CapAmb",
    "NoNewPrivs",
    "Seccomp",
    "Seccomp_filters",
    "Cpus_allowed_list",
    "Mems_allowed_list",
)
# What a search may use (time, memory, stack, descriptors, processes, file size); the rest
# (core size, locked memory, message queues) changes neither its answer nor its cost.
LIMITS = (
    resource.RLIMIT_CPU,
    resource.RLIMIT_FSIZE,
    resource.RLIMIT_DATA,
    resource.RLIMIT_STACK,
    resource.RLIMIT_NOFILE,
    resource.RLIMIT_AS,
    resource.RLIMIT_NPROC,
)


# The peer's pidfd (Linux 6.5); the socket module has no name for it yet.
_SO_PEERPIDFD = 77


def servable() -> bool:
    """Whether this process may search through a server at all. Not under a finite CPU time
    limit: a warm search process's CPU time adds up over all its searches, so the client's
    limit can neither be matched by a server started under it (it would die after a few
    searches) nor applied to one search."""
    return resource.getrlimit(resource.RLIMIT_CPU) == (resource.RLIM_INFINITY,) * 2


def fingerprint(pid: int | None = None) -> str:
    """A digest of the context of process ``pid`` (None: this process). A part that cannot
    be read is recorded as unreadable, so it matches only an equally unreadable one: a server
    that cannot see a client's context does not serve it."""
    text = "\0".join(facts(pid)).encode("utf-8", "surrogateescape")  # a cgroup named in bytes
    return hashlib.blake2b(text, digest_size=8).hexdigest()


def facts(pid: int | None = None) -> list[str]:
    """The compared facts of process ``pid`` as ``name=value`` lines, in a fixed order."""
    base = "/proc/self" if pid is None else f"/proc/{pid}"
    found = [f"ns.{name}={_readlink(f'{base}/ns/{name}')}" for name in NAMESPACES]
    try:
        root = os.stat(f"{base}/root")
        found.append(f"root={root.st_dev}:{root.st_ino}")
    except OSError:
        found.append("root=?")
    status = _status(base)
    found += [f"{name}={status.get(name, '?')}" for name in STATUS_FIELDS]
    found.append(f"cgroup={_cgroups(_read(f'{base}/cgroup'))}")
    found.append(f"lsm={_read(f'{base}/attr/current')!r}")
    found.append(f"sched={_scheduling(base)}")
    for limit in LIMITS:
        try:
            found.append(f"rlimit{limit}={resource.prlimit(pid or 0, limit)}")
        except OSError:
            found.append(f"rlimit{limit}=?")
    return found


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def _read(path: str) -> str:
    """The file's text; "" when the kernel has nothing there (no LSM: EINVAL), "?" when it
    cannot be read. Plain ``os.read``: a Python file object costs three times as much, and
    a fingerprint reads a few dozen small files."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return ""
    except OSError:
        return "?"
    chunks = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    except OSError as exc:
        return "" if exc.errno == errno.EINVAL else "?"
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "surrogateescape")


def _cgroups(listing: str) -> str:
    """The process's cgroups as far as they bound a search: the limits set on the way from
    each of its cgroups to the root, not the cgroups' paths, since a terminal tab, a tmux pane
    or an editor puts each shell in a scope of its own and those scopes limit nothing. A v1
    hierarchy whose files are not where expected counts by its path."""
    parts = []
    for line in listing.splitlines():
        number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if number == "0" and not controllers:
            mount, files = _unified_root(), V2_LIMITS
        else:
            mount = f"/sys/fs/cgroup/{controllers}"
            files = tuple(f for c in controllers.split(",") for f in V1_LIMITS.get(c, ()))
        if not files:
            continue  # freezer, devices, systemd's own: nothing a search's cost depends on
        if mount is None or not os.path.isdir(mount):
            parts.append(line)
        else:
            parts.append(f"{controllers or 'v2'}={_limits(mount, path, files)}")
    return repr(parts)


# The files of a cgroup that bound what a search may use (memory, CPU time, processes); the
# CPUs and memory nodes (cpuset) are compared through /proc/PID/status.
V2_LIMITS = ("memory.max", "memory.high", "memory.swap.max", "cpu.max", "cpu.weight", "pids.max")
V1_LIMITS = {
    "memory": ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"),
    "cpu": ("cpu.cfs_quota_us", "cpu.shares"),
    "pids": ("pids.max",),
}
# What these files hold when they limit nothing (besides "max", -1 and v1's near 2**63 bytes).
_DEFAULTS = {"cpu.weight": "100", "cpu.shares": "1024"}


def _unified_root() -> str | None:
    """Where the unified cgroup hierarchy is mounted (alone, or beside v1 ones)."""
    for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        if os.path.exists(f"{root}/cgroup.controllers"):
            return root
    return None


def _limits(mount: str, path: str, files: tuple[str, ...]) -> str:
    """The limits set on the way up, as a sorted set: where a limit sits does not matter,
    that it bounds this process does (a cgroup without limits, as most are, adds nothing)."""
    found = set()
    here = path if path.startswith("/") else "/"
    while True:
        for name in files:
            value = _read(f"{mount}{here.rstrip('/')}/{name}").strip()
            if _bounds(name, value):
                found.add(f"{name}={value}")
        if here == "/":
            return ";".join(sorted(found))
        here = os.path.dirname(here)


def _bounds(name: str, value: str) -> bool:
    first = value.split()[0] if value else "max"
    if first in ("max", "-1") or _DEFAULTS.get(name) == first:
        return False
    return not (first.isdigit() and int(first) >= 1 << 62)


def _status(base: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in _read(f"{base}/status").splitlines():
        name, _, value = line.partition(":")
        fields[name] = " ".join(value.split())
    return fields


def _scheduling(base: str) -> str:
    """Nice value, real-time priority and scheduling policy (fields 19, 40 and 41 of
    ``/proc/PID/stat``, counted after the command name, which may hold spaces)."""
    after_name = _read(f"{base}/stat").rpartition(")")[2].split()
    if len(after_name) < 39:
        return "?"
    return f"{after_name[16]}/{after_name[37]}/{after_name[38]}"


def peer_uid(conn: socket.socket) -> int:
    """The uid of the process at the other end of ``conn``, as the kernel recorded it when
    the connection was made (for a listening server: when it called ``listen``)."""
    return _peer_creds(conn)[1]


def peer_fingerprint(conn: socket.socket) -> str | None:
    """The fingerprint of the process that connected ``conn``, read from ``/proc`` under the
    pid the kernel gave with the connection, never from the peer's own account; None when it
    cannot be known: a peer in a pid namespace this process cannot see (pid 0), or one that
    exited before its facts were read (its pid may be another process's by then, so the
    pidfd the kernel gives with the connection must still name that pid after the read; a
    kernel without it leaves that narrow window open)."""
    pid = _peer_creds(conn)[0]
    if pid <= 0:
        return None
    try:
        pidfd: int | None = conn.getsockopt(socket.SOL_SOCKET, _SO_PEERPIDFD)
    except OSError:
        pidfd = None
    try:
        found = fingerprint(pid)
        if pidfd is not None and _pidfd_pid(pidfd) != pid:
            return None
        return found
    finally:
        if pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(pidfd)


def _peer_creds(conn: socket.socket) -> tuple[int, int, int]:
    """pid, uid, gid of the peer (``SO_PEERCRED``)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", creds)
    return pid, uid, gid


def _pidfd_pid(pidfd: int) -> int:
    """The pid a pidfd names now in this pid namespace (-1 or 0 once that process is gone)."""
    for line in _read(f"/proc/self/fdinfo/{pidfd}").splitlines():
        if line.startswith("Pid:"):
            return int(line.split()[1])
    return -1
