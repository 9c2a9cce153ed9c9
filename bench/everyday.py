"""Everyday questions: does cq's Answer name what a person asked for, and is it in the first five?

``bench/data/everyday.jsonl`` holds questions people and agents type about the tuning
repositories (``bench/data/everyday.trees.json``: each tree's repository and commit), of six
kinds: ``definition`` ("where is X defined?"), ``callers`` ("who calls A.b?"), ``usage``
("where is X imported?"), ``concept`` ("how are buckets created?"), ``error`` (a message the
code raises, logs or prints, some with placeholders filled in) and ``title`` (a bug report's
title). Each gold answer was chosen by reading the code before cq ran on the question, and is
kept with a one-line reason.

Every question is one one-shot ``cq search QUERY --format json`` over its tree (``CQ_SERVER=0``,
``CQ_LLM=off``), ``--jobs`` at a time. The cache, per ``--cache``:

- ``cold`` (default): an empty cache dir for every question: the first question a user asks.
  A first index build the search left running behind it (trees over the index's background
  size) is waited for before the dir is removed.
- ``warm``: a copy, for every question, of a cache holding only the tree's index (built once
  per run by ``cq index``): every question sees the index and nothing another question left.
- ``DIR``: that cache dir, shared by all questions (an ordinary user's cache; later questions
  see what earlier ones left, so the figures depend on the order).

Scores (``bench/_everyday.py`` defines the matching): Answer@1 and top-5 per kind, per
repository and pooled; ``--by-repo`` adds each repository's figure per kind. ``--json-out`` keeps
every question's Answer and first five; ``--compare A B`` lists the questions that changed.
``--make-trees DIR`` extracts the trees at their recorded commits from bare mirrors.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import itertools
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec

from bench import _everyday, _loc
from bench._common import HEAD_TREES, MIRRORS
from bench._everyday import Outcome, Place, Question

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "everyday.jsonl"
TREES_FILE = HERE / "data" / "everyday.trees.json"
ANSWERED = (0, 1)  # exit codes of a report (1: no finding, as rg)
BUILDER_APPEARS_S = 30.0  # how long a cold question's detached index builder may take to start
BUILDER_DONE_S = 900.0  # how long its build may take before the dir is removed anyway


class _JsonAnswer(msgspec.Struct, frozen=True):
    """The report's own ``answer`` object, when the JSON has one."""

    kind: str = ""
    name: str | None = None  # null when the Answer names nothing (a best hit, nothing found)
    file: str | None = None
    line: int | None = None
    calls: list[int] = []  # a callers or usage Answer's sites, indexes into ``findings``
    provisional: bool = False  # the report says a later run may answer otherwise


class _WithAnswer(msgspec.Struct, frozen=True):
    answer: _JsonAnswer | None = None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument(
        "--trees",
        default=os.environ.get(HEAD_TREES),
        metavar="DIR",
        help=f"DIR/<repo> is each tree (${HEAD_TREES}; made by --make-trees)",
    )
    ap.add_argument("--cache", default="cold", help="cold | warm | a cache DIR (see above)")
    ap.add_argument("--jobs", type=int, default=1, help="questions run at once")
    ap.add_argument("--limit", type=int, default=50, help="findings asked of cq per question")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per question")
    ap.add_argument("--only", action="append", default=[], help="question ids to run")
    ap.add_argument("--repo", action="append", default=[], help="only these trees")
    ap.add_argument("--kind", action="append", default=[], help="only these kinds")
    ap.add_argument("--extra-args", default="", help="more cq search arguments, one string")
    ap.add_argument(
        "--cq-checkout",
        default=str(HERE.parent),
        help="run the cq package of this source tree (python -m cq in DIR)",
    )
    ap.add_argument("--json-out", help="every question's Answer and first five (.gz: gzipped)")
    ap.add_argument("--by-repo", action="store_true", help="each repository's figure per kind")
    ap.add_argument("--verbose", "-v", action="store_true", help="one line per question")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="two --json-out")
    ap.add_argument("--make-trees", metavar="DIR", help="extract the trees into DIR, then stop")
    ap.add_argument(
        "--mirrors",
        default=os.environ.get(MIRRORS),
        metavar="DIR",
        help=f"OWNER+NAME/repo bare mirrors (${MIRRORS})",
    )
    ap.add_argument("--trees-file", default=str(TREES_FILE), help="each tree's repo and commit")
    args = ap.parse_args()
    if args.compare:
        before, after = (_everyday.read(p) for p in args.compare)
        print(_everyday.compare(before, after))
        return 0
    if args.make_trees:
        if not args.mirrors:
            ap.error(f"--make-trees needs --mirrors DIR (or ${MIRRORS})")
        return make_trees(Path(args.make_trees), Path(args.mirrors), Path(args.trees_file))
    if not args.trees:
        ap.error(f"give --trees DIR (or ${HEAD_TREES}): the trees --make-trees extracts")
    questions = _everyday.load_questions(args.data)
    questions = [
        q
        for q in questions
        if (not args.only or q.id in args.only)
        and (not args.repo or q.repo in args.repo)
        and (not args.kind or q.kind in args.kind)
    ]
    missing = sorted({q.repo for q in questions if not (Path(args.trees) / q.repo).is_dir()})
    if missing:
        print(f"everyday: no tree for {', '.join(missing)} under {args.trees}", file=sys.stderr)
        return 2
    done = itertools.count(1)

    def one(q: Question) -> Outcome:
        outcome = run_one(q, args, templates)
        mark = ("A" if outcome.ans else "-") + ("T" if outcome.top5 else "-")
        print(f"[{next(done)}/{len(questions)}] {mark} {q.id}", file=sys.stderr, flush=True)
        return outcome

    with _templates(args, sorted({q.repo for q in questions})) as templates:
        outcomes = _loc.run_all(questions, one, args.jobs)
    options = [f"--cache={args.cache}", f"--limit={args.limit}"]
    options += [f"--cq-checkout={args.cq_checkout}"]
    options += shlex.split(args.extra_args)
    print(f"### everyday: {Path(args.data).name}, {len(outcomes)} questions, {' '.join(options)}")
    print("\n" + _everyday.table(outcomes, "kind") + "\n")
    print(_everyday.table(outcomes, "repo") + "\n")
    if args.by_repo:
        print("Answer@1 / top-5 (n) per repository and kind:\n")
        print(_everyday.by_repo_table(outcomes) + "\n")
    if args.verbose:
        print("\n".join(_everyday.verbose_lines(outcomes)))
    if args.json_out:
        _everyday.write(args.json_out, _everyday.RunFile(args.data, options, outcomes))
    return 0


