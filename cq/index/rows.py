"""Document rows for many files, in-process or, for a large build, in a process pool.

A row is the document's fields ready for tantivy: (path, kind, qualname, line, path words,
name words, signature words, doc, text). Scanning and splitting are Python work; tantivy
tokenizes bodies in a thread of its own meanwhile; a large build (``index.build_pool_bytes``,
``cq/model/index_tuning.py``: measured on the bench tree of bench/index_speed.py) has a pool
of up to four workers (at most the CPUs) feed it batch by batch in path order. The pool is
spawned per build with the classification pool's worker lifetime (``cq/workers.py``: they
die with cq), and any pool failure finishes in-process.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from cq.index.documents import Row, file_rows
from cq.index.files import language_of_path


def prepared_rows(
    files: dict[str, bytes], pool_bytes: int, batch_bytes: int
) -> Iterator[tuple[list[Row], bool]]:
    """Rows of every file, a batch at a time, in path order, each batch with whether a worker
    process prepared it: in a pool of workers from ``pool_bytes`` of source on, in batches
    of ``batch_bytes``. In-process, ``files`` is emptied as it goes: a file's bytes are freed
    once its rows are made, for tantivy's indexing memory to reuse (bench/index_speed.py)."""
    paths = sorted(files)
    total = sum(len(files[p]) for p in paths)
    workers = min(os.cpu_count() or 1, 4)
    if total < pool_bytes or workers < 2:
        yield from ((_rows([(p, files.pop(p))]), False) for p in paths)
        return
    batches = _batches(paths, files, batch_bytes)
    done = 0
    try:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from cq.workers import signals_held, worker_init, worker_init_args

        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=worker_init,  # workers die with cq, as the classification pool's do
            initargs=worker_init_args(),
        ) as pool:
            with signals_held():  # submitting spawns the workers
                results = pool.map(_rows, batches)
            try:
                for result in results:
                    done += 1
                    yield result, True
            except GeneratorExit:  # the build stopped at its deadline: no batch more
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    except Exception:  # a worker died or the pool cannot start: finish here
        for batch in batches[done:]:
            yield _rows(batch), False


def _batches(
    paths: list[str], files: dict[str, bytes], batch_bytes: int
) -> list[list[tuple[str, bytes]]]:
    batches: list[list[tuple[str, bytes]]] = [[]]
    size = 0
    for p in paths:
        if size >= batch_bytes:
            batches.append([])
            size = 0
        batches[-1].append((p, files[p]))
        size += len(files[p])
    return batches


def _rows(batch: list[tuple[str, bytes]]) -> list[Row]:
    out: list[Row] = []
    for path, data in batch:
        out.extend(file_rows(path, data, language_of_path(path)))
    return out
