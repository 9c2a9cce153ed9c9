"""What the Pyrefly semantic stage costs and how often it resolves, next to rg in the same run.

Per tree (the stdlib without site-packages, plus any ``--tree NAME=DIR``), per query:

1. warm server, as in ``cq mcp``: one process, the server already running (the query asked
   once after indexing and answered in full, budget lifted), cq's cache filled, the answer
   cache off (``CQ_SEMANTIC_CACHE=0``: Pyrefly answers every time); median wall time of
   ``run_search`` with the stage on and off (interleaved), the stage's own
   ``run.timings_ms.semantic``, ``rg --json -w`` on the name;
2. warm repeat: the same with the answer cache on (after one unbudgeted filling run): what
   an identical search costs, and whether its JSON is identical run after run (run facts aside);
3. one-shot CLI: ``cq search`` with and without ``--no-semantic``, wall and CPU (cq with its
   children: Pyrefly included), cq cache warm; "fresh" = answer cache off, a new Pyrefly
   every run, server start and stop included; "cached" = answer cache on and filled (by
   one unbudgeted CLI run);
4. resolution: of the shown callsites of the queried name, when the root defines it, how
   many got a resolved definition (in the root, or a module name outside it) from Pyrefly
   alone and combined with cq's syntax fallback (``via: syntax``), and why the others did not:
   ``cut`` (the budget or a failed server), ``unknown`` (Pyrefly has no type
   for the call: an untyped receiver, a fixture, a module it cannot import), ``none``
   (typed, yet no definition); and whether every resolved definition in the root is a line
   cq classifies as ``definition`` (callsites' targets; all findings of that name,
   ``--limit 0``; an import's target is a module, line 1), a function
   parameter counted apart (a call of ``deepcopy`` inside ``def f(x, deepcopy=deepcopy)``
   resolves to the parameter, which cq labels a reference);
5. a killed and a SIGSTOPped server: the search's stage time with the default (no wait);
6. Pyrefly's peak RSS (``VmHWM``) on the tree after the queries, and the files it had open.

    python -m bench.semantic_cost --runs 3
    python -m bench.semantic_cost --no-stdlib --tree saleor=$CQ_BENCH_TREES/saleor --runs 3

``--resolution-only`` measures 4 alone (the warm server, one budgeted search per query), for a
quick look at resolution quality.

``--targets`` measures what a long-lived cq gives by default (no wait): per query one warm-up
search, whose missing answers go to the background, and the background batch awaited; then
the share of shown callsites of root-defined names resolved, and the search with the stage
on against ``--no-semantic`` (interleaved medians of wall and of the process's CPU time).

    python -m bench.semantic_cost --targets --runs 5
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec

from bench._common import cq_command, median, rg_binary, stdlib_dir, time_command
from cq.model import Scope, SearchRequest
from cq.parse import Corpus
from cq.pipeline import run_search
from cq.semantic import keep_servers_warm
from cq.semantic.answers import identifier_at
from cq.semantic.pool import pool
from cq.semantic.server import pyrefly_binary
from cq.semantic.syntax_resolve import SyntaxResolver
from cq.semantic.unique_name import UniqueNames

STDLIB_QUERIES = ("register", "urlopen", "getLogger", "deepcopy", "literal_eval", "namedtuple")
TREE_QUERIES = {
    "monai": ("LoadImage", "ensure_tuple", "convert_to_tensor", "look_up_option", "Compose"),
    # saleor (4,338 .py files): root-defined functions and methods with many callsites
    "saleor": (
        "fetch_checkout_info",
        "get_graphql_content",
        "to_global_id_or_none",
        "store_value_in_metadata",
        "call_event",
        "post_graphql",
    ),
}
STDLIB_EXCLUDE = ("site-packages/**",)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--no-stdlib", action="store_true", help="only the --tree trees")
    parser.add_argument("-q", "--query", action="append", help="TREE:QUERY (repeatable)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--resolution-only", action="store_true", help="only item 4")
    parser.add_argument("--targets", action="store_true", help="see above")
    parser.add_argument(
        "--unique-precision",
        type=int,
        metavar="N",
        help="only the unique-name rule's precision, on N method names the root defines once",
    )
    args = parser.parse_args()
    keep_servers_warm()  # the in-process searches are cq mcp's: the server indexes, stays warm
    trees = [] if args.no_stdlib else [("stdlib", stdlib_dir(), STDLIB_EXCLUDE)]
    trees += [(n, d, ()) for n, d in (t.split("=", 1) for t in args.tree)]
    chosen: dict[str, list[str]] = {}
    for item in args.query or []:
        name, _, query = item.partition(":")
        chosen.setdefault(name, []).append(query)
    for name, root, exclude in trees:
        queries = chosen.get(name) or list(TREE_QUERIES.get(name, STDLIB_QUERIES))
        print(f"\n# {name}: {root} ({count_py(root, exclude)} .py files); {load()}")
        if args.unique_precision:
            bench_unique_precision(root, exclude, args.unique_precision)
        elif args.targets:
            bench_targets(root, exclude, queries, args.runs)
        elif args.resolution_only:
            bench_resolution(root, exclude, queries)
        else:
            bench_tree(root, exclude, queries, args.runs)
        print(f"end of {name}: {load()}")


def load() -> str:
    return "load average " + " ".join(os.getloadavg().__repr__().strip("()").split(", "))


def warm(request: SearchRequest, root: str):  # type: ignore[no-untyped-def]
    """The server started, the tree indexed and the query answered once in full (as in mcp),
    with cq's cache filled; the answer cache off from here on (Pyrefly answers every time)."""
    os.environ["CQ_SEMANTIC_CACHE"] = "0"
    run_search(msgspec.structs.replace(request, semantic=False))
    run_search(request)
    pool().running(root).wait_indexed(time.monotonic() + 300)  # type: ignore[union-attr]
    with unbudgeted():
        return run_search(request)


