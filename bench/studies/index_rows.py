"""The index's document rows for every file of a tree: their CPU seconds and a digest of them.

Two checkouts that make the same digest make the same tantivy documents (the schema needs no
new version); run it under ``valgrind --tool=callgrind`` for instruction counts that the
machine's load does not move. ``--cq-src DIR`` runs another checkout's ``cq.index`` (a
``git archive`` of main).

    python -m bench.studies.index_rows --root $CQ_BENCH_INDEX_TREE --cq-src /tmp/cq-base
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import time
from pathlib import Path

from bench import _common
from bench._common import rg_binary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _common.dir_argument(ap, "--root", _common.INDEX_TREE, "a ~2,500-file tree")
    ap.add_argument("--cq-src", default=str(Path(__file__).resolve().parent.parent))
    args = ap.parse_args()
    sys.path.insert(0, args.cq_src)
    from cq.index.rows import prepared_rows

    root = Path(args.root)
    argv = [rg_binary(), "--files", "--no-config", "-t", "py", "-t", "rust"]
    listed = subprocess.run(argv, cwd=root, capture_output=True, check=True).stdout.decode()
    files = {rel: (root / rel).read_bytes() for rel in sorted(listed.splitlines())}
    started = time.process_time()
    digest = hashlib.sha256()
    count = 0
    for rows, _ in prepared_rows(files, 1 << 40, 1 << 20):  # in-process, as a 19 MB build
        for row in rows:
            digest.update(repr(tuple(row)).encode())
            count += 1
    cpu = time.process_time() - started
    print(f"{root.name}: {count} rows, digest {digest.hexdigest()[:16]}, {cpu:.3f} CPU-s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
