"""Shared by the localization benchmarks: issue rows, queries, samples, metrics, result files.

``localization.py`` (cq), ``bm25_baseline.py`` (plain BM25) and ``loc_compare.py`` (diffs and
rank fusion) all score file orders the same way and write the same result file, so any two
runs can be compared issue by issue. The protocol is ``../shared/eval/README.md``'s, with one
decision of ours: a gold code file that does not exist at the base commit (the fix created it;
7 of the 962 gold files of the three tuning sets) is left out of the gold set, since no
retriever can rank a file that is not there.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec

KS = (1, 3, 5, 10)
FLAG = "inline_code_maybe_dropped"  # python_tuning rows whose text lost inline code spans
TITLE_MAX = 200


class Instance(msgspec.Struct, frozen=True):
    """One issue's outcome: gold files, their 1-based ranks (None = not ranked), top files."""

    id: str
    repo: str
    gold: list[str]
    ranks: list[int | None]
    files: list[str]  # the first ``--keep-files`` files in rank order (for diffs and fusion)
    scopes: list[str] = []  # the first 5 distinct ``path::scope`` (cq only)
    fn: bool | None = None  # function Hit@5; None when the issue has no gold function
    answer: str = ""  # the Answer's function, ``path::Scope.name`` ("": no Answer)
    ans: bool | None = None  # the Answer is an edited function; None: no gold function
    flagged: bool = False
    seconds: float = 0.0
    note: str = ""  # e.g. which rewriter cq used


class Run(msgspec.Struct, frozen=True):
    """One tool over one set with one kind of query text."""

    tool: str  # cq | bm25 | rrf
    mode: str  # rewrite | no-rewrite | bm25 | rrf(k=5)
    text: str  # full | title
    data: str
    options: list[str]
    instances: list[Instance]

    @property
    def key(self) -> str:
        return f"{self.mode}/{self.text}"


class RunFile(msgspec.Struct):
    runs: list[Run]


def load_rows(path: str) -> list[dict]:
    return [msgspec.json.decode(line) for line in Path(path).read_text().splitlines() if line]


def title(statement: str) -> str:
    """The issue title: the first non-blank line (every tuning set stores "title\\nbody").

    A first line over 200 characters (none in the tuning sets: their longest title has 173) is
    cut after its first sentence, or at the last word boundary within 200 characters.
    """
    line = next((ln.strip() for ln in statement.splitlines() if ln.strip()), "")
    if len(line) > TITLE_MAX:
        match = re.search(r"[.?!](\s|$)", line)
        if match and match.end() <= TITLE_MAX:
            return line[: match.end()].strip()
        line = line[: TITLE_MAX + 1].rsplit(" ", 1)[0][:TITLE_MAX]
    return line


def query_text(row: dict, text: str) -> str:
    return title(row["problem_statement"]) if text == "title" else row["problem_statement"]


def sample(rows: list[dict], n: int | None) -> list[dict]:
    """A fixed subsample of ``n`` rows, spread over repositories in proportion to their size.

    Within a repository rows are taken in the order of sha256(instance_id), so a larger sample
    contains every smaller one's rows of that repository; the result keeps the file's order.
    """
    if not n or n >= len(rows):
        return rows
    by_repo: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_repo[row["repo"]].append(row)
    quota = {repo: n * len(group) / len(rows) for repo, group in by_repo.items()}
    take = {repo: int(q) for repo, q in quota.items()}
    rest = sorted(quota, key=lambda r: (take[r] - quota[r], r))
    for repo in rest[: n - sum(take.values())]:
        take[repo] += 1
    chosen: set[str] = set()
    for repo, group in by_repo.items():
        ordered = sorted(group, key=lambda r: hashlib.sha256(r["instance_id"].encode()).digest())
        chosen.update(r["instance_id"] for r in ordered[: take[repo]])
    return [r for r in rows if r["instance_id"] in chosen]


def gold_files(row: dict, tree: Path) -> list[str]:
    """Gold code files that exist in the base tree (see the module docstring)."""
    return [g for g in row["gold_code_files"] if (tree / g).is_file()]


def ranks_of(gold: list[str], files: list[str]) -> list[int | None]:
    position = {f: i + 1 for i, f in enumerate(files)}
    return [position.get(g) for g in gold]


