"""ripgrep's habits in ``cq search``: context lines, -l/-c/--files, -t, --color, unknown flags,
regex errors, the language scope said in markdown, and shell completions."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cq, write_tree

from cq.model.options import LIMIT_FLAGS, SEARCH_OPTIONS

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

STORE = "def get_bucket(name):\n    key = name.lower()\n    return key\n"
APP = (
    "from pkg.store import get_bucket\n"
    "\n"
    "\n"
    "def handler():\n"
    "    first = get_bucket('a')\n"
    "    second = get_bucket('b')\n"
    "    return first, second\n"
)
LIB = "pub fn get_bucket() -> u32 {\n    7\n}\n"
ESC = "\x1b["


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "repo",
        {
            "pkg/store.py": STORE,
            "app.py": APP,
            "src/lib.rs": LIB,
            "README.md": "get_bucket is described here\n",
        },
    )


def _search(repo: Path, *args: str, env: dict[str, str] | None = None):
    return run_cq("search", *args, "--root", str(repo), env=env)


def _file_lines(repo: Path, rel: str) -> list[str]:
    return (repo / rel).read_text().splitlines()


def test_context_lines_in_json_are_the_files_lines(repo: Path) -> None:
    run = _search(repo, "-B", "1", "-A", "2", "get_bucket", "--format", "json", "--limit", "0")
    assert run.returncode == 0, run.stderr
    findings = run.json()["findings"]
    assert findings
    for f in findings:
        lines = _file_lines(repo, f["file"])
        before = [(n, lines[n - 1]) for n in range(max(1, f["line"] - 1), f["line"])]
        after = [
            (n, lines[n - 1]) for n in range(f["line"] + 1, min(len(lines), f["line"] + 2) + 1)
        ]
        assert [(c["line"], c["text"]) for c in f["context_before"]] == before, f
        assert [(c["line"], c["text"]) for c in f["context_after"]] == after, f


def test_c_sets_both_widths_and_a_or_b_win(repo: Path) -> None:
    run = _search(repo, "-C", "2", "-A", "0", "handler", "--format", "json")
    f = next(f for f in run.json()["findings"] if f["file"] == "app.py")
    assert [c["line"] for c in f["context_before"]] == [f["line"] - 2, f["line"] - 1]
    assert f["context_after"] == []


def test_context_lines_in_markdown_as_rg_prints_them(repo: Path) -> None:
    run = _search(repo, "-C", "1", "get_bucket", "-t", "py")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    section = lines[lines.index("## Lines around the hits") :]
    block = section[section.index("### `app.py`") + 2 :]
    block = block[: block.index("```")]
    app = _file_lines(repo, "app.py")
    # hits at 1, 5, 6: their lines with ':', neighbours with '-', '--' between the two runs
    assert block == [
        f"1:{app[0]}",
        f"2-{app[1]}",
        "--",
        f"4-{app[3]}",
        f"5:{app[4]}",
        f"6:{app[5]}",
        f"7-{app[6]}",
    ]


def test_a_number_after_a_is_not_the_query(repo: Path) -> None:
    run = _search(repo, "-A", "3", "get_bucket", "--format", "json")
    assert run.returncode == 0, run.stderr
    assert run.json()["summary"]["query"] == "get_bucket"


def test_without_the_new_flags_the_json_has_no_new_fields(repo: Path) -> None:
    data = _search(repo, "get_bucket", "--format", "json").json()
    assert "files" not in data
    assert all("context_before" not in f and "context_after" not in f for f in data["findings"])


def test_the_schema_describes_the_context_lines_and_the_output_follows_it(repo: Path) -> None:
    import jsonschema  # a dependency of the mcp SDK cq depends on

    schema = run_cq("schema").json()
    declared = schema["$defs"]["Finding"]["properties"]
    assert declared["context_before"]["items"] == {"$ref": "#/$defs/ContextLine"}
    assert declared["context_after"]["items"] == {"$ref": "#/$defs/ContextLine"}
    assert schema["$defs"]["ContextLine"]["required"] == ["line", "text"]
    run = _search(repo, "-C", "2", "get_bucket", "--format", "json")
    jsonschema.validate(run.json(), schema)


def test_files_with_matches_lists_every_file_best_first(repo: Path) -> None:
    report = _search(repo, "get_bucket", "--format", "json", "--limit", "0").json()
    ranked = list(dict.fromkeys(f["file"] for f in report["findings"]))
    for flag in ("-l", "--files-with-matches"):
        run = _search(repo, flag, "get_bucket")
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == ranked
    none = _search(repo, "-l", "zzqqxx")
    assert (none.returncode, none.stdout) == (1, "")


def test_count_prints_path_colon_findings(repo: Path) -> None:
    report = _search(repo, "get_bucket", "--format", "json", "--limit", "0").json()
    counts: dict[str, int] = {}
    for f in report["findings"]:
        counts[f["file"]] = counts.get(f["file"], 0) + 1
    run = _search(repo, "-c", "get_bucket")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [f"{path}:{n}" for path, n in counts.items()]


def test_a_listing_with_json_says_what_it_prints(repo: Path) -> None:
    said = {
        "-l": "-l/--files-with-matches prints file names, not --format json",
        "-c": "-c/--count prints file names with counts, not --format json",
    }
    for flag, words in said.items():
        run = _search(repo, flag, "get_bucket", "--format", "json")
        assert run.returncode == 2 and run.stderr.startswith(f"cq: {words}"), run.stderr


def test_files_lists_what_cq_would_search_within_the_scope(repo: Path) -> None:
    run = _search(repo, "--files")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["app.py", "pkg/store.py", "src/lib.rs"]
    assert _search(repo, "--files", "-t", "rs").stdout.splitlines() == ["src/lib.rs"]
    assert _search(repo, "--files", "--include", "*.md").returncode == 1  # out of scope
    refused = _search(repo, "--files", "get_bucket")
    assert refused.returncode == 2 and "--files takes no QUERY, only a PATH" in refused.stderr
    assert _files(run_cq("search", "--files", "pkg", cwd=repo)) == ["pkg/store.py"]  # rg's PATH
    both = run_cq("search", "--files", "pkg", "src", cwd=repo)
    assert both.returncode == 2 and "--files takes one PATH" in both.stderr


def test_files_names_a_file_that_is_not_utf8_as_l_does(repo: Path) -> None:
    (repo / "bad_\udcff.py").write_bytes(b"def get_bucket_too():\n    return get_bucket\n")
    listed = _search(repo, "--files")
    assert listed.returncode == 0, listed.stderr
    matched = _search(repo, "-l", "get_bucket_too")
    assert matched.stdout.splitlines() == ["bad_\\udcff.py"]  # escaped, never U+FFFD
    assert matched.stdout.splitlines()[0] in listed.stdout.splitlines()  # the same name


def test_type_maps_to_the_language_scope(repo: Path) -> None:
    for args, files in (
        (("-t", "py"), {"app.py", "pkg/store.py"}),
        (("--type", "rust"), {"src/lib.rs"}),
        (("-t", "rs"), {"src/lib.rs"}),
    ):
        run = _search(repo, *args, "get_bucket", "--format", "json")
        assert run.returncode == 0, run.stderr
        assert {f["file"] for f in run.json()["findings"]} == files
    bad = _search(repo, "-t", "js", "get_bucket")
    assert bad.returncode == 2 and "invalid choice: 'js'" in bad.stderr


@pytest.mark.parametrize(
    "args, flag",
    [
        (("--pcre2", "get_bucket"), "--pcre2"),
        (("--max-columns", "80", "get_bucket"), "--max-columns"),
        (("-U", "get_bucket"), "-U"),
        (("--ignore", "get_bucket"), "--ignore"),  # not taken for --ignore-case
    ],
)
def test_a_flag_cq_does_not_take_is_refused_by_name(repo: Path, args, flag: str) -> None:
    run = _search(repo, *args)
    assert run.returncode == 2
    assert run.stderr == f"cq: cq search does not take {flag} (see 'cq search --help')\n"


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        ("--json", "cq's is --format json"),
        ("-m", "cq's is --max-matches-per-file N"),
        ("-n", "cq prints every finding as file:line:col"),
        ("-S", "cq matches a query as typed; -i for any case"),
    ],
)
def test_an_rg_flag_cq_spells_otherwise_names_cqs_spelling(
    repo: Path, flag: str, said: str
) -> None:
    run = _search(repo, flag, "get_bucket")
    assert run.returncode == 2
    assert run.stderr == f"cq: cq search does not take {flag} (see 'cq search --help'; {said})\n"


def test_a_query_starting_with_a_dash_is_told_to_follow_double_dash(repo: Path) -> None:
    run = _search(repo, "-xget_bucket")
    assert run.returncode == 2
    assert "does not take -xget_bucket" in run.stderr
    assert "a query starting with '-' goes after '--'" in run.stderr
    run = _search(repo, "-get_bucket")  # -g with its glob attached, as rg reads it too
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert "read -get_bucket as -g 'et_bucket' and has no QUERY" in run.stderr
    assert "a query starting with '-' goes after '--' (cq search -- -get_bucket)" in run.stderr
    after = run_cq("search", "--root", str(repo), "--", "-get_bucket")
    assert after.returncode in (0, 1) and after.stderr == "", after.stderr  # searched


def test_usage_errors_point_to_search_help(repo: Path) -> None:
    run = _search(repo, "get_bucket", "extra")
    assert run.returncode == 2
    assert "'extra'" in run.stderr and "see 'cq search --help'" in run.stderr


def _files(run) -> list[str]:  # type: ignore[no-untyped-def]
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def test_a_path_after_the_query_is_what_rg_would_search(repo: Path) -> None:
    """``cq search QUERY PATH`` as ``rg PATTERN PATH``: inside the root (here the current
    directory) the part searched, a directory or one file; elsewhere the root."""
    everything = _files(run_cq("search", "-l", "get_bucket", cwd=repo))
    assert {"pkg/store.py", "app.py", "src/lib.rs"} <= set(everything)
    assert _files(run_cq("search", "-l", "get_bucket", "pkg", cwd=repo)) == ["pkg/store.py"]
    assert _files(run_cq("search", "-c", "get_bucket", "app.py", cwd=repo)) == ["app.py:3"]
    assert _files(run_cq("search", "-l", "get_bucket", ".", cwd=repo)) == everything
    below = _files(run_cq("search", "-l", "get_bucket", "repo", cwd=repo.parent))
    assert below == [f"repo/{path}" for path in everything]  # as rg names them
    elsewhere = repo.parent / "elsewhere"
    elsewhere.mkdir()
    assert _files(run_cq("search", "-l", "get_bucket", "../repo", cwd=elsewhere)) == everything
    store = str(repo / "pkg" / "store.py")
    assert _files(run_cq("search", "-l", "get_bucket", store, cwd=elsewhere)) == ["store.py"]
    question = run_cq(
        "search",
        "where is the bucket name lowered?",
        "pkg",
        "--format",
        "json",
        cwd=repo,
        env={"CQ_LLM": "off"},
    ).json()
    assert question["findings"] and {f["file"] for f in question["findings"]} == {"pkg/store.py"}


def test_a_path_that_is_not_one_or_not_alone_is_refused_in_one_line(repo: Path) -> None:
    cases = {
        ("how", "does", "it", "work"): "unexpected argument 'does': quote a query with spaces",
        ("get_bucket", "pkg", "app.py"): "cq search takes one PATH: name more with --include",
        ("get_bucket", "pkg", "--in", "src"): "name the part to search once: 'pkg' or --in 'src'",
        ("get_bucket", "..", "--root", "."): "'..' is outside the root",
        ("get_bucket", "nowhere"): "'nowhere': no such file or directory; quote a query",
    }
    for args, said in cases.items():
        run = run_cq("search", *args, cwd=repo)
        assert run.returncode == 2, args
        assert said in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_regex_errors_say_where_rgs_caret_was_in_the_users_pattern(repo: Path) -> None:
    cases = {  # on one line: the columns of the user's pattern under rg's caret
        "x[z-a]": "at columns 3-5 ('z-a'): invalid character class range",
        "ab(c": "at column 3 ('('): unclosed group",  # the '(' left open
        "foo)": "at column 4 (')'): unopened group",  # the ')' opening nothing
        "ab{": "at its end (column 4): repetition quantifier",  # it ended too soon
    }
    for pattern, said in cases.items():
        run = _search(repo, "--regex", pattern)
        assert run.returncode == 2
        assert len(run.stderr.splitlines()) == 1, run.stderr
        assert run.stderr.startswith(f"cq: regex parse error in '{pattern}' {said}"), run.stderr


def test_hits_the_language_scope_dropped_are_said_in_markdown(repo: Path) -> None:
    run = _search(repo, "--include", "*.md", "get_bucket")
    assert "1 match left out: not in Python or Rust files" in run.stdout
    scoped = _search(repo, "--lang", "python", "--include", "*.rs", "get_bucket")
    assert "1 match left out by --lang python: `--lang auto` shows" in scoped.stdout


def test_color_always_never_and_json(repo: Path) -> None:
    # two of five shown: the report has Hot Files (one showing every finding leaves them out)
    always = _search(repo, "--color", "always", "get_bucket", "--limit", "2")
    assert ESC in always.stdout
    answer = next(line for line in always.stdout.splitlines() if "Answer:" in line)
    assert answer.startswith(f"{ESC}1m{ESC}32m**Answer:**")
    assert "`\x1b[35mpkg/store.py:1:4\x1b[0m`" in always.stdout
    assert "`\x1b[35mapp.py\x1b[0m`" in always.stdout  # a path: Hot Files
    assert ESC not in _search(repo, "get_bucket").stdout  # a pipe: no colour by default
    assert ESC not in _search(repo, "--color", "never", "get_bucket").stdout
    assert ESC not in _search(repo, "--color", "always", "get_bucket", "--format", "json").stdout
    listed = _search(repo, "--color", "always", "-l", "get_bucket")
    assert listed.stdout.startswith(f"{ESC}35m")


def _at_a_terminal(repo: Path, env: dict[str, str]) -> str:
    """The real CLI with its stdout on a pseudo-terminal; what it printed there."""
    main, side = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cq", "search", "get_bucket", "--root", str(repo)],
        stdout=side,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
    )
    os.close(side)
    out = b""
    while True:
        ready, _, _ = select.select([main], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=300)
    os.close(main)
    return out.decode("utf-8", "replace")


def test_color_auto_at_a_terminal_unless_no_color(repo: Path) -> None:
    base = {"TERM": "xterm"}
    assert ESC in _at_a_terminal(repo, {**base, "NO_COLOR": ""})  # empty: not set
    assert ESC not in _at_a_terminal(repo, {**base, "NO_COLOR": "1"})


def _script(shell: str) -> str:
    run = run_cq("completions", shell)
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_bash_completions_are_valid_and_complete_the_declared_flags(tmp_path: Path) -> None:
    script = tmp_path / "cq.bash"
    script.write_text(_script("bash"))
    subprocess.run(["bash", "-n", str(script)], check=True)
    declared = [
        flag
        for option in SEARCH_OPTIONS
        for flag in (*option.flags, *(f for s in option.spellings for f in s.flags))
    ] + [limit.flag for limit in LIMIT_FLAGS]

    def complete(*words: str) -> list[str]:
        probe = (
            f"source {script}; COMP_WORDS=({' '.join(words)}); "
            f"COMP_CWORD={len(words) - 1}; _cq; printf '%s\\n' \"${{COMPREPLY[@]}}\""
        )
        done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
        return done.stdout.split()

    offered = complete("cq", "search", "''")
    assert set(declared) <= set(offered)
    assert complete("cq", "search", "--after") == ["--after-context"]
    assert complete("cq", "search", "-t", "''") == ["auto", "python", "rust", "py", "rs"]
    assert complete("cq", "comp") == ["completions"]


@pytest.mark.parametrize("shell, check", [("zsh", ["zsh", "-n"]), ("fish", ["fish", "-n"])])
def test_zsh_and_fish_completions_are_valid(tmp_path: Path, shell: str, check: list[str]) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed here, so its syntax cannot be checked")
    script = tmp_path / f"cq.{shell}"
    script.write_text(_script(shell))
    subprocess.run([*check, str(script)], check=True)


def test_fish_completes_the_search_flags(tmp_path: Path) -> None:
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed here, so its completions cannot be run")
    script = tmp_path / "cq.fish"
    script.write_text(_script("fish"))
    probe = f"source {script}; complete -C 'cq search --before'"
    done = subprocess.run(["fish", "-c", probe], capture_output=True, text=True, check=True)
    assert [line.split("\t")[0] for line in done.stdout.splitlines()] == ["--before-context"]


def test_zsh_completion_registers_for_cq_when_sourced(tmp_path: Path) -> None:
    if shutil.which("zsh") is None:
        pytest.skip("zsh is not installed here, so its completions cannot be loaded")
    script = tmp_path / "cq.zsh"
    script.write_text(_script("zsh"))
    probe = f"autoload -U compinit; compinit -u -d {tmp_path}/zcomp; source {script}; "
    probe += "print -r -- $_comps[cq]"
    done = subprocess.run(["zsh", "-f", "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "_cq"


def _profiles_env(tmp_path: Path) -> dict[str, str]:
    """A user config dir holding two profiles of the user's own, and a file whose name is no
    profile's (``--profile`` would take it as a path)."""
    profiles = tmp_path / "xdg" / "cq" / "profiles"
    profiles.mkdir(parents=True)
    for name in ("mine.toml", "team-2.toml", "not a name.toml", "notes.txt"):
        (profiles / name).write_text("")
    return {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


PRESETS = ["audit", "default", "interactive", "literal"]


def test_bash_completes_profile_names_the_shipped_ones_and_the_users(tmp_path: Path) -> None:
    env = _profiles_env(tmp_path)
    script = tmp_path / "cq.bash"
    script.write_text(_script("bash"))

    def complete(*words: str) -> list[str]:
        probe = (
            f"source {script}; COMP_WORDS=({' '.join(words)}); "
            f"COMP_CWORD={len(words) - 1}; _cq; printf '%s\\n' \"${{COMPREPLY[@]}}\""
        )
        done = subprocess.run(
            ["bash", "-c", probe], capture_output=True, text=True, check=True, env=env
        )
        return done.stdout.split()

    assert complete("cq", "search", "--profile", "''") == [*PRESETS, "mine", "team-2"]
    assert complete("cq", "search", "get_bucket", "--profile", "a") == ["audit"]
    assert complete("cq", "index", "--profile", "m") == ["mine"]
    (tmp_path / "xdg" / "cq" / "profiles" / "later.toml").write_text("")  # after the script
    assert complete("cq", "search", "--profile", "l") == ["literal", "later"]
    env["XDG_CONFIG_HOME"] = str(tmp_path / "empty")
    assert complete("cq", "search", "--profile", "''") == PRESETS


def test_zsh_completes_profile_names(tmp_path: Path) -> None:
    script = _script("zsh")
    assert 'compadd -- audit default interactive literal ${(f)"$(_cq_profiles)"}' in script
    if shutil.which("zsh") is None:
        pytest.skip("zsh is not installed here, so its completions cannot be run")
    env = _profiles_env(tmp_path)
    (tmp_path / "_cq").write_text(script)
    # zsh's own test harness for completion is a pty; the function's compadd is tried here
    # with compadd standing in as a printer, the way the case branch calls it.
    probe = (
        f"fpath=({tmp_path} $fpath); source {tmp_path}/_cq 2>/dev/null; "
        "compadd() { shift; print -l -- $@; }; _describe() { :; }; "
        "words=(cq search --profile ''); CURRENT=4; _cq"
    )
    done = subprocess.run(["zsh", "-f", "-c", probe], capture_output=True, text=True, env=env)
    assert done.stdout.splitlines() == [*PRESETS, "mine", "team-2"], done.stdout + done.stderr


def test_fish_completes_profile_names(tmp_path: Path) -> None:
    script = _script("fish")
    assert "-l profile -x -a 'audit default interactive literal (__cq_profiles)'" in script
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed here, so its completions cannot be run")
    env = _profiles_env(tmp_path)
    (tmp_path / "cq.fish").write_text(script)
    probe = f"source {tmp_path}/cq.fish; complete -C 'cq search --profile '"
    done = subprocess.run(["fish", "-c", probe], capture_output=True, text=True, env=env)
    offered = [line.split("\t")[0] for line in done.stdout.splitlines()]
    assert sorted(offered) == sorted([*PRESETS, "mine", "team-2"]), done.stdout + done.stderr


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (
            ["serch", "get_bucket"],
            "cq: no command 'serch': did you mean 'cq search'? (see 'cq --help')",
        ),
        (
            ["get_bucket"],
            "cq: no command 'get_bucket' (commands: search, agent, mcp, cache, index, embed, "
            "server, schema, completions); to search for it: cq search get_bucket",
        ),
    ],
    ids=["typo", "rg-habit"],
)
def test_a_word_that_is_no_command_is_said_with_the_command_meant(
    words: list[str], said: str
) -> None:
    """``rg PATTERN`` is the habit: ``cq get_bucket`` says how to search for it, and a typo of
    a command names the command, not a list to read through."""
    run = run_cq(*words)
    assert run.returncode == 2
    assert run.stderr.splitlines() == [said]
