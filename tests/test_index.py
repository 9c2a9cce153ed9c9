"""The repository index: built in cq's cache dir, kept current file by file, fused into
rewritten questions (files no pattern matched still surface), never used by identifier
searches. Real rg, real tantivy, real ``python -m cq`` subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cq.tools import find_rg
from tests.conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

# Lower-case settings: no name the rewriter's vocabulary holds (it maps the question's words
# onto upper-case constants), so no pattern finds this file and only the index can.
SETTINGS = '''"""Default settings of the app."""

# The numeric mode to set newly uploaded files to. The value should be a mode
# you'd pass directly to os.chmod.
file_upload_permissions = None
file_upload_max_memory_size = 2621440
'''
STORAGE = '''import os


class FileSystemStorage:
    """Store files on the local disk."""

    def save(self, name, content):
        with open(name, "wb") as handle:
            handle.write(content)
        return name

    def delete(self, name):
        os.remove(name)
'''
HANDLERS = """class TemporaryUploadHandler:
    def receive_chunk(self, chunk):
        return chunk
"""
QUESTION = (
    "Set default FILE_UPLOAD_PERMISSION to 0o644.\n"
    "Uploaded files get inconsistent permissions depending on their size."
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "repo",
        {
            "app/conf/global_settings.py": SETTINGS,
            "app/files/storage.py": STORAGE,
            "app/files/handlers.py": HANDLERS,
        },
    )


def search(repo: Path, *extra: str, query: str = QUESTION, env: dict | None = None):
    run = run_cq(
        "search", "-", "--root", str(repo), "--format", "json", *extra, stdin=query, env=env
    )
    assert run.returncode in (0, 1), run.stderr
    return run.json()


def section(data: dict, kind: str) -> dict | None:
    return next((s for s in data["sections"] if s["type"] == kind), None)


def relevant_files(data: dict) -> list[str]:
    hot = section(data, "hot_files")
    return [f["file"] for f in hot["files"]] if hot else []


def test_question_surfaces_a_file_no_pattern_matched(repo: Path) -> None:
    without = search(repo, "--no-index")
    assert "app/conf/global_settings.py" not in {f["file"] for f in without["findings"]}
    assert "index" not in without["summary"]["telemetry"]
    data = search(repo)
    assert relevant_files(data)[0] == "app/conf/global_settings.py"
    first = data["findings"][0]
    assert (first["file"], first["line"], first["tier"]) == (
        "app/conf/global_settings.py",
        5,
        "index",
    )
    assert first["line_text"] == "file_upload_permissions = None"
    telemetry = data["summary"]["telemetry"]["index"]
    assert telemetry["files"] == 3
    assert telemetry["documents"] == 3 + 3 + 2 + 3  # files, their modules, classes, methods
    assert data["run"]["counters"]["index.files_updated"] == 3
    assert {"index", "index.wait"} <= set(data["run"]["timings_ms"])  # updated beside rg
    again = search(repo)
    assert again["run"]["counters"].get("index.files_updated", 0) == 0  # unchanged tree
    assert again["summary"] == data["summary"] and again["findings"] == data["findings"]


def test_relevant_functions_name_path_and_qualified_name(repo: Path) -> None:
    data = search(repo, query="where are uploaded file chunks received by the upload handler?")
    functions = section(data, "functions")
    assert functions is not None
    names = [f["name"] for f in functions["functions"]]
    assert "app/files/handlers.py::TemporaryUploadHandler.receive_chunk" in names[:3]
    md = run_cq(
        "search",
        "-",
        "--root",
        str(repo),
        stdin="where are uploaded file chunks received by the upload handler?",
    )
    assert "## Relevant Functions" in md.stdout
    assert "`app/files/handlers.py::TemporaryUploadHandler.receive_chunk`" in md.stdout


def test_explain_shows_both_signals(repo: Path) -> None:
    md = run_cq("search", "-", "--root", str(repo), "--explain", stdin=QUESTION)
    assert md.returncode == 0, md.stderr
    assert "file rank rg none, index #1" in md.stdout
    assert "(index.python weights)" in md.stdout  # the tuned numbers behind the fused rank


TRACEBACK = """Deleting an upload that is already gone raises

