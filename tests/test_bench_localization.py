"""The localization benchmarks: trees from a real bare git mirror, real cq and tantivy runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_tree

from bench import _loc

REPO = Path(__file__).resolve().parent.parent

UPLOAD = '''"""Upload handling."""


class FileUploadHandler:
    def save_file(self, name, mode):
        return open(name, "wb")
'''
SETTINGS = "FILE_UPLOAD_PERMISSIONS = None\nDEBUG = False\n"
LIB_RS = "pub struct Parser;\n\nimpl Parser {\n    pub fn parse_flag(&self) -> bool { true }\n}\n"


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return proc.stdout.strip()


@pytest.fixture(scope="module")
def bench_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A bare mirror with two commits, three issues on it, their trees materialised."""
    base = tmp_path_factory.mktemp("bench")
    work = write_tree(
        base / "work",
        {
            "pkg/__init__.py": "",
            "pkg/upload.py": UPLOAD,
            "pkg/settings.py": SETTINGS,
            "pkg/views.py": "from pkg.settings import DEBUG\n\n\ndef index():\n    return DEBUG\n",
            "README.md": "widgets\n",
            "Cargo.toml": '[package]\nname = "widgets"\n',
            "src/lib.rs": LIB_RS,
        },
    )
    _git(work, "init", "-q")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    first = _git(work, "rev-parse", "HEAD")
    (work / "pkg/settings.py").write_text(SETTINGS + "LANGUAGE = 'en'\n")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two")
    second = _git(work, "rev-parse", "HEAD")
    mirrors = base / "mirrors"
    _git(base, "clone", "-q", "--bare", str(work), str(mirrors / "acme+widgets" / "repo"))

    def row(iid: str, commit: str, text: str, gold: list[str], **extra) -> dict:
        return {
            "instance_id": iid,
            "repo": "acme/widgets",
            "base_commit": commit,
            "problem_statement": text,
            "gold_code_files": gold,
            "gold_functions": [f"{gold[0]}::FileUploadHandler.save_file"],
            **extra,
        }

    rows = [
        row(
            "acme__widgets-1",
            first,
            "FileUploadHandler.save_file ignores permissions\nUploaded files get mode 0600.",
            ["pkg/upload.py", "pkg/created_by_fix.py"],
        ),
        row(
            "acme__widgets-2",
            second,
            "Wrong default in settings\nFILE_UPLOAD_PERMISSIONS should be 0o644.",
            ["pkg/settings.py"],
            inline_code_maybe_dropped=True,
        ),
    ]
    rust = row("acme__widgets-3", second, "parse_flag is wrong\nParser fails.", ["src/lib.rs"])
    data = base / "issues.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rust_data = base / "rust.jsonl"
    rust_data.write_text(json.dumps(rust) + "\n")
    trees = base / "trees"
    argv = [sys.executable, "-m", "bench.prepare_eval_trees", "--data", data, "--data", rust_data]
    prep = subprocess.run(
        [*argv, "--mirrors", mirrors, "--out", trees],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert prep.returncode == 0, prep.stderr
    return {"data": data, "trees": trees, "base": base}


def test_trees_hold_project_files_of_the_issue_language_without_history(bench_env) -> None:
    trees = bench_env["trees"]
    py_files = {p.relative_to(trees / "acme__widgets-1").as_posix() for p in _files(trees, 1)}
    assert py_files == {"pkg/__init__.py", "pkg/upload.py", "pkg/settings.py", "pkg/views.py"} | {
        "Cargo.toml"
    }
    rs_files = {p.relative_to(trees / "acme__widgets-3").as_posix() for p in _files(trees, 3)}
    assert rs_files == {"Cargo.toml", "src/lib.rs"}
    assert not any(p.name == ".git" for p in trees.rglob(".git"))
    # each tree is its own base commit: the second one has the changed settings
    assert "LANGUAGE" not in (trees / "acme__widgets-1/pkg/settings.py").read_text()
    assert "LANGUAGE" in (trees / "acme__widgets-2/pkg/settings.py").read_text()


def test_identical_files_of_two_trees_share_one_inode(bench_env) -> None:
    trees = bench_env["trees"]
    one, two = trees / "acme__widgets-1", trees / "acme__widgets-2"
    assert (one / "pkg/upload.py").stat().st_ino == (two / "pkg/upload.py").stat().st_ino
    assert (one / "pkg/settings.py").stat().st_ino != (two / "pkg/settings.py").stat().st_ino


def _files(trees: Path, n: int) -> list[Path]:
    return [p for p in (trees / f"acme__widgets-{n}").rglob("*") if p.is_file()]


def _run(script: str, *args: object) -> subprocess.CompletedProcess[str]:
    module = f"bench.{script.removesuffix('.py')}"
    proc = subprocess.run(
        [sys.executable, "-m", module, *map(str, args)], capture_output=True, text=True, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def cq_json(bench_env) -> Path:
    out = bench_env["base"] / "cq.json"
    args = ["--data", bench_env["data"], "--trees", bench_env["trees"], "--modes", "rewrite"]
    proc = _run("localization.py", *args, "--text", "full,title", "--jobs", "2", "--json-out", out)
    assert "| **pooled** | 2 |" in proc.stdout
    assert "| pooled without inline_code_maybe_dropped | 1 |" in proc.stdout
    return out


@pytest.fixture(scope="module")
def bm25_json(bench_env) -> Path:
    out = bench_env["base"] / "bm25.json"
    args = ["--data", bench_env["data"], "--trees", bench_env["trees"], "--text", "full,title"]
    _run("bm25_baseline.py", *args, "--json-out", out)
    return out


def test_cq_run_records_ranks_per_issue_and_text(cq_json: Path) -> None:
    runs = {r.key: r for r in _loc.read(str(cq_json))}
    assert set(runs) == {"rewrite/full", "rewrite/title"}
    full = {i.id: i for i in runs["rewrite/full"].instances}
    # the gold file the fix created is not in the base tree, so it is not part of the gold set
    assert full["acme__widgets-1"].gold == ["pkg/upload.py"]
    assert full["acme__widgets-1"].ranks == [1]
    assert full["acme__widgets-1"].fn is True
    assert full["acme__widgets-2"].flagged


def test_extra_args_reach_cq(bench_env) -> None:
    args = ["--data", bench_env["data"], "--trees", bench_env["trees"], "--modes", "rewrite"]
    out = bench_env["base"] / "bad.json"
    _run("localization.py", *args, "--extra-args=--no-such-flag", "--json-out", out)
    (run,) = _loc.read(str(out))
    assert all(i.note == "error 2" and i.ranks == [None] for i in run.instances)
    assert "--no-such-flag" in run.options


def test_bm25_ranks_by_subwords_of_identifiers(bm25_json: Path) -> None:
    runs = {r.key: r for r in _loc.read(str(bm25_json))}
    full = {i.id: i for i in runs["bm25/full"].instances}
    assert full["acme__widgets-1"].ranks == [1]  # FileUploadHandler <- "file upload handler"
    title = {i.id: i for i in runs["bm25/title"].instances}
    assert title["acme__widgets-2"].files[0] == "pkg/settings.py"  # only its path says "settings"
    assert all(i.fn is None for i in full.values())  # whole files only


def test_rrf_fuses_two_runs_issue_by_issue(cq_json: Path, bm25_json: Path, tmp_path) -> None:
    out = tmp_path / "rrf.json.gz"
    proc = _run("loc_compare.py", "fuse", cq_json, bm25_json, "--json-out", out)
    assert "oracle, either top 5 has every gold file" in proc.stdout
    fused = {r.text: r for r in _loc.read(str(out))}
    assert set(fused) == {"full", "title"}
    cq = {i.id: i for r in _loc.read(str(cq_json)) if r.text == "full" for i in r.instances}
    bm = {i.id: i for r in _loc.read(str(bm25_json)) if r.text == "full" for i in r.instances}
    for inst in fused["full"].instances:
        # a file first in either order can only be beaten by one both orders rank high
        assert inst.files[0] in (cq[inst.id].files[:3] + bm[inst.id].files[:3])
        union = set(cq[inst.id].files) | set(bm[inst.id].files)
        assert set(inst.files) <= union
        kept = max(len(cq[inst.id].files), len(bm[inst.id].files))
        assert len(inst.files) == min(len(union), kept)  # a file found by either one is kept
    diff = _run("loc_compare.py", "diff", cq_json, out).stdout
    assert "2 common issues" in diff and "Acc@5:" in diff
    rows = _run("loc_compare.py", "summary", cq_json, bm25_json, out).stdout.splitlines()
    assert [r.split(" | ")[0] for r in rows[2:]].count("| rrf rrf(k=5)/full") == 2
    assert sum("without inline_code_maybe_dropped | 1 |" in r for r in rows) == 6


def test_title_is_the_first_non_blank_line() -> None:
    assert _loc.title("\n  Crash in parse_flag  \nbody text") == "Crash in parse_flag"
    long = "Word " * 60 + ". Then more"
    assert _loc.title("A first sentence. " + long).startswith("A first sentence.")
    assert len(_loc.title(long)) <= _loc.TITLE_MAX


def test_sample_is_fixed_proportional_and_nested() -> None:
    rows = [{"instance_id": f"a-{i}", "repo": "a"} for i in range(30)]
    rows += [{"instance_id": f"b-{i}", "repo": "b"} for i in range(10)]
    small, large = _loc.sample(rows, 8), _loc.sample(rows, 20)
    assert small == _loc.sample(list(rows), 8)
    assert [r["repo"] for r in small].count("a") == 6
    assert {r["instance_id"] for r in small} <= {r["instance_id"] for r in large}


def test_rust_function_hit_reads_impl_headers_and_modules() -> None:
    gold = ["src/a.rs::DateTime::decode"]
    assert _loc.function_hit(["src/a.rs::serde::impl<'de> Decode for DateTime<Tz>::decode"], gold)
    assert not _loc.function_hit(["src/a.rs::impl Date::decode"], gold)
    assert _loc.function_hit(["src/a.rs::tests::test_x"], ["src/a.rs::test_x"])


def test_a_query_past_its_timeout_counts_as_not_found(bench_env) -> None:
    args = ["--data", bench_env["data"], "--trees", bench_env["trees"], "--modes", "rewrite"]
    out = bench_env["base"] / "slow.json"
    proc = _run("localization.py", *args, "--timeout", "0.01", "--json-out", out)
    (run,) = _loc.read(str(out))
    assert all(i.note == "timeout" and i.ranks == [None] for i in run.instances)
    assert "| **pooled** | 2 | 0.0 |" in proc.stdout
    summary = _run("loc_compare.py", "summary", out).stdout.splitlines()
    assert summary[0].endswith("| no file |") and summary[2].endswith("| 2 |")