def bench_resolution(root: str, exclude: tuple[str, ...], queries: list[str]) -> None:
    """Resolution of the budgeted warm search, and of the unbudgeted one before it (every
    answer in: what the stage resolves when time is not the limit)."""
    totals, full = Totals(), Totals()
    print(f"wait {os.environ.get('CQ_SEMANTIC_WAIT_MS', '0')} ms")
    print("query | statuses | resolved pyrefly | combined | misses | unbudgeted: same")
    for query in queries:
        request = SearchRequest(query=query, root=root, exclude=exclude)
        unbudgeted_result = warm(request, root)
        on = run_search(request)
        got = resolution(on, query, root, exclude)
        totals.add(got)
        all_in = resolution(unbudgeted_result, query, root, exclude)
        full.add(all_in)
        statuses = dict(on.summary.telemetry.semantic or {})
        print(
            f"{query} | {statuses} | {got.pyrefly}/{got.callsites}"
            f" | {got.resolved}/{got.callsites} ({got.unique} by unique name)"
            f" | {got.causes or ''} | {all_in.pyrefly}/{all_in.callsites}"
            f" {all_in.resolved}/{all_in.callsites} {all_in.causes or ''}"
        )
    totals.report()
    print("unbudgeted:")
    full.report()
    pool().stop_all()


def bench_targets(root: str, exclude: tuple[str, ...], queries: list[str], runs: int) -> None:
    """Resolution after one warm-up search, and the stage's cost, as a long-lived cq runs them
    with the defaults (answers from the cache, the missing asked in the background)."""
    from cq.semantic.later import later

    totals = Totals()
    sums = {"on": 0.0, "off": 0.0, "on_cpu": 0.0, "off_cpu": 0.0}
    print("query | pending after warm-up -> after background | on/off ms | on/off CPU ms")
    for query in queries:
        request = SearchRequest(query=query, root=root, exclude=exclude)
        off_request = msgspec.structs.replace(request, semantic=False)
        run_search(off_request)  # cq's own caches warm
        first = run_search(request)  # the warm-up search
        later().idle(600)
        on, off, on_cpu, off_cpu = [], [], [], []
        for _ in range(runs):
            for request_, walls, cpus in ((request, on, on_cpu), (off_request, off, off_cpu)):
                cpu = time.process_time()
                result, ms = timed(request_)
                walls.append(ms)
                cpus.append((time.process_time() - cpu) * 1000)
                if request_ is request:
                    shown = result
        got = resolution(shown, query, root, exclude)
        totals.add(got)
        for key, values in (("on", on), ("off", off), ("on_cpu", on_cpu), ("off_cpu", off_cpu)):
            sums[key] += median(values)
        pending = (first.summary.semantic, shown.summary.semantic)
        print(
            f"{query} | {pending[0].pending if pending[0] else '-'} ->"
            f" {pending[1].pending if pending[1] else '-'}"
            f" | {median(on):.0f}/{median(off):.0f} | {median(on_cpu):.0f}/{median(off_cpu):.0f}"
            f" | {got.resolved}/{got.callsites} resolved {got.causes or ''}"
        )
    totals.report()
    print(
        f"stage on / off, sum of medians: wall {sums['on'] / sums['off']:.2f}x,"
        f" CPU {sums['on_cpu'] / sums['off_cpu']:.2f}x"
    )
    pool().stop_all()