```
Traceback (most recent call last):
  File "/srv/venv/lib/python3.11/site-packages/app/files/storage.py", line 14, in delete
FileNotFoundError: [Errno 2] No such file or directory: 'a.txt'
```
"""


def test_a_traceback_frame_names_its_file(repo: Path) -> None:
    data = search(repo, "--explain", query=TRACEBACK)
    assert relevant_files(data)[0] == "app/files/storage.py"
    first = data["findings"][0]
    assert first["file"] == "app/files/storage.py"
    assert first["explain"]["file_rank_named"] == 1
    md = run_cq("search", "-", "--root", str(repo), "--explain", stdin=TRACEBACK)
    assert "named #1" in md.stdout


def test_a_name_written_as_code_points_at_its_definition(repo: Path) -> None:
    query = "Chunks are lost on empty uploads\nWhen `TemporaryUploadHandler` gets one, no chunk."
    data = search(repo, "--explain", query=query)
    defining = [f for f in data["findings"] if f["file"] == "app/files/handlers.py"]
    assert defining and defining[0]["explain"]["file_rank_defined"] == 1
    assert relevant_files(data)[0] == "app/files/handlers.py"


def test_a_title_names_a_file_by_its_name(repo: Path) -> None:
    """The word "handlers" is the name of one file: the title points at it as a path would."""
    data = search(repo, "--explain", query="Uploaded chunks vanish in the handlers")
    named = [f for f in data["findings"] if f["file"] == "app/files/handlers.py"]
    assert named and named[0]["explain"]["file_rank_named"] == 1
    assert relevant_files(data)[0] == "app/files/handlers.py"


def test_identifier_search_never_touches_the_index(repo: Path, _isolated_cache: Path) -> None:
    data = search(repo, query="FileSystemStorage")
    assert data["findings"] and "index" not in data["summary"]["telemetry"]
    assert section(data, "functions") is None
    assert not (_isolated_cache / "index").exists()


def test_index_lives_in_the_cache_dir_never_in_the_tree(repo: Path, _isolated_cache: Path) -> None:
    before = sorted(p.relative_to(repo) for p in repo.rglob("*"))
    search(repo)
    assert sorted(p.relative_to(repo) for p in repo.rglob("*")) == before
    assert any((_isolated_cache / "index").rglob("manifest.msgpack"))


def test_an_older_schema_versions_index_of_the_root_is_removed(
    repo: Path, _isolated_cache: Path
) -> None:
    """An upgraded cq builds an index of its own schema and drops the root's old one, not
    another root's."""
    search(repo)
    (current,) = (_isolated_cache / "index").rglob("manifest.msgpack")
    key, version = current.parent.name, current.parent.parent.name
    old = _isolated_cache / "index" / "v0" / key
    other_root = _isolated_cache / "index" / "v0" / "another-root"
    for directory in (old, other_root):
        directory.mkdir(parents=True)
        (directory / "manifest.msgpack").write_bytes(b"\x80")
    run_cq("index", "--clear", "--root", str(repo))
    search(repo)
    assert not old.exists() and other_root.exists()
    assert (_isolated_cache / "index" / version / key / "manifest.msgpack").is_file()


def counts(run) -> dict[str, str]:
    assert run.returncode == 0, run.stderr
    return dict(line.split(": ", 1) for line in run.stdout.splitlines() if ": " in line)


