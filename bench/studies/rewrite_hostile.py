"""CPU seconds of the rewriter's text stages, and of every regex in ``cq.rewrite``, on hostile
texts: each shape repeated (numbered ones as distinct lines) to 100 KB and 1 MB.

The stages are what a rewritten search runs on the query text before any rg run: the
heuristic (``should_rewrite``), the extraction (``extract_mentions``), the offline rewriter
over a real vocabulary (``offline_rewrite``, which maps the prose onto the tree's names), and
the model-answer check (``parse_answer``) on the same text as a model answer, the nesting
scan of an LLM reply body (``json_depth``, without its early stop), and the issue-form
environment cut (``without_environment``, which reads every line as a possible heading). Then every
compiled module-level regex of ``cq.rewrite`` scans the text (``finditer``). Each shape runs in
a child process; an item that takes longer than ``--cap`` seconds is killed and shown as
``>CAP`` (the quadratic and cubic patterns this bench was written for never finish), one that
raises shows the exception's name.

    python -m bench.studies.rewrite_hostile                         # all shapes, 100 KB and 1 MB
    python -m bench.studies.rewrite_hostile --sizes 100000 --cap 20 --shape a- --shape newlines
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import pkgutil
import re
import subprocess
import sys
import time

from bench._common import scratch_dir, stdlib_dir

_ISSUE = (
    "Traceback (most recent call last):\n"
    '  File "/src/pkg/fields.py", line 120, in deserialize\n'
    "    value = self._deserialize(value, attr, data)\n"
    "pkg/fields.py:88: in _validate\n"
    "ValueError: Not a valid 'datetime' value for field 42\n"
    "```python\nfrom pkg.fields import DateTime\nDateTime().deserialize('x')\n```\n"
    "How does `DateTime.deserialize` parse time zones? See pkg.utils.from_iso_datetime.\n"
)
SHAPES = {
    "a-": "a-",
    "a/": "a/",
    "a.": "a.",
    "C:/": "x/C:",
    "newlines": "\n",
    "spaces": " ",
    "backticks": "`",
    "fence-lines": "```\n",
    "File-quote": 'File "',
    "x.py:": "x.py:",
    "quotes": "'\"",
    "brackets": "[",
    "camel": "aB",
    "word": "a",
    "error-line": "E: Error: x",
    "heading": "# a ",
    "bold": "**",
    "env-lines": "### Environment\n- OS: x\n",
    "gh-links": "github.com/a/b/blob/c/",
    "issue": _ISSUE,
    # Distinct paths, each line different: "{i}" is the line's number.
    "init-paths": "d{i}/__init__.py ",
    "frames": '  File "/x/y{i}/__init__.py", line {i}, in f{i}\n    x = y({i})\n',
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", action="append", choices=sorted(SHAPES), help="repeatable")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--cap", type=float, default=30.0, help="seconds per item")
    parser.add_argument("--root", default=stdlib_dir(), help="vocabulary tree (the stdlib)")
    parser.add_argument("--child", nargs=3, metavar=("SHAPE", "SIZE", "SKIP"), help="internal")
    args = parser.parse_args()
    if args.child:
        shape, size, skip = args.child
        _child(SHAPES[shape], int(size), int(skip), args.root)
        return
    print(f"vocabulary: {args.root}  cap: {args.cap:g} s per item  (CPU seconds)")
    print(f"{'shape':<12}{'size':>9}  " + "".join(f"{s:>11}" for s in _STAGES) + "  worst regex")
    with scratch_dir() as cache:
        for shape in args.shape or SHAPES:
            for size in args.sizes:
                times = _measure(shape, size, args, cache)
                regexes = {k: v for k, v in times.items() if k not in _STAGES}
                worst = max(regexes, key=lambda k: _sortable(regexes[k]), default="")
                cells = "".join(f"{_fmt(times.get(s)):>11}" for s in _STAGES)
                print(f"{shape:<12}{size:>9}  {cells}  {worst} {_fmt(regexes.get(worst))}")


_STAGES = ("heuristic", "extract", "offline", "answer", "json_depth", "template")


def _measure(shape: str, size: int, args: argparse.Namespace, cache: str) -> dict[str, object]:
    """Item -> CPU seconds, or ``">CAP"``; a child is restarted after the item it hung on."""
    import threading

    times: dict[str, object] = {}
    env = {**os.environ, "CQ_CACHE_DIR": cache, "CQ_LLM": "off"}
    while True:
        argv = [sys.executable, __file__, "--child", shape, str(size), str(len(times))]
        proc = subprocess.Popen([*argv, "--root", args.root], stdout=subprocess.PIPE, env=env)
        assert proc.stdout is not None
        hung, timer = None, None
        for line in proc.stdout:
            item, seconds = json.loads(line)
            if timer is not None:
                timer.cancel()
            if seconds is None:  # the child starts this item: kill it if it takes too long
                hung, timer = item, threading.Timer(args.cap, proc.kill)
                timer.start()
            else:
                times[item], hung = seconds, None
        proc.wait()
        if timer is not None:
            timer.cancel()
        if hung is None:
            return times
        times[hung] = f">{args.cap:g}"


def _child(unit: str, size: int, skip: int, root: str) -> None:
    from pathlib import Path

    import cq.rewrite.validate
    from cq.model.tuning import RewriteTuning
    from cq.rewrite.extract import extract_mentions
    from cq.rewrite.heuristic import should_rewrite
    from cq.rewrite.offline import offline_rewrite
    from cq.rewrite.validate import InvalidAnswer, parse_answer
    from cq.rewrite.vocabulary import load_vocabulary

    text = _text(unit, size)
    vocabulary = load_vocabulary(Path(root))

    def answer() -> None:
        with contextlib.suppress(InvalidAnswer):
            parse_answer(text, RewriteTuning())

    items = [
        ("heuristic", lambda: should_rewrite(text)),
        ("extract", lambda: extract_mentions(text)),
        ("offline", lambda: offline_rewrite(text, extract_mentions(text), vocabulary)),
        ("answer", answer),
    ]
    data = text.encode()
    depth = getattr(cq.rewrite.validate, "json_depth", None)  # absent before issue 13
    items += [("json_depth", lambda: depth(data, len(data)))] if depth else []
    cut = getattr(cq.rewrite, "without_environment", None)  # absent before session 8
    items += [("template", lambda: cut(text))] if cut else []
    items += [
        (
            name,
            lambda rx=rx: sum(
                1 for _ in rx.finditer(data if isinstance(rx.pattern, bytes) else text)
            ),
        )
        for name, rx in _regexes()
    ]
    for name, run in items[skip:]:
        print(json.dumps([name, None]), flush=True)
        started = time.process_time()
        try:
            run()
        except Exception as exc:  # the old parse_answer raised RecursionError
            print(json.dumps([name, type(exc).__name__]), flush=True)
            continue
        print(json.dumps([name, round(time.process_time() - started, 3)]), flush=True)


def _text(unit: str, size: int) -> str:
    if "{i}" not in unit:
        return (unit * (size // len(unit) + 1))[:size]
    parts, length, i = [], 0, 0
    while length < size:
        parts.append(unit.replace("{i}", str(i)))
        length, i = length + len(parts[-1]), i + 1
    return "".join(parts)[:size]


def _regexes() -> list[tuple[str, re.Pattern]]:
    """Every compiled module-level regex of ``cq.rewrite``, as ``module.NAME``."""
    import cq.rewrite

    found = []
    for info in pkgutil.iter_modules(cq.rewrite.__path__):
        module = importlib.import_module(f"cq.rewrite.{info.name}")
        for name, value in sorted(vars(module).items()):
            if isinstance(value, re.Pattern):
                found.append((f"{info.name}.{name}", value))
    return found


def _sortable(value: object) -> float:
    return float("inf") if isinstance(value, str) else float(value)  # type: ignore[arg-type]


def _fmt(value: object) -> str:
    return "-" if value is None else value if isinstance(value, str) else f"{value:.3f}"


if __name__ == "__main__":
    main()