def function_hit(scopes: list[str], gold: list[str]) -> bool | None:
    """Any gold function among ``scopes`` (``path::scope``, cq's first 5 distinct scopes).

    Python: ``Class.method`` equal, or a scope nested in it. Rust: cq writes a scope as
    ``mod::impl Trait for Type::method``; the gold as ``Type::method`` (modules dropped), so
    the impl header becomes its self type and a match may drop leading modules.
    """
    if not gold:
        return None
    keys = [rust_scope(s) if ".rs::" in s else s for s in scopes]
    for key in keys:
        for g in gold:
            if key == g or key.startswith(g + ".") or key.startswith(g + "::"):
                return True
            path, _, inner = g.partition(".rs::")
            if inner and key.startswith(path + ".rs::") and key.endswith("::" + inner):
                return True
    return False


def rust_scope(scope: str) -> str:
    """``src/a.rs::m::impl<T> Tr for Ty<T>::f`` -> ``src/a.rs::m::Ty::f``."""
    path, _, inner = scope.partition(".rs::")
    headers = list(re.finditer(r"(?:^|::)impl(?=[\s<])", inner))
    if headers:
        start = headers[-1].start() + (2 if inner[headers[-1].start()] == ":" else 0)
        tail = _strip_generics(inner[start + len("impl") :]).strip()
        if " for " in tail:
            tail = tail.rsplit(" for ", 1)[1].strip()
        inner = inner[:start] + tail
    return f"{path}.rs::{_strip_generics(inner)}"


def _strip_generics(text: str) -> str:
    out, depth = [], 0
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def answer_key(finding: dict) -> str:
    """``path::Scope.name`` (``::`` in Rust) of the definition finding a report answers with."""
    sep = "::" if finding["file"].endswith(".rs") else "."
    name = finding["text"].split(".")[-1].split("::")[-1]
    scope = finding.get("containing_scope") or ""
    if scope == name or scope.endswith(sep + name):
        scope = scope[: -len(name)].removesuffix(sep)  # a definition's scope is itself
    return f"{finding['file']}::{scope + sep if scope else ''}{name}"


def report_answer(data: dict) -> str:
    """The Answer of a ``cq search --format json`` report as ``path::Scope.name``: the
    finding ``summary.primary`` points at when it is a definition ("" otherwise: the report
    answers with no function)."""
    primary = data["summary"].get("primary")
    if primary is None or primary >= len(data["findings"]):
        return ""
    finding = data["findings"][primary]
    return answer_key(finding) if finding.get("category") == "definition" else ""


def instance(
    row: dict,
    gold: list[str],
    files: list[str],
    scopes: list[str] | None,
    keep: int,
    answer: str | None = None,
    **extra,
) -> Instance:
    """Score one issue; ``scopes`` None: the tool ranks files only (no function Hit@5);
    ``answer`` None: the tool gives no Answer (no "Answer is an edited function")."""
    gold_functions = row.get("gold_functions") or []
    return Instance(
        id=row["instance_id"],
        repo=row["repo"],
        gold=gold,
        ranks=ranks_of(gold, files),
        files=files[:keep],
        scopes=(scopes or [])[:5],
        fn=None if scopes is None else function_hit(scopes[:5], gold_functions),
        answer=answer or "",
        ans=None
        if answer is None or not gold_functions
        else function_hit([answer], gold_functions),
        flagged=bool(row.get(FLAG)),
        **extra,
    )


def acc(inst: Instance, k: int) -> bool:
    return bool(inst.gold) and all(r is not None and r <= k for r in inst.ranks)


def by_gold_count(insts: list[Instance], k: int = 5) -> str:
    """Acc@k of the issues fixed in one file, in two, in three or more: held-out sets differ
    in that mix (SWE-bench Lite keeps single-file fixes only), so a pooled figure alone does
    not carry over."""
    groups: dict[str, list[Instance]] = {"1": [], "2": [], "3+": []}
    for i in insts:
        if i.gold:
            groups[str(len(i.gold)) if len(i.gold) < 3 else "3+"].append(i)
    cells = [
        f"{n}: {_pct(sum(acc(i, k) for i in g), len(g))}% ({len(g)})"
        for n, g in groups.items()
        if g
    ]
    return f"Acc@{k} by gold files " + ", ".join(cells)