def test_cq_index_updates_only_what_changed(repo: Path) -> None:
    first = counts(run_cq("index", "--root", str(repo)))
    assert first["files"].startswith("3 ") and first["updated"] == "3 files, removed: 0"
    # the root as an argument, as ``cq search NAME PATH`` takes it: the same index
    assert counts(run_cq("index", str(repo)))["updated"] == "0 files, removed: 0"
    both = run_cq("index", str(repo), "--root", str(repo.parent))
    assert both.returncode == 2 and both.stderr == "cq: give the root once: ROOT or --root ROOT\n"
    (repo / "app/files/storage.py").touch()  # new mtime, same content: hashed, not re-indexed
    assert counts(run_cq("index", "--root", str(repo)))["updated"] == "0 files, removed: 0"
    (repo / "app/files/handlers.py").unlink()
    (repo / "app/files/storage.py").write_text(STORAGE + "\n\ndef purge():\n    pass\n")
    (repo / "app/files/images.py").write_text("class ImageFile:\n    pass\n")
    after = counts(run_cq("index", "--root", str(repo)))
    assert after["updated"] == "2 files, removed: 1" and after["files"].startswith("3 ")
    data = search(repo, query="how do I purge the stored images?")
    names = [f["name"] for f in section(data, "functions")["functions"]]
    assert "app/files/storage.py::purge" in names
    assert not any("TemporaryUploadHandler" in n for n in names)