def bench_unique_precision(root: str, exclude: tuple[str, ...], count: int) -> None:
    """The unique-name rule where Pyrefly knows the answer: N method names the root defines
    exactly once (every k-th of them, sorted), each searched with every hit shown and every
    answer in (warm server, budget lifted); each attribute callsite Pyrefly resolved is
    compared with what the rule would name, whatever its receiver."""
    argv = [rg_binary(), "--no-config", "-o", "-N", "--no-filename", "-t", "py"]
    argv += ["-r", "$1", r"^\s+(?:async\s+)?def\s+([a-z]\w+)\s*\(\s*self\b", "."]
    for glob in exclude:
        argv += ["--glob", f"!{glob}"]
    listed = subprocess.run(argv, capture_output=True, check=False, cwd=root).stdout.decode()
    counts: dict[str, int] = {}
    for name in listed.split():
        counts[name] = counts.get(name, 0) + 1
    once = sorted(n for n, c in counts.items() if c == 1 and not n.startswith("test"))
    step = max(1, len(once) // count)
    names = once[::step][:count]
    print(f"{len(once)} method names defined once; sampled {len(names)} (every {step}th)")
    totals: dict[str, int] = {}
    with unbudgeted():
        os.environ["CQ_SEMANTIC_CACHE"] = "0"
        for name in names:
            request = SearchRequest(query=name, root=root, exclude=exclude, limit=0)
            result = run_search(request)
            got = unique_name_check(result, root, exclude)
            for key, value in got.items():
                totals[key] = totals.get(key, 0) + value
            if got.get("disagree") or got.get("outside_claimed"):
                print(f"  {name}: {got}")
    print(f"unique-name rule vs Pyrefly on {len(names)} names: {totals}")
    pool().stop_all()


class Totals:
    def __init__(self) -> None:
        self.resolved = self.pyrefly = self.callsites = self.bad = self.checked = 0
        self.parameters = self.unique = 0
        self.causes: dict[str, int] = {}
        self.rule: dict[str, int] = {}

    def add(self, got: Resolution) -> None:
        self.unique += got.unique
        for key in ("agree", "disagree", "abstain", "outside_claimed"):
            self.rule[key] = self.rule.get(key, 0) + getattr(got, key)
        self.resolved += got.resolved
        self.pyrefly += got.pyrefly
        self.callsites += got.callsites
        self.bad += got.bad
        self.checked += got.checked
        self.parameters += got.parameters
        for cause, count in got.causes.items():
            self.causes[cause] = self.causes.get(cause, 0) + count

    def report(self) -> None:
        total = self.callsites
        for label, resolved in (("Pyrefly alone", self.pyrefly), ("combined", self.resolved)):
            rate = f"{100 * resolved / total:.1f}%" if total else "n/a"
            print(f"callsites of root-defined names resolved, {label}: {resolved}/{total} = {rate}")
        print(f"  misses (combined) {self.causes}; by unique name: {self.unique}")
        print(
            "unique-name rule on the attribute callsites Pyrefly resolved: agrees"
            f" {self.rule.get('agree', 0)}, differs {self.rule.get('disagree', 0)}, abstains"
            f" {self.rule.get('abstain', 0)}; names a root method where Pyrefly resolved"
            f" outside the root: {self.rule.get('outside_claimed', 0)}"
        )
        print(
            f"resolved definitions not on a `definition` line: {self.bad}/{self.checked}"
            f" (parameters, which cq labels reference/assignment: {self.parameters})"
        )


def bench_tree(root: str, exclude: tuple[str, ...], queries: list[str], runs: int) -> None:
    totals = Totals()
    print(f"searches wait for every answer; ms are medians of {runs}; one-shot: wall/CPU s")
    print(
        "query | statuses (warm server) | warm server on/off ms | stage ms | warm cached"
        " on/off ms | rg ms | one-shot fresh on vs off | one-shot cached on vs off"
        " | resolved | identical"
    )
    for query in queries:
        request = SearchRequest(query=query, root=root, exclude=exclude)
        off_request = msgspec.structs.replace(request, semantic=False)
        warm(request, root)
        server_on, server_off, stage, fresh_outputs = [], [], [], set()
        for _ in range(runs):
            with unbudgeted():  # the answer cache off: each search waits for Pyrefly's answers
                on, ms = timed(request)
            server_on.append(ms)
            stage.append(on.run.timings_ms.get("semantic", 0.0))
            fresh_outputs.add(stable_json(on))
            server_off.append(timed(off_request)[1])
        os.environ["CQ_SEMANTIC_CACHE"] = "1"
        with unbudgeted():
            run_search(request)  # fills the answer cache
        cached_on, cached_off, cached_outputs = [], [], set()
        for _ in range(runs):
            again, ms = timed(request)
            cached_on.append(ms)
            cached_outputs.add(stable_json(again))
            cached_off.append(timed(off_request)[1])
        rg = [rg_ms(query, root, exclude) for _ in range(runs)]
        shots = max(2, runs // 2)
        fill = {"CQ_SEMANTIC_WAIT_MS": str(FILL_BUDGET_MS)}
        fresh, off = one_shots(query, root, exclude, shots, {"CQ_SEMANTIC_CACHE": "0", **fill})
        one_shots(query, root, exclude, 1, fill)
        shot, shot_off = one_shots(query, root, exclude, shots, {})
        got = resolution(on, query, root, exclude)
        totals.add(got)
        statuses = on.summary.telemetry.semantic or {}
        print(
            f"{query} | {dict(statuses)}"
            f" | {median(server_on):.0f}/{median(server_off):.0f}"
            f" (+{median(server_on) - median(server_off):.0f}) | {median(stage):.0f}"
            f" | {median(cached_on):.0f}/{median(cached_off):.0f}"
            f" (+{median(cached_on) - median(cached_off):.0f}) | {median(rg):.0f}"
            f" | {fresh[0]:.2f}/{fresh[1]:.2f} vs {off[0]:.2f}/{off[1]:.2f}"
            f" (+{fresh[0] - off[0]:.2f} s) | {shot[0]:.2f}/{shot[1]:.2f}"
            f" vs {shot_off[0]:.2f}/{shot_off[1]:.2f} (+{shot[0] - shot_off[0]:.2f} s)"
            f" | {got.pyrefly}/{got.callsites} pyrefly, {got.resolved}/{got.callsites} combined"
            f" {got.causes or ''}"
            f" | cached {len(cached_outputs) == 1}, uncached {len(fresh_outputs) == 1}"
        )
    totals.report()
    server = pool().running(root)
    if server is not None and server.process is not None:
        print(
            f"pyrefly peak RSS: {peak_rss_mb(server.process.pid):.0f} MB"
            f" ({len(server._versions)} files open)"
        )
    os.environ["CQ_SEMANTIC_CACHE"] = "0"
    for how in ("killed", "stopped"):
        print(f"{how} server: {failure(queries[0], root, exclude, how)}")
    pool().stop_all()


FILL_BUDGET_MS = 300_000  # warming and cache-filling runs wait for every answer


@contextlib.contextmanager
def unbudgeted() -> Iterator[None]:
    """Searches wait for every answer (``CQ_SEMANTIC_WAIT_MS``), as the user may ask."""
    before = os.environ.get("CQ_SEMANTIC_WAIT_MS")
    os.environ["CQ_SEMANTIC_WAIT_MS"] = str(FILL_BUDGET_MS)
    try:
        yield
    finally:
        if before is None:
            del os.environ["CQ_SEMANTIC_WAIT_MS"]
        else:
            os.environ["CQ_SEMANTIC_WAIT_MS"] = before


def timed(request: SearchRequest):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    result = run_search(request)
    return result, (time.perf_counter() - t) * 1000


def stable_json(result) -> bytes:  # type: ignore[no-untyped-def]
    """The result without its run facts (timings, counters)."""
    return msgspec.json.encode(msgspec.structs.replace(result, run=None))


def rg_ms(query: str, root: str, exclude: tuple[str, ...]) -> float:
    argv = [rg_binary(), "--json", "-w", query, "."]
    for glob in exclude:
        argv += ["--glob", f"!{glob}"]
    return time_command(argv, cwd=root).seconds * 1000


def one_shots(
    query: str, root: str, exclude: tuple[str, ...], runs: int, env: dict[str, str]
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Median (wall, CPU) seconds of ``cq search`` in a new process with the stage on and with
    ``--no-semantic``, interleaved (the load of a shared machine drifts)."""
    argv = [*cq_command(), "search", query, "--root", root, "--format", "json"]
    for glob in exclude:
        argv += ["--exclude", glob]
    on, off = [], []
    for _ in range(runs):
        on.append(time_command(argv, env=env))
        off.append(time_command([*argv, "--no-semantic"], env=env))
    return _walls(on), _walls(off)


def _walls(timings: list) -> tuple[float, float]:  # type: ignore[type-arg]
    return median([t.seconds for t in timings]), median([t.cpu_seconds for t in timings])


class Resolution(msgspec.Struct, kw_only=True):
    """Shown callsites of a name the root defines (``callsites``) that got a resolved
    definition (``resolved``; ``pyrefly``: from Pyrefly itself), and why the others did not;
    resolved definitions in the root checked, those on a line cq does not classify as
    ``definition`` (``bad``), and those that are function parameters."""

    resolved: int = 0
    pyrefly: int = 0
    unique: int = 0
    callsites: int = 0
    bad: int = 0
    checked: int = 0
    parameters: int = 0
    causes: dict[str, int] = {}
    # the unique-name rule on callsites Pyrefly resolved to a root definition: same answer,
    # another answer (a miss of precision), no answer; and Pyrefly's answers outside the root
    # where the rule would have named a root method (also wrong)
    agree: int = 0
    disagree: int = 0
    abstain: int = 0
    outside_claimed: int = 0


def resolution(result, query: str, root: str, exclude: tuple[str, ...]) -> Resolution:  # type: ignore[no-untyped-def]
    every = _all_findings(query, root, exclude)
    defined = any(f.category == "definition" and f.text == query for f in every.values())
    resolved = total = bad = checked = params = pyrefly = unique = 0
    causes: dict[str, int] = {}
    rule = unique_name_check(result, root, exclude)
    for f in result.findings:
        semantic = f.enrichment.semantic if f.enrichment else None
        target = semantic.definition if semantic else None
        if f.category == "callsite" and f.text.split(".")[-1] == query and defined:
            total += 1
            resolved += target is not None
            pyrefly += target is not None and target.via == "pyrefly"
            unique += target is not None and target.via == "unique-name"
            if target is None:
                cause = miss_cause(semantic)
                causes[cause] = causes.get(cause, 0) + 1
        if target is not None and target.file is not None and f.category == "callsite":
            line = (Path(root) / target.file).read_text(errors="replace").split("\n")
            name = identifier_at(line[target.line - 1], target.col) or query
            here = _all_findings(name, root, exclude).get((target.file, target.line))
            checked += 1
            if here is None or here.category != "definition":
                if is_parameter(root, target.file, target.line, target.col):
                    params += 1  # a binding, not a def: cq labels it reference/assignment
                else:
                    bad += 1
    return Resolution(
        resolved=resolved,
        pyrefly=pyrefly,
        unique=unique,
        callsites=total,
        bad=bad,
        checked=checked,
        parameters=params,
        causes=causes,
        **rule,
    )


def unique_name_check(result, root: str, exclude: tuple[str, ...]) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """The unique-name rule (the root's one method ``m`` for ``x.m()``, nothing outside the
    root defining ``m``) applied to every shown attribute callsite Pyrefly resolved, whatever
    the receiver: its precision where Pyrefly knows the answer."""
    names = UniqueNames(Scope(root=root, exclude=exclude), os.environ.get("VIRTUAL_ENV"))
    corpus = Corpus(Path(root))
    resolver = SyntaxResolver(root, lambda rel: corpus.source(rel, "python"))
    out = {"agree": 0, "disagree": 0, "abstain": 0, "outside_claimed": 0}
    for f in result.findings:
        semantic = f.enrichment.semantic if f.enrichment else None
        target = semantic.definition if semantic else None
        before = f.line_text[: f.col].rstrip()
        if f.category != "callsite" or not before.endswith(".") or target is None:
            continue
        if target.via != "pyrefly":
            continue
        name = f.text.rsplit(".", 1)[-1]
        guess = names.candidate(name, resolver.parsed)
        if guess is not None and names.defined_outside(name):
            guess = None
        if target.file is None:
            out["outside_claimed"] += guess is not None
        elif guess is None:
            out["abstain"] += 1
        elif (guess.file, guess.line) == (target.file, target.line):
            out["agree"] += 1
        else:
            out["disagree"] += 1
    return out


def is_parameter(root: str, file: str, line: int, col: int) -> bool:
    """Whether (line, col) names a function parameter (``def f(x, deepcopy=deepcopy)``: a call
    of ``deepcopy`` in the body resolves there, and cq labels the name a reference)."""
    tree = ast.parse((Path(root) / file).read_bytes())
    return any(
        isinstance(node, ast.arg) and node.lineno == line and node.col_offset == col
        for node in ast.walk(tree)
    )


def miss_cause(semantic) -> str:  # type: ignore[no-untyped-def]
    """``unknown`` when Pyrefly typed the call ``Unknown`` (whatever became of the other
    questions), ``cut`` when its answer did not come, ``none`` when typed yet unresolved."""
    if semantic is not None and semantic.type is not None and "Unknown" in semantic.type:
        return "unknown"
    if semantic is None or semantic.status != "applied":
        return "cut"
    if semantic.type is None:
        return "unknown"
    return "none"


_FINDINGS: dict[tuple[str, str], dict] = {}


def _all_findings(name: str, root: str, exclude: tuple[str, ...]) -> dict:
    if (name, root) not in _FINDINGS:
        request = SearchRequest(query=name, root=root, exclude=exclude, limit=0, semantic=False)
        found = run_search(msgspec.structs.replace(request, mode="identifier"))
        _FINDINGS[(name, root)] = {(f.file, f.line): f for f in found.findings}
    return _FINDINGS[(name, root)]


def failure(query: str, root: str, exclude: tuple[str, ...], how: str) -> str:
    """Start a fresh server, kill or stop it once it is up, and time the search."""
    pool().stop_all()
    request = SearchRequest(query=query, root=root, exclude=exclude)
    server = pool().get(root, pyrefly_binary())
    assert server is not None
    server.initialized.wait(30)
    pid = server.process.pid  # type: ignore[union-attr]
    os.kill(pid, signal.SIGKILL if how == "killed" else signal.SIGSTOP)
    t = time.perf_counter()
    result = run_search(request)
    wall = (time.perf_counter() - t) * 1000
    if how == "stopped":
        os.kill(pid, signal.SIGCONT)
    pool().stop_all()
    stage = result.run.timings_ms.get("semantic", 0.0)
    statuses = result.summary.telemetry.semantic or {}
    return f"statuses {dict(statuses)}, stage {stage:.0f} ms (no wait), search {wall:.0f} ms"


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def count_py(root: str, exclude: tuple[str, ...]) -> int:
    argv = [rg_binary(), "--files", "-t", "py", "."]
    for glob in exclude:
        argv += ["--glob", f"!{glob}"]
    done = subprocess.run(argv, capture_output=True, check=False, cwd=root)
    return len(done.stdout.splitlines())


if __name__ == "__main__":
    main()