def hit(inst: Instance, k: int) -> bool:
    return any(r is not None and r <= k for r in inst.ranks)


def worst_rank(inst: Instance) -> float:
    """The k from which the issue counts for Acc@k (inf: some gold file not ranked)."""
    if not inst.ranks or any(r is None for r in inst.ranks):
        return float("inf")
    return float(max(r for r in inst.ranks if r is not None))


def _pct(num: int, den: int) -> str:
    return f"{100 * num / den:.1f}" if den else "-"


def metric_row(label: str, group: list[Instance], with_fn: bool, timed: bool) -> str:
    n = len(group)
    cells = [label, str(n)]
    cells += [_pct(sum(acc(i, k) for i in group), n) for k in KS]
    cells += [_pct(sum(hit(i, k) for i in group), n) for k in KS]
    if with_fn:
        scored = [i for i in group if i.fn is not None]
        score = _pct(sum(bool(i.fn) for i in scored), len(scored))
        cells.append(f"{score} ({len(scored)})" if scored else "-")
        answered = [i for i in group if i.ans is not None]
        cells.append(_pct(sum(bool(i.ans) for i in answered), len(answered)) if answered else "-")
    if timed:
        cells.append(f"{statistics.median(i.seconds for i in group):.2f}" if group else "-")
    return "| " + " | ".join(cells) + " |"


def table(run: Run) -> str:
    """Per-repository and pooled figures (percentages) as a markdown table."""
    with_fn = any(i.fn is not None for i in run.instances)
    timed = any(i.seconds for i in run.instances)
    head = ["repo", "n", *[f"Acc@{k}" for k in KS], *[f"Hit@{k}" for k in KS]]
    head += ["fn Hit@5 (n)", "Answer edited"] if with_fn else []
    head += ["median s"] if timed else []
    lines = [
        f"### {run.tool} {run.key}: {Path(run.data).name}, {len(run.instances)} issues",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    by_repo: dict[str, list[Instance]] = defaultdict(list)
    for inst in run.instances:
        by_repo[inst.repo].append(inst)
    if len(by_repo) > 1:
        for repo in sorted(by_repo, key=lambda r: (-len(by_repo[r]), r)):
            lines.append(metric_row(repo, by_repo[repo], with_fn, timed))
    lines.append(metric_row("**pooled**", run.instances, with_fn, timed))
    clean = [i for i in run.instances if not i.flagged]
    if len(clean) < len(run.instances):
        lines.append(metric_row(f"pooled without {FLAG}", clean, with_fn, timed))
    # SWE-bench Lite keeps only issues fixed in one file: its figures compare with this row
    single = [i for i in run.instances if len(i.gold) == 1]
    if 0 < len(single) < len(run.instances):
        lines.append(metric_row("pooled, fixed in one file", single, with_fn, timed))
        multi = [i for i in run.instances if len(i.gold) > 1]
        lines.append(metric_row("pooled, fixed in several files", multi, with_fn, timed))
    return "\n".join(lines)


def verbose_lines(run: Run) -> Iterable[str]:
    for i in run.instances:
        fn = {True: "fn-hit", False: "fn-miss", None: "fn-n/a"}[i.fn]
        ans = {True: "answer-hit", False: "answer-miss", None: "answer-n/a"}[i.ans]
        yield f"  {i.id:48} ranks {i.ranks} {fn} {ans} {i.seconds:.2f}s {i.note}"


def write(path: str, runs: list[Run]) -> None:
    """Compact JSON, gzipped when ``path`` ends in .gz (the committed results: 10x smaller)."""
    data = msgspec.json.encode(RunFile(runs)) + b"\n"
    Path(path).write_bytes(gzip.compress(data, mtime=0) if path.endswith(".gz") else data)


def read(path: str) -> list[Run]:
    data = Path(path).read_bytes()
    data = gzip.decompress(data) if path.endswith(".gz") else data
    return msgspec.json.decode(data, type=RunFile).runs


def run_all(items: list, work: Callable, jobs: int) -> list:
    """``work`` over ``items`` with ``jobs`` threads (each runs a subprocess); input order kept."""
    if jobs <= 1:
        return [work(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(work, items))