def test_an_unchanged_tree_is_not_read_and_a_same_size_edit_is_seen(repo: Path) -> None:
    """Files are known by their stat (with the ctime a write always moves), so an unchanged
    tree reads nothing, and an edit that keeps the size and puts the mtime back is still
    re-indexed (a size-and-mtime check would have kept the old documents)."""
    time.sleep(2.1)  # files changed in the last 2 s are not trusted by stat (racy, git's rule)
    first = counts(run_cq("index", "--root", str(repo)))
    assert first["updated"] == "3 files, removed: 0" and first["read"].startswith("3 files")
    again = counts(run_cq("index", "--root", str(repo)))
    assert again["updated"] == "0 files, removed: 0" and again["read"].startswith("0 files")
    path = repo / "app/files/storage.py"
    st = path.stat()
    path.write_text(STORAGE.replace("def delete(self, name)", "def purge_(self, name)"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    after = counts(run_cq("index", "--root", str(repo)))
    assert after["updated"] == "1 file, removed: 0" and after["read"].startswith("1 file ")
    data = search(repo, query="how do I purge a stored file?")
    names = [f["name"] for f in section(data, "functions")["functions"]]
    assert "app/files/storage.py::FileSystemStorage.purge_" in names


def test_cache_info_and_clear(repo: Path) -> None:
    run_cq("index", "--root", str(repo))
    info = run_cq("cache", "info")
    assert "index: 1 roots" in info.stdout
    cleared = run_cq("index", "--clear", "--root", str(repo))
    assert cleared.stdout.startswith("cleared 1 index")
    assert "index: 0 roots" in run_cq("cache", "info").stdout


def test_a_root_whose_name_is_not_utf8_is_indexed(repo: Path) -> None:
    odd = repo.rename(repo.with_name("repo_\udce9"))  # the tree cloned into such a directory
    built = counts(run_cq("index", "--root", str(odd)))
    assert built["files"].startswith("3 ") and built["updated"] == "3 files, removed: 0"
    run = run_cq("search", "-", "--root", str(odd), "--format", "json", stdin=QUESTION)
    assert run.returncode == 0 and "index failed" not in run.stderr, run.stderr
    assert relevant_files(run.json())[0] == "app/conf/global_settings.py"  # found by the index
    assert run_cq("index", "--clear", "--root", str(odd)).stdout.startswith("cleared 1 index")


def test_bad_root_is_one_line_error(tmp_path: Path) -> None:
    run = run_cq("index", "--root", str(tmp_path / "missing"))
    assert run.returncode == 2
    assert run.stderr.startswith("cq: not a directory") and "Traceback" not in run.stderr


def test_corrupt_index_is_rebuilt(repo: Path, _isolated_cache: Path) -> None:
    run_cq("index", "--root", str(repo))
    for meta in (_isolated_cache / "index").rglob("meta.json"):
        meta.write_text("{not json")
    data = search(repo)
    assert relevant_files(data)[0] == "app/conf/global_settings.py"
    assert data["run"]["counters"]["index.files_updated"] == 3


def test_two_concurrent_searches_on_one_root_both_succeed(repo: Path) -> None:
    for i in range(40):  # enough files that the first build takes a while
        (repo / f"app/extra/mod_{i}.py").parent.mkdir(exist_ok=True)
        (repo / f"app/extra/mod_{i}.py").write_text(STORAGE.replace("FileSystem", f"Disk{i}") * 20)
    argv = [sys.executable, "-m", "cq", "search", "-", "--root", str(repo), "--format", "json"]
    procs = [
        subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(2)
    ]
    outs = [p.communicate(QUESTION.encode(), timeout=120) for p in procs]
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err.decode()
        assert b"Traceback" not in err
        assert b"app/conf/global_settings.py" in out


def test_no_cache_builds_in_memory(repo: Path, _isolated_cache: Path) -> None:
    data = search(repo, "--no-cache")
    assert relevant_files(data)[0] == "app/conf/global_settings.py"
    assert not (_isolated_cache / "index").exists()


def test_a_tree_too_large_for_a_search_is_indexed_by_cq_index(repo: Path) -> None:
    small = {"CQ_INDEX_AUTO_BYTES": "100"}
    data = search(repo, env=small)
    assert data["summary"]["telemetry"]["index"]["skipped_over_bytes"] == 100
    assert "app/conf/global_settings.py" not in {f["file"] for f in data["findings"]}
    assert search(repo, env=small)["summary"] == data["summary"]  # remembered, same answer
    assert counts(run_cq("index", "--root", str(repo)))["updated"] == "3 files, removed: 0"
    data = search(repo, env=small)  # built: kept current by the search from now on
    assert relevant_files(data)[0] == "app/conf/global_settings.py"


def test_a_first_question_over_the_limit_answers_alike_whatever_order_rg_lists_in(
    tmp_path: Path,
) -> None:
    """Counting a first build's source stops at ``CQ_INDEX_AUTO_BYTES``: the rest of a large
    tree is neither listed nor stat'ed. Where it stops follows the order rg's threads list
    the files in, so the report names the limit passed, never a count: two first questions,
    each with an empty cache, answer alike."""
    tree = {
        f"pkg{d}/handlers_{i}.py": f"def handle_{d}_{i}(request):\n    return request\n"
        for d in range(8)
        for i in range(40)
    }
    root = write_tree(tmp_path / "repo", tree)
    runs = [
        run_cq(
            *("search", "how is a request handled?", "--root", str(root), "--format", "json"),
            env={"CQ_INDEX_AUTO_BYTES": "2000", "CQ_CACHE_DIR": str(tmp_path / f"cache{n}")},
        )
        for n in range(2)
    ]
    first, second = (run.json() for run in runs)
    assert runs[0].stderr == runs[1].stderr and first["summary"] == second["summary"]
    assert first["findings"] == second["findings"] and first["sections"] == second["sections"]
    index = first["summary"]["telemetry"]["index"]
    assert index["skipped_over_bytes"] == 2000
    assert "it has more than 2,000 bytes of new source" in index["unused"]


MUSL_ISSUE = (
    "musl: hardcoded `-static` causes issues with library objects\n"
    "It looks like a commit introduced an hardcoded `-static` flag for musl-gcc invocation.\n"
    "This seems to be introducing linking issues when building objects for native libraries.\n"
)


def test_a_question_no_name_answers_is_answered_by_the_index(tmp_path: Path) -> None:
    """None of the text's words names or maps onto a defined name, so the rewriter has no
    pattern; the index still finds the file whose code and comments say them."""
    crate = write_tree(
        tmp_path / "crate",
        {
            "src/lib.rs": "pub mod target;\n\n/// Compile sources.\npub fn compile() {}\n",
            "src/target.rs": (
                "/// Linker arguments for a target triple.\n"
                "pub fn extra_args(triple: &str) -> Vec<&'static str> {\n"
                '    if triple.contains("musl") {\n'
                '        vec!["-static"] // musl-gcc links everything statically\n'
                "    } else {\n        vec![]\n    }\n}\n"
            ),
        },
    )
    without = search(crate, "--no-index", query=MUSL_ISSUE)
    assert without["summary"]["rewrite"]["identifiers"] == [] and without["findings"] == []
    data = search(crate, query=MUSL_ISSUE)
    first = data["findings"][0]
    assert (first["file"], first["line"], first["tier"]) == ("src/target.rs", 2, "index")
    assert relevant_files(data)[0] == "src/target.rs"


def test_fused_order_keeps_test_files_behind_unless_the_question_is_about_tests() -> None:
    from cq.index.fuse import fused_files

    rg = ["tests/parse_tests.rs", "src/lexer.rs", "src/main.rs"]
    index = ["src/parse.rs", "tests/parse_tests.rs", "src/lexer.rs"]
    order = [v.file for v in fused_files(rg, index)]
    assert order[:2] == ["src/lexer.rs", "src/parse.rs"]  # both ahead of the test file
    assert order.index("tests/parse_tests.rs") > order.index("src/parse.rs")
    wanted = [v.file for v in fused_files(rg, index, tests_wanted=True)]
    assert wanted[0] == "tests/parse_tests.rs"  # found first by rg and second by the index


def test_a_python_title_asks_the_index_with_its_own_words(repo: Path) -> None:
    """The rewriter's terms join an issue text's words in the index's query, not a one-line
    question's: there they outnumber its words (bench figures in cq/index/query.py)."""
    from cq.index.build import update_index
    from cq.index.query import ask
    from cq.rewrite import understand

    opened, _ = update_index(repo)
    terms = ("FileSystemStorage", "TemporaryUploadHandler")
    title = "default permissions of uploaded files"
    plain = ask(opened.index, opened.manifest, understand(title), ())
    assert plain.files[0].path == "app/conf/global_settings.py"
    assert ask(opened.index, opened.manifest, understand(title), terms) == plain
    text = f"{title}\nThe storage saves them with the mode of the temporary file."
    asked = understand(text)
    assert ask(opened.index, opened.manifest, asked, terms) != ask(
        opened.index, opened.manifest, asked, ()
    )


def test_relevant_functions_follow_the_file_order() -> None:
    """A question's Relevant Functions start in the first file of the fused order, in Python
    and Rust: a unit the index ranks first in the first file leads a unit of the second file
    that rg's first scope matched (with equal weights rg's scope led)."""
    from cq.index.fuse import fused_units
    from cq.index.query import IndexHit
    from cq.model.index_tuning import Fusion, IndexTuning

    tuning = IndexTuning()

    units = (
        IndexHit(path="pkg/settings.py", kind="function", qualname="load", line=3),
        IndexHit(path="pkg/upload.py", kind="function", qualname="Handler.save", line=9),
    )
    rg_scopes = [("pkg/upload.py", "Handler.save")]
    files = {"pkg/settings.py": 1, "pkg/upload.py": 2}
    for fusion in (tuning.python, tuning.fusion, tuning.one_line):
        order = [v.qualname for v in fused_units(units, rg_scopes, files, fusion)]
        assert order == ["load", "Handler.save"]
    equal = [v.qualname for v in fused_units(units, rg_scopes, files, Fusion())]
    assert equal == ["Handler.save", "load"]
    # A class is where a function lives: an index class unit and an rg scope in a class body
    # (CapWords, as PEP 8 names classes) are not Relevant Functions.
    cls = IndexHit(path="pkg/upload.py", kind="class", qualname="Handler", line=1)
    scopes = [("pkg/upload.py", "Handler.Meta"), ("pkg/upload.py", "_Chunk"), *rg_scopes]
    listed = [v.qualname for v in fused_units((cls, *units), scopes, files, tuning.python)]
    assert listed == ["load", "Handler.save"]  # a private class (_Chunk) is a class too


def test_a_rebuilt_index_answers_in_the_same_order(repo: Path, tmp_path: Path) -> None:
    """Equal BM25 scores come back in document order: two builds of one tree (fresh caches)
    must store the documents in the same order, so one question gets one answer."""
    for i in range(150):  # identical modules: every one of their units ties with its copies
        write_tree(repo, {f"app/copies/upload_{i:03d}.py": SETTINGS + STORAGE + HANDLERS})
    question = "where are uploaded file chunks received by the upload handler?"
    answers = []
    for name in ("first", "second"):
        data = search(repo, query=question, env={"CQ_CACHE_DIR": str(tmp_path / name)})
        assert data["run"]["counters"]["index.files_updated"] == 153
        answers.append((data["findings"], section(data, "functions")))
    assert answers[0] == answers[1]
    functions = answers[0][1]
    assert functions is not None and len(functions["functions"]) > 1


def test_a_search_answered_from_a_stale_index_says_so(repo: Path) -> None:
    """Another process holds the index's writer (tantivy's lock, held for real) while a file
    changed: the search answers from the index as last committed and says so, in JSON
    telemetry and one markdown line; once the writer is free the next search catches up. The
    writer is another process's, not this one's: the CLI runs in a fork of this process, and
    a fork of a process with tantivy's writer threads running may inherit a lock one of
    them held (the search's index update then waited for its deadline: a failure seen once
    in CI)."""
    from cq.index.location import index_dir

    assert counts(run_cq("index", "--root", str(repo)))["updated"] == "3 files, removed: 0"
    write_tree(repo, {"app/files/images.py": "class ImageFile:\n    pass\n"})
    profile = write_tree(repo, {"quick.toml": "[index]\nlock_wait_s = 0.2\n"}) / "quick.toml"
    quick = ("--profile", str(profile))
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_WRITER, str(index_dir(repo))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        stale = search(repo, *quick)["summary"]["telemetry"]["index"]
        assert stale == {"documents": stale["documents"], "files": 3, "stale": 1}
        text = run_cq("search", "-", "--root", str(repo), *quick, stdin=QUESTION).stdout
        assert [ln for ln in text.splitlines() if ln.startswith("the index may be behind")]
    finally:
        holder.communicate(timeout=60)  # its stdin closed: it exits, and the lock goes
    fresh = search(repo, *quick)["summary"]["telemetry"]["index"]
    assert fresh["files"] == 4 and "stale" not in fresh
    again = run_cq("search", "-", "--root", str(repo), stdin=QUESTION).stdout
    assert "the index may be behind" not in again


# Holds tantivy's writer of the index dir given until its stdin closes.
_HOLD_WRITER = """
import sys
import tantivy
from cq.index.schema import build_schema
writer = tantivy.Index(build_schema(), path=sys.argv[1], reuse=True).writer()
print("held", flush=True)
sys.stdin.read()
writer.wait_merging_threads()
"""


def test_a_question_lists_the_tree_once(repo: Path, tmp_path: Path) -> None:
    """The rewriter's vocabulary and the index share one ``rg --files`` (the search's
    listing): the real rg, run through a script that notes each call's arguments."""
    calls = tmp_path / "rg-calls"
    wrapper = tmp_path / "rg"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec {find_rg()} "$@"\n')
    wrapper.chmod(0o755)
    data = search(repo, env={"CQ_RG": str(wrapper)})
    assert data["summary"]["rewrite"]["applied"]
    assert data["summary"]["telemetry"]["index"]["files"] == 3
    listings = [line for line in calls.read_text().splitlines() if "--files" in line.split()]
    assert len(listings) == 1


def test_the_index_holds_what_the_search_sees(repo: Path) -> None:
    """Files rg ignores (an ``.ignore`` file) and files over the search's 2 MB limit are not
    indexed: a question never surfaces a file a pattern search would not read."""
    (repo / ".ignore").write_text("*_generated.py\n")
    (repo / "app/files/upload_generated.py").write_text("def upload_permissions():\n    pass\n")
    (repo / "app/files/huge.py").write_text("x = 1\n" * 400_000)  # 2.4 MB
    assert counts(run_cq("index", "--root", str(repo)))["files"].startswith("3 ")


LOADER = '''"""Records on disk."""


def load_records(
    path,  # where the records are
    limit=None,
):
    """Read records."""
    with open(path) as handle:
        return handle.readlines()[:limit]


def count_lines(path):
    return len(load_records(path))


def load_all(paths):
    def load_one(path):
        return load_records(path, limit=10)

    return [load_one(p) for p in paths]
'''
ARCHIVE = '''def compress_backup(folder):
    """Pack every snapshot of the folder into one tarball for offsite retention."""
    return folder
'''


def test_relevant_functions_start_at_their_definition_with_the_whole_header(
    tmp_path: Path,
) -> None:
    """Each Relevant Function points at its ``def`` line with its header on one line (a
    multi-line one joined, its comment dropped), also one only rg's hits found: the index
    asked for a single unit leaves ``count_lines`` and the nested ``load_one`` to rg's
    callsites inside them."""
    repo = write_tree(tmp_path / "repo", {"app/loader.py": LOADER})
    profiles = Path(os.environ["XDG_CONFIG_HOME"]) / "cq" / "profiles"
    profiles.mkdir(parents=True, exist_ok=True)
    (profiles / "one-unit.toml").write_text("[index]\nunits_asked = 1\n")
    data = search(repo, "--profile", "one-unit", query="why does load_records ignore the limit?")
    functions = {f["name"]: f for f in section(data, "functions")["functions"]}
    loader = functions["app/loader.py::load_records"]
    assert (loader["line"], loader["signature"]) == (4, "def load_records(path, limit=None):")
    counted = functions["app/loader.py::count_lines"]
    assert counted["signals"] == ["rg"]
    assert (counted["line"], counted["signature"]) == (13, "def count_lines(path):")
    nested = functions["app/loader.py::load_all.load_one"]  # not a unit: found by its def line
    assert (nested["line"], nested["signature"]) == (18, "def load_one(path):")


def test_a_definition_only_the_index_found_is_listed_with_its_line(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", {"app/archive.py": ARCHIVE, "app/loader.py": LOADER})
    question = "how are snapshots packed into a tarball for offsite retention?"
    data = search(repo, query=question)
    first = data["findings"][0]
    assert (first["file"], first["tier"]) == ("app/archive.py", "index")
    assert {f["tier"] for f in data["findings"]} == {"index"}  # no pattern matched
    assert first["containing_scope"] == "compress_backup"  # as rg's hits read it
    md = run_cq("search", "-", "--root", str(repo), stdin=question)
    place = "- `app/archive.py:1:4` definition\n```python\ndef compress_backup(folder):\n```"
    assert place in md.stdout, md.stdout
    assert "### `compress_backup` (`app/archive.py`)" in md.stdout  # not "module level"
    answer = next(ln for ln in md.stdout.splitlines() if ln.startswith("**Answer:**"))
    assert answer.endswith("(src; the index alone found it, no pattern matched it)"), answer


def test_a_form_feed_does_not_shift_the_lines_the_index_shows(tmp_path: Path) -> None:
    """Lines are counted at "\\n" as rg counts them: ``str.splitlines`` also splits at a form
    feed (a page break, ^L, that an editor may write between sections) and showed the line
    above the definition."""
    archive = "# Backups.\n\x0c\n" + ARCHIVE
    repo = write_tree(tmp_path / "repo", {"app/archive.py": archive, "app/loader.py": LOADER})
    question = "how are snapshots packed into a tarball for offsite retention?"
    data = search(repo, query=question)
    first = data["findings"][0]
    assert (first["file"], first["line"], first["line_text"]) == (
        "app/archive.py",
        3,
        "def compress_backup(folder):",
    )
    listed = section(data, "functions")["functions"][0]
    assert (listed["line"], listed["signature"]) == (3, "def compress_backup(folder):")


BUCKET_TESTS = '''def test_list_buckets_created_in_a_region():
    """Buckets created in a region are listed."""


def test_buckets_created_twice_raise():
    """Buckets created twice raise."""


def test_created_buckets_are_empty():
    """Created buckets are empty."""
'''

BUCKET_STORE = '''class Store:
    def create_bucket(self, name):
        """Make a new bucket of that name."""
        self.buckets[name] = []
'''


def test_the_index_reaches_past_tests_to_the_code_they_test(tmp_path: Path) -> None:
    """Tests are named as sentences and hold a question's words more often than the code:
    the units the index is asked for are counted outside the tests, and the Relevant
    Functions rank the code's units before the tests' (the question is not about tests)."""
    from cq.index.build import update_index
    from cq.index.fuse import fused_units
    from cq.index.query import ask
    from cq.model.index_tuning import IndexTuning
    from cq.rewrite import understand

    repo = write_tree(
        tmp_path / "repo", {"tests/test_buckets.py": BUCKET_TESTS, "app/store.py": BUCKET_STORE}
    )
    opened, _ = update_index(repo)
    tuning = IndexTuning(units_asked=1)
    hits = ask(opened.index, opened.manifest, understand("how are buckets created?"), (), tuning)
    assert hits.units[-1].qualname == "Store.create_bucket", hits.units
    assert hits.units[0].path == "tests/test_buckets.py"  # the tests ranked first are kept
    listed = [v.qualname for v in fused_units(hits.units, [], {}, tuning.python)]
    assert listed[0] == "Store.create_bucket"
    wanted = fused_units(hits.units, [], {}, tuning.python, tests_wanted=True)
    assert wanted[0].file == "tests/test_buckets.py"


PATIENCE = '''class Patience:
    """Ends the run once the monitored value shows no improvement for a number of rounds."""

    def __init__(self, rounds):
        self.rounds = rounds
        self.best = None
        self.waited = 0

    def __call__(self, value):
        if self.best is None or value > self.best:
            self.best = value
            self.waited = 0
        else:
            self.waited += 1
        return self.waited >= self.rounds
'''


def test_a_question_meets_another_spelling_of_its_word_in_a_docstring(tmp_path: Path) -> None:
    """The question says "improving", the docstring "improvement": the index's body and doc
    words are not stemmed, so the question asks for the word's other spellings
    (``cq.rewrite.derived_forms``); without them nothing in the tree answered."""
    tree = write_tree(
        tmp_path / "tree",
        {
            "lib/patience.py": PATIENCE,
            "lib/report.py": (
                "def print_value(value):\n"
                '    """Print the monitored value after each round."""\n'
                '    print(f"value: {value}")\n'
            ),
        },
    )
    data = search(tree, query="what happens when the loss stops improving")
    answer = data["answer"]
    assert (answer["file"], answer["name"]) == ("lib/patience.py", "__call__")


SUGGEST = '''def closest_flag(typed, flags):
    """The flag nearest to what was typed, for the suggestion printed under the error."""
    return min(flags, key=lambda flag: distance(typed, flag))


def distance(a, b):
    return sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))
'''


def test_a_question_verb_meets_its_noun_in_tion(tmp_path: Path) -> None:
    """The question says "suggest", the docstring "suggestion": a noun in "-tion" or "-sion"
    made from the verb itself ("selection", "compression"), not "-ation", is read as the
    verb (``cq.rewrite.stem``), so the question asks for it too (``derived_forms``)."""
    tree = write_tree(
        tmp_path / "tree",
        {
            "cli/near.py": SUGGEST,
            "cli/flags.py": (
                "def read_flag(flag, flags):\n"
                '    """Read one flag of the command line: the flag as typed, or its default."""\n'
                "    return flags.get(flag, flag)\n"
            ),
        },
    )
    data = search(tree, query="how does the cli suggest a flag")
    answer = data["answer"]
    assert (answer["file"], answer["name"]) == ("cli/near.py", "closest_flag")
