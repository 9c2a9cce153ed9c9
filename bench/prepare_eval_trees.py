"""Materialise each benchmark issue's tree at its base commit, project files only.

For every row of the JSONL files (``--data``, repeatable; default the 22 Lite-dev issues): list
the files of ``base_commit`` in the repository's bare mirror (``MIRRORS/<owner>+<name>/repo``,
``<owner>/<name>`` being the row's ``fetch_source`` or ``repo``; or a clone given with
``--repo owner/name=PATH``), keep the project files of the issue's language and write them to
``OUT/<instance_id>``. Python issues keep .py/.pyi/.toml/.cfg/.ini; Rust issues (a gold code file
ends in .rs) keep .rs/.toml plus Cargo.lock. No git history lands in the tree (the history
contains the fix).

Disk: the 458 tuning trees hold the same files many times over (40 commits of one repository
differ in a few files), so every blob is written once to ``OUT/.blobs/<sha>`` (read-only) and
each tree's file is a hard link to it. cq never writes into a searched tree, so sharing inodes
is safe; a tree can still be deleted on its own. Trees that already exist are left alone
unless ``--force``. Never commit the trees.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from bench import _common

KEEP = {
    "python": re.compile(r"\.(py|pyi|toml|cfg|ini)$"),
    "rust": re.compile(r"(\.(rs|toml)|(^|/)Cargo\.lock)$"),
}
DEFAULT_DATA = "../shared/eval/swebench_lite_dev_tuning.jsonl"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", action="append", default=[], help=f"JSONL (default {DEFAULT_DATA})")
    _common.dir_argument(ap, "--mirrors", _common.MIRRORS, "bare mirrors, DIR/<owner>+<name>/repo")
    ap.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME=GIT_DIR")
    _common.dir_argument(ap, "--out", _common.EVAL_TREES, "where the trees go, DIR/<instance_id>")
    ap.add_argument("--only", action="append", default=[], help="instance ids to make")
    ap.add_argument("--force", action="store_true", help="rebuild existing trees")
    args = ap.parse_args()
    explicit = dict(item.split("=", 1) for item in args.repo)
    out = Path(args.out)
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for data in args.data or [DEFAULT_DATA]:
        for line in Path(data).read_text().splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            if args.only and row["instance_id"] not in args.only:
                continue
            if (out / row["instance_id"]).exists() and not args.force:
                continue
            by_repo[row.get("fetch_source") or row["repo"]].append(row)
    failures = 0
    for repo, rows in sorted(by_repo.items()):
        git_dir = explicit.get(repo) or str(Path(args.mirrors) / repo.replace("/", "+") / "repo")
        store = BlobStore(git_dir, out / ".blobs")
        try:
            for row in rows:
                target = out / row["instance_id"]
                try:
                    count = materialise(store, row["base_commit"], language(row), target)
                    print(f"{row['instance_id']}: {count} files")
                except (subprocess.CalledProcessError, OSError) as exc:
                    failures += 1
                    print(f"{row['instance_id']}: failed: {exc}", file=sys.stderr)
        finally:
            store.close()
    return 1 if failures else 0


def language(row: dict) -> str:
    """Rust when a gold code file is Rust, else Python (every tuning row has code files)."""
    return "rust" if any(f.endswith(".rs") for f in row["gold_code_files"]) else "python"


class BlobStore:
    """Blobs of one repository written once under ``root``; one ``git cat-file`` process."""

    def __init__(self, git_dir: str, root: Path) -> None:
        self.git_dir = git_dir
        self.root = root
        self._cat: subprocess.Popen | None = None

    def path(self, sha: str) -> Path:
        """The stored copy of blob ``sha``, written on first request."""
        dest = self.root / sha[:2] / sha
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_suffix(f".tmp{os.getpid()}")
            tmp.write_bytes(self._read(sha))
            tmp.chmod(0o444)
            tmp.replace(dest)
        return dest

    def _read(self, sha: str) -> bytes:
        if self._cat is None:
            self._cat = subprocess.Popen(
                ["git", "--git-dir", self.git_dir, "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        assert self._cat.stdin is not None and self._cat.stdout is not None
        self._cat.stdin.write(sha.encode() + b"\n")
        self._cat.stdin.flush()
        header = self._cat.stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            raise OSError(f"git cat-file {sha}: {b' '.join(header).decode()}")
        data = self._cat.stdout.read(int(header[2]))
        self._cat.stdout.read(1)  # the newline after the content
        return data

    def close(self) -> None:
        if self._cat is not None:
            assert self._cat.stdin is not None
            self._cat.stdin.close()
            self._cat.wait()


def materialise(store: BlobStore, commit: str, lang: str, target: Path) -> int:
    """Link the kept files of ``commit`` into ``target`` (replaced if present); their count."""
    listing = subprocess.run(
        ["git", "--git-dir", store.git_dir, "ls-tree", "-r", "-z", commit],
        check=True,
        capture_output=True,
    ).stdout.decode("utf-8", errors="surrogateescape")
    keep = KEEP[lang]
    entries = []
    for item in listing.split("\0"):
        if not item:
            continue
        meta, name = item.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob" and mode != "120000" and keep.search(name):
            entries.append((sha, name))
    if target.exists():
        shutil.rmtree(target)
    partial = target.with_name(target.name + ".partial")
    if partial.exists():
        shutil.rmtree(partial)
    for sha, name in entries:
        dest = partial / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.link(store.path(sha), dest)
    partial.mkdir(parents=True, exist_ok=True)
    partial.rename(target)
    return len(entries)


if __name__ == "__main__":
    raise SystemExit(main())
