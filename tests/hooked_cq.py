"""Run the ``cq`` CLI with a test-only hook installed first (the hooks live here, never in cq).

    python tests/hooked_cq.py HOOK [cq arguments...]

Hooks:
- ``dead-worker``: every pool worker exits on its first batch, as a crashed worker would.
- ``stalled-workers``: every pool worker spends ``STALL_SECONDS`` on each batch before doing
  it: a pool that is surely busy when the test acts, however loaded the machine.
- ``change-after-read=REL``: right after the search's corpus first reads ``REL`` (relative to
  the root), the file on disk is replaced by the contents of ``$CQ_TEST_NEW_CONTENT`` (a path):
  a concurrent writer at the worst moment, when every later read would see other bytes.
- ``link-before-read=REL``: right before the search's corpus first reads ``REL``, the file is
  replaced by a symbolic link to ``$CQ_TEST_LINK_TARGET``: a link swapped in after rg's walk
  and every confinement check.
- ``slow-index=SECONDS``: the repository index spends SECONDS on each file it prepares
  before preparing it (in-process builds): a first build slower than any ``--timeout``. With
  ``$CQ_TEST_PREPARED`` set (a path), a line is appended to that file for each file
  prepared: how far the process's own build went before it exited.
- ``stuck-index``: the repository index's build never gets its first prepared file (in-process
  builds and pooled ones alike): a build no deadline sees the end of.
- ``count-opens=ROOT``: every open of a file under ``ROOT`` in the process is counted (Python's
  ``open`` audit event: ``open`` raises it, and ``os.open`` again when it is ``open``'s
  opener, as in ``cq.rooted``: that second event is the same open); at exit the counts are
  written as JSON to ``$CQ_TEST_OPENS``.
- ``clear-before-writer``: the repository index's directory is removed (as ``cq index --clear``
  does) just before a build takes its writer: the moment a clear from another process can
  come on a loaded machine.
- ``slow-enrichment=SECONDS``: each shown Python hit's enrichment starts SECONDS late, as on a
  machine whose cores are busy with other work.
- ``without-extra``: the ``[embed]`` extra's libraries cannot be imported, as in an install
  without it (CI installs it, so that its tests run).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _exit_batch(tasks: list[object]) -> list[bytes]:
    """Stands in for ``cq.classify.analyze.analyze_batch`` in the pool's workers."""
    os._exit(3)


STALL_SECONDS = 300.0


def _stalled_batch(tasks: list[object], caps: object) -> list[bytes]:
    """Stands in for ``cq.classify.analyze.analyze_batch``: the same work, much later."""
    import time

    from cq.classify.analyze import analyze_batch

    time.sleep(STALL_SECONDS)
    return analyze_batch(tasks, caps)  # type: ignore[arg-type]


def _install_stalled_workers() -> None:
    import cq.classify.pool

    cq.classify.pool.analyze_batch = _stalled_batch  # type: ignore[assignment]


def _install_dead_worker() -> None:
    import cq.classify.pool

    cq.classify.pool.analyze_batch = _exit_batch  # type: ignore[assignment]


def _install_change_after_read(rel: str) -> None:
    import cq.parse.corpus

    replacement = Path(os.environ["CQ_TEST_NEW_CONTENT"]).read_bytes()
    read = cq.parse.corpus.load_source
    done: list[bool] = []

    def load_then_change(root: Path, path: str, language: str):  # type: ignore[no-untyped-def]
        source = read(root, path, language)  # type: ignore[arg-type]
        if path == rel and not done:
            done.append(True)
            (root / path).write_bytes(replacement)
        return source

    cq.parse.corpus.load_source = load_then_change  # type: ignore[assignment]


def _install_link_before_read(rel: str) -> None:
    import cq.parse.corpus

    target = os.environ["CQ_TEST_LINK_TARGET"]
    read = cq.parse.corpus.load_source
    done: list[bool] = []

    def link_then_load(root: Path, path: str, language: str):  # type: ignore[no-untyped-def]
        if path == rel and not done:
            done.append(True)
            (root / path).unlink()
            (root / path).symlink_to(target)
        return read(root, path, language)  # type: ignore[arg-type]

    cq.parse.corpus.load_source = link_then_load  # type: ignore[assignment]