def run_one(q: Question, args: argparse.Namespace, templates: dict[str, Path]) -> Outcome:
    tree = Path(args.trees).resolve() / q.repo
    argv = [sys.executable, "-m", "cq", "search", "--format", "json", "--root", str(tree)]
    argv += ["--limit", str(args.limit), *shlex.split(args.extra_args)]
    argv += ["--", q.query] if q.query.startswith("-") else [q.query]
    env = dict(os.environ, CQ_SERVER="0", CQ_LLM="off")
    with _cache_dir(args.cache, templates.get(q.repo)) as cache:
        env["CQ_CACHE_DIR"] = str(cache)
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                argv, capture_output=True, env=env, cwd=args.cq_checkout, timeout=args.timeout
            )
        except subprocess.TimeoutExpired:
            proc = subprocess.CompletedProcess(argv, -1, b"", b"timed out")
        seconds = round(time.perf_counter() - start, 3)
        outcome = score(q, proc, seconds)
        if args.cache == "cold" and proc.returncode in ANSWERED:
            _wait_for_builder(cache, proc.stdout)
    return outcome


def score(q: Question, proc: subprocess.CompletedProcess, seconds: float) -> Outcome:
    """Read the report, then score its Answer and first five against the gold."""
    if proc.returncode not in ANSWERED or not proc.stdout:
        why = "timed out" if proc.returncode == -1 else f"exit {proc.returncode}"
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        print(f"{q.id}: {why}: {tail[0][:200]}", file=sys.stderr)
        return Outcome(
            q.id, q.repo, q.kind, q.query, q.gold, "", None, [], False, False, seconds, why
        )
    answer_kind, answer, note, top = read_report(proc.stdout, q)
    return Outcome(
        id=q.id,
        repo=q.repo,
        kind=q.kind,
        query=q.query,
        gold=q.gold,
        answer_kind=answer_kind,
        answer=answer,
        top=top,
        ans=_everyday.matches(answer, q.gold, q.kind),
        top5=any(_everyday.matches(p, q.gold, q.kind) for p in top),
        seconds=seconds,
        note=note,
    )


def read_report(raw: bytes, q: Question) -> tuple[str, Place | None, str, list[Place]]:
    """The Answer's kind and place, how it was read, and the first five places."""
    from cq.model import FunctionList, SearchResult

    result = msgspec.json.decode(raw, type=SearchResult)
    findings = result.findings
    own = msgspec.json.decode(raw, type=_WithAnswer).answer
    if own is not None:  # the report states its Answer: read it as it says
        answer_kind = own.kind
        note = "json-answer, provisional" if own.provisional else "json-answer"
        answer = _place_at(findings, own) if own.file else None
        if own.kind in ("callers", "ambiguous_callers") and own.calls:
            # a callers Answer is its first call's function, as the markdown-derived one is
            answer = _finding_place(findings[own.calls[0]])
    else:
        answer_kind, answer = _derived_answer(result)
        note = "derived"
    places: list[Place] = [answer] if answer else []
    sites = _everyday.all_place_golds(q.gold)
    if not sites:
        functions = next((s for s in result.sections if isinstance(s, FunctionList)), None)
        if functions is not None:
            places += [Place(fn.file, fn.line, fn.name) for fn in functions.functions]
    places += [_finding_place(f) for f in findings]
    return answer_kind, answer, note, _everyday.first_places(places, sites=sites)


