"""Materialise each benchmark issue's tree at its base commit, project files only.

For every row of the JSONL file: list the files of ``base_commit`` in the repository's bare
mirror (``MIRRORS/<owner>+<name>/repo``, or a clone given with ``--repo owner/name=PATH``),
keep the names ending in .py/.pyi/.toml/.cfg/.ini, and extract them with ``git archive`` into
``OUT/<instance_id>``. No git history lands in the tree (the history contains the fix). Trees
that already exist are left alone unless ``--force``. Never commit the trees.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

KEEP = re.compile(r"\.(py|pyi|toml|cfg|ini)$")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="../shared/eval/swebench_lite_dev_tuning.jsonl")
    ap.add_argument("--mirrors", default="/work/.mirror", help="dir of <owner>+<name>/repo")
    ap.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME=GIT_DIR")
    ap.add_argument("--out", default="/work/eval-trees")
    ap.add_argument("--force", action="store_true", help="rebuild existing trees")
    args = ap.parse_args()
    explicit = dict(item.split("=", 1) for item in args.repo)
    out = Path(args.out)
    failures = 0
    for line in Path(args.data).read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        target = out / row["instance_id"]
        if target.exists() and not args.force:
            continue
        git_dir = explicit.get(row["repo"]) or str(
            Path(args.mirrors) / row["repo"].replace("/", "+") / "repo"
        )
        try:
            materialise(git_dir, row["base_commit"], target)
            print(f"{row['instance_id']}: {sum(1 for _ in target.rglob('*.py'))} .py files")
        except (subprocess.CalledProcessError, OSError) as exc:
            failures += 1
            print(f"{row['instance_id']}: failed: {exc}", file=sys.stderr)
    return 1 if failures else 0


def materialise(git_dir: str, commit: str, target: Path) -> None:
    """Extract the kept files of ``commit`` into ``target`` (replaced if present)."""
    listing = subprocess.run(
        ["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", "-z", commit],
        check=True,
        capture_output=True,
    ).stdout.decode("utf-8", errors="surrogateescape")
    names = [n for n in listing.split("\0") if n and KEEP.search(n)]
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    archive = subprocess.Popen(
        ["git", "--git-dir", git_dir, "archive", commit, "--", *names],
        stdout=subprocess.PIPE,
    )
    subprocess.run(["tar", "-x", "-C", str(target)], stdin=archive.stdout, check=True)
    assert archive.stdout is not None
    archive.stdout.close()
    if archive.wait() != 0:
        raise subprocess.CalledProcessError(archive.returncode, "git archive")


if __name__ == "__main__":
    raise SystemExit(main())