def _install_slow_index(seconds: float) -> None:
    import time

    import cq.index.rows

    prepare = cq.index.rows._rows
    record = os.environ.get("CQ_TEST_PREPARED")

    def slow_rows(batch):  # type: ignore[no-untyped-def]
        time.sleep(seconds * len(batch))
        rows = prepare(batch)
        if record:
            with open(record, "a") as out:
                out.writelines(f"{path}\n" for path, _ in batch)
        return rows

    cq.index.rows._rows = slow_rows  # type: ignore[assignment]


def _install_stuck_index() -> None:
    import threading

    import cq.index.build

    def never(*args, **kwargs):  # type: ignore[no-untyped-def]
        threading.Event().wait()
        yield from ()

    cq.index.build.prepared_rows = never  # type: ignore[assignment]


def _install_clear_before_writer() -> None:
    import shutil

    import cq.index.build

    take = cq.index.build._writer
    done: list[bool] = []

    def cleared_first(index, tuning, directory):  # type: ignore[no-untyped-def]
        if directory is not None and not done:  # once: the build that follows finds it gone
            done.append(True)
            aside = directory.with_name(f"{directory.name}.cleared")
            directory.rename(aside)  # as ``clear_index`` removes it
            shutil.rmtree(aside)
        return take(index, tuning, directory)

    cq.index.build._writer = cleared_first  # type: ignore[assignment]


def _install_count_opens(root: str) -> None:
    import atexit
    import json

    base = os.path.join(os.path.realpath(root), "")
    opened: dict[str, int] = {}
    by_io: list[object] = [None]  # the path ``open`` just opened (its opener's event follows)

    def hook(event: str, args: tuple[object, ...]) -> None:
        path, mode = args[0] if args else None, args[1] if len(args) > 1 else None
        if event != "open" or not isinstance(path, str) or not path.startswith(base):
            return
        if mode is None and by_io[0] == path:  # os.open as open's opener: the same open
            by_io[0] = None
            return
        by_io[0] = path if mode is not None else None
        opened[path] = opened.get(path, 0) + 1

    def write() -> None:
        Path(os.environ["CQ_TEST_OPENS"]).write_text(json.dumps(opened))

    sys.addaudithook(hook)
    atexit.register(write)


def _install_slow_enrichment(seconds: float) -> None:
    import time

    import cq.enrich.computed

    enrich = cq.enrich.computed.enrich_python

    def late(*args, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(seconds)
        return enrich(*args, **kwargs)

    cq.enrich.computed.enrich_python = late  # type: ignore[assignment]


class _Absent:
    """A finder that says the extra's top-level packages are not installed."""

    EXTRA = frozenset({"numpy", "safetensors", "tokenizers", "huggingface_hub"})

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] in self.EXTRA:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


def _install_without_extra() -> None:
    sys.meta_path.insert(0, _Absent())


def main() -> int:
    hook, args = sys.argv[1], sys.argv[2:]
    if hook == "dead-worker":
        _install_dead_worker()
    elif hook == "stalled-workers":
        _install_stalled_workers()
    elif hook.startswith("change-after-read="):
        _install_change_after_read(hook.partition("=")[2])
    elif hook.startswith("link-before-read="):
        _install_link_before_read(hook.partition("=")[2])
    elif hook.startswith("slow-index="):
        _install_slow_index(float(hook.partition("=")[2]))
    elif hook == "stuck-index":
        _install_stuck_index()
    elif hook == "clear-before-writer":
        _install_clear_before_writer()
    elif hook.startswith("slow-enrichment="):
        _install_slow_enrichment(float(hook.partition("=")[2]))
    elif hook == "without-extra":
        _install_without_extra()
    elif hook.startswith("count-opens="):
        _install_count_opens(hook.partition("=")[2])
    else:
        raise SystemExit(f"unknown hook {hook}")
    from cq.cli import main as cq_main

    return cq_main(args)


if __name__ == "__main__":  # the pool's spawned workers import this module without running it
    raise SystemExit(main())