def _derived_answer(result) -> tuple[str, Place | None]:
    """The Answer as the markdown report decides it (``cq.assemble.answer.decide_answer``)."""
    from cq.assemble.answer import decide_answer
    from cq.rewrite import understand

    # a report of a cq from before the JSON answer: its query understood again, as that cq did
    modes = {"identifier": "identifier", "literal": "literal", "regex": "regex"}
    summary = result.summary
    question = understand(summary.query, mode=modes.get(summary.mode_requested))
    said = decide_answer(msgspec.structs.replace(result, question=question))
    findings = result.findings
    if said.kind in ("callers", "ambiguous_callers") and said.calls:
        return said.kind, _finding_place(findings[said.calls[0]])
    if said.finding is None:
        return said.kind, None
    return said.kind, _finding_place(findings[said.finding])


def _finding_place(f) -> Place:
    """A definition finding is its own name; any other finding the function holding it."""
    if f.category == "definition":
        return Place(f.file, f.line, _loc.answer_key(msgspec.to_builtins(f)))
    scope = f"{f.file}::{f.containing_scope}" if f.containing_scope else ""
    return Place(f.file, f.line, scope)


def _place_at(findings, own: _JsonAnswer) -> Place:
    """A JSON Answer's place: the finding at its line when one is (a callsite names the
    function holding it), else its own name."""
    for f in findings:
        if f.file == own.file and f.line == own.line:
            return _finding_place(f)
    return Place(own.file or "", own.line or 0, f"{own.file}::{own.name}" if own.name else "")


# --- caches ---------------------------------------------------------------------------------


@contextlib.contextmanager
def _templates(args: argparse.Namespace, repos: list[str]) -> Iterator[dict[str, Path]]:
    """``--cache warm``: one cache per tree holding only its index, built by ``cq index``."""
    if args.cache != "warm":
        yield {}
        return
    base = Path(tempfile.mkdtemp(prefix="cq-everyday-index-"))
    try:
        templates = {}
        for repo in repos:
            cache = base / repo
            tree = Path(args.trees).resolve() / repo
            env = dict(os.environ, CQ_SERVER="0", CQ_LLM="off", CQ_CACHE_DIR=str(cache))
            argv = [sys.executable, "-m", "cq", "index", "--root", str(tree)]
            subprocess.run(argv, env=env, cwd=args.cq_checkout, check=True, capture_output=True)
            templates[repo] = cache
        yield templates
    finally:
        shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def _cache_dir(mode: str, template: Path | None) -> Iterator[Path]:
    if mode not in ("cold", "warm"):
        yield Path(mode)
        return
    path = Path(tempfile.mkdtemp(prefix="cq-everyday-"))
    try:
        if template is not None:
            shutil.copytree(template, path, dirs_exist_ok=True)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _wait_for_builder(cache: Path, raw: bytes) -> None:
    """A cold question on a large tree leaves a detached index builder running in ``cache``
    (``cq.index.behind``): wait until it lets go of its lock, so the dir is not removed
    under it. Taking the lock before the builder does makes it stop at once, which is as
    good."""
    index = json.loads(raw).get("summary", {}).get("telemetry", {}).get("index") or {}
    if not index.get("building_source_bytes"):
        return
    deadline = time.monotonic() + BUILDER_APPEARS_S
    locks: list[Path] = []
    while not locks and time.monotonic() < deadline:
        locks = list(cache.rglob("*.building"))
        if not locks:
            time.sleep(0.2)
    deadline = time.monotonic() + BUILDER_DONE_S
    for lock in locks:
        fd = os.open(lock, os.O_RDWR)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.5)
        finally:
            os.close(fd)


# --- trees ----------------------------------------------------------------------------------


def make_trees(out: Path, mirrors: Path, trees_file: Path) -> int:
    """Each tree of ``trees_file`` at its commit, from ``MIRRORS/OWNER+NAME/repo`` (symbolic
    links and blobs a snapshot lacks left out, as the trees were made)."""
    spec = json.loads(trees_file.read_text())
    for name, tree in sorted(spec.items()):
        dest = out / name
        if dest.exists():
            print(f"{dest}: exists, left as it is")
            continue
        gitdir = mirrors / tree["repo"].replace("/", "+") / "repo"
        _extract(gitdir, tree["commit"], dest)
        print(f"{dest}: {tree['repo']} at {tree['commit'][:12]}")
    return 0


def _extract(gitdir: Path, commit: str, dest: Path) -> None:
    listing = subprocess.run(
        ["git", "--git-dir", str(gitdir), "ls-tree", "-r", "-z", commit],
        capture_output=True,
        check=True,
    ).stdout
    entries = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, path = record.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode != b"120000":
            entries.append((sha, os.fsdecode(path)))
    cat = subprocess.Popen(
        ["git", "--git-dir", str(gitdir), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert cat.stdin is not None and cat.stdout is not None
    try:
        for sha, path in entries:
            cat.stdin.write(sha + b"\n")
            cat.stdin.flush()
            header = cat.stdout.readline().split()
            if header[1] == b"missing":
                continue
            data = cat.stdout.read(int(header[2]))
            cat.stdout.read(1)
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    finally:
        cat.stdin.close()
        cat.wait()


if __name__ == "__main__":
    raise SystemExit(main())
