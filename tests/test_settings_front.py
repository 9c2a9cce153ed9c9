"""A search's settings are resolved once, at its front (``cq.settings``): a profile's value, the
user's config and an environment variable reach the stage they configure, the environment
over the profile and the config; a bad value is one ``cq:`` line before any work; the root is
resolved once, so any spelling of it gives the same report; and no stage reads the
environment itself (checked on the source, as ``test_layout`` checks imports)."""

from __future__ import annotations

import ast
import functools
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cq, write_tree
from rewrite_fixture import graph_repo

import cq

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

PACKAGE = Path(cq.__file__).parent

# Who may read the environment, and why (``cq/settings.py`` argues each):
ENV_READERS = {
    "cq.env": "the one place that knows each CQ_* variable's kind and range",
    "cq.tools": "where rg lives (process-wide) and rg's child environment",
    "cq.cache.place": "where cq's cache lives: used by cq cache / cq index outside searches",
    "cq.semantic.view": "the environment Pyrefly's process is started with (a child's)",
    "cq.search.command": "front end: CQ_DEBUG",
    "cq.search.request": "front end: CQ_ROOT, CQ_FORMAT, NO_COLOR, TERM",
    "cq.cli.index": "front end: CQ_ROOT",
    "cq.cli.dispatch": "front end: CQ_STANDBY, read before the search imports anything",
    "cq.cli.embed": "front end: CQ_ROOT",
    "cq.embed.background": "the environment an embedding build's process is started with",
    "cq.agent.mcp_config": "front end: CQ_ROOT, the answer budget",
    "cq.agent.manifest": "the agent installer: where the cache is, for its manifest",
    "cq.agent.targets": "the agent installer: HOME, CODEX_HOME",
    "cq.server.client": "the server's own switches (CQ_SERVER, idle time), the env it forwards",
    "cq.server.identity": "the server's own settings that make two servers differ",
    "cq.server.lifecycle": "the environment the server process is started with",
    "cq.server.paths": "the server's socket dir (XDG_RUNTIME_DIR)",
    "cq.server.worker": "a warm worker runs each search in its client's environment",
}
# Who may call cq.env's readers: the settings builder and the front ends (the MCP answer
# budget's floor, the server's idle time) beside the readers above.
ENV_CALLERS = {
    "cq.cli.dispatch",  # cq mcp's CQ_* values checked before it starts
    "cq.settings",
    "cq.profiles",
    "cq.llm_settings",
    "cq.agent.budget",
    "cq.server.daemon",
    "cq.server.memory",  # the bound a search process of the server or cq mcp retires past
    *ENV_READERS,
}


class _Source:
    """What the three source checks read of one module, from one walk over its tree."""

    def __init__(self, tree: ast.AST) -> None:
        self.reads_environment = False  # os.environ / environb / getenv, however imported
        self.calls_env_readers = False  # imports cq.env
        self.imported: set[str] = set()  # names imported with ``from ... import``
        self.takes_search_request = False  # imports SearchRequest from cq.model
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "environb", "getenv"):
                self.reads_environment = True
            elif isinstance(node, ast.Import):
                self.calls_env_readers |= any(a.name == "cq.env" for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                names = {a.name for a in node.names}
                self.imported |= names
                module = node.module or ""
                if module == "os" and names & {"environ", "environb", "getenv"}:
                    self.reads_environment = True
                self.calls_env_readers |= module == "cq.env"
                if module.startswith("cq.model") and "SearchRequest" in names:
                    self.takes_search_request = True


@functools.cache  # the sources do not change during a run; three tests read them
def _sources() -> dict[str, _Source]:
    """Each module of cq by name, parsed and walked once."""
    return {
        _module_name(path): _Source(ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_stage_reads_the_environment() -> None:
    """Every env var, profile and config a search needs is a field of its ``Settings``."""
    sources = _sources()
    reading = [name for name, source in sources.items() if source.reads_environment]
    calling = [name for name, source in sources.items() if source.calls_env_readers]
    assert [name for name in reading if name not in ENV_READERS] == []
    assert [name for name in calling if name not in ENV_CALLERS] == []
    assert set(ENV_CALLERS) <= set(sources)  # a listed exception that went away leaves too


def test_no_stage_reads_a_profile_or_the_user_config() -> None:
    """Only the settings builder and the commands that are no search (``cq index``) parse a
    profile; only ``cq.llm_settings`` opens the user's config file."""
    readers = {"read_profile", "load_tuning", "load_profile", "load_rank_weights", "load_config"}
    # the rewrite reads the LLM's config files only when it asks the model (cq.settings)
    allowed = {"cq.settings", "cq.profiles", "cq.llm_settings", "cq.cli.index", "cq.rewrite.run"}
    found = [name for name, source in _sources().items() if source.imported & readers]
    assert [name for name in found if name not in allowed] == []


# Who may read a ``SearchRequest`` (import the name, so take one), and why: the front ends
# that build it, the settings that settle it into what each stage takes (``Settings.scope``:
# the files and caps; ``Settings.tuning``, ...), and the pipeline that hands the stages their
# part. A stage takes its own settings, never the request.
REQUEST_FRONT = {
    "cq": "the package's public names: run_search(SearchRequest)",
    "cq.model": "its definition and the package's public names",
    "cq.model.request": "its definition, and what is derived from it once: Scope.of (the "
    "files and caps), LadderSettings.of (the ladder's switches), Echo.of (what the report "
    "repeats: the summary's root, follow-ups, the token budget)",
    "cq.model.options": "SEARCH_OPTIONS: each option a field of it",
    "cq.settings": "settle: the request confined, its profile parsed, its Settings (the Scope, "
    "the ladder's switches, the Echo)",
    "cq.confine": "settle's first step: every path the request names inside its root",
    "cq.pipeline": "run_search: settles a library caller's request, hands each stage its part",
    "cq.search": "the CLI's search: builds it from the command line",
    "cq.search.options": "the CLI's flags of its fields",
    "cq.search.request": "the CLI's request, settled",
    "cq.search.listing": "-l, -c, --files: the request's scope listed",
    "cq.agent.search_worker": "the MCP tool's request, built from its arguments",
    "cq.agent.budget": "the MCP answer budget on the request",
    "cq.rewrite.question": "the Question: the query and its switches, read once",
}


def test_a_search_request_is_read_by_the_front_alone() -> None:
    """The request stops at ``settle``: every other module takes the settings derived from
    it (``Settings``: its ``Scope``, ``ladder``, ``echo``; the ``Question``), checked on
    the source as for the environment."""
    readers = {name for name, source in _sources().items() if source.takes_search_request}
    assert readers - set(REQUEST_FRONT) == set()


CALLS = "import os.path as osp\n" + "".join(
    f"\n\ndef f{i}():\n    return osp.join({i})\n" for i in range(3)
)


def _libcst_stages(root: Path, *args: str, env: dict[str, str] | None = None) -> list[str]:
    run = run_cq(
        "search", "join", "--root", str(root), "--format", "json", "--no-cache", *args, env=env
    )
    assert run.returncode == 0, run.stderr
    return [f["enrichment"]["stages"]["libcst"] for f in run.json()["findings"]]


def test_a_profile_value_and_an_env_var_reach_the_stage(tmp_path: Path) -> None:
    """``[enrich] libcst_hits`` of a profile inside the root reaches enrichment;
    ``CQ_ENRICH_LIBCST_HITS`` wins over it."""
    root = write_tree(
        tmp_path / "repo", {"pkg/j.py": CALLS, "quota.toml": "[enrich]\nlibcst_hits = 2\n"}
    )
    profile = ("--profile", str(root / "quota.toml"))
    assert _libcst_stages(root) == ["applied"] * 3
    assert _libcst_stages(root, *profile) == ["applied", "applied", "skipped"]
    env = {"CQ_ENRICH_LIBCST_HITS": "1"}
    assert _libcst_stages(root, *profile, env=env) == ["applied", "skipped", "skipped"]


class _Endpoint:
    """A loopback HTTP server that records the paths it was asked for and answers 500: the
    rewrite falls back offline, and the test learns which endpoint the stage was given."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        asked = self.asked

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                asked.append(self.path)
                self.send_response(500)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def endpoints() -> Iterator[tuple[_Endpoint, _Endpoint]]:
    pair = (_Endpoint(), _Endpoint())
    yield pair
    for endpoint in pair:
        endpoint.server.shutdown()
        endpoint.server.server_close()


def _user_config(tmp_path: Path, text: str) -> Path:
    """The user's config file (``conftest`` points ``XDG_CONFIG_HOME`` at an empty dir)."""
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "cq" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)
    return config


def test_the_user_config_and_the_env_reach_the_rewrite(
    tmp_path: Path, endpoints: tuple[_Endpoint, _Endpoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user config's ``[rewrite] url`` is the endpoint the rewrite asks; ``CQ_LLM_URL``
    wins over it."""
    configured, from_env = endpoints
    monkeypatch.delenv("CQ_LLM_URL")
    monkeypatch.setenv("CQ_LLM_TIMEOUT", "60")
    _user_config(tmp_path, f'[rewrite]\nurl = "{configured.url}"\n')
    root = graph_repo(tmp_path / "repo")
    question = ("search", "how are edges inserted into the graph?", "--root", str(root))
    run = run_cq(*question)
    assert run.returncode == 0, run.stderr
    assert configured.asked == ["/api/chat"] and from_env.asked == []
    run = run_cq(*question, "--no-cache", env={"CQ_LLM_URL": from_env.url})
    assert run.returncode == 0, run.stderr
    assert configured.asked == ["/api/chat"] and from_env.asked == ["/api/chat"]


@pytest.mark.parametrize(
    ("setting", "words"),
    [
        ({"CQ_SEMANTIC_INDEX": "sometimes"}, "CQ_SEMANTIC_INDEX must be one of"),
        ({"CQ_ENRICH_LIBCST_HITS": "-1"}, "CQ_ENRICH_LIBCST_HITS must be a whole number"),
        ({"profile": "[enrich]\nlibcst_hits = -1\n"}, "libcst_hits"),
    ],
)
def test_a_bad_value_is_one_line_and_exit_2(
    tmp_path: Path, setting: dict[str, str], words: str
) -> None:
    """Settled at the front whatever the query asks: a name search with a bad setting of
    the enrichment or the semantic stage is refused before it searches."""
    root = write_tree(tmp_path / "repo", {"pkg/j.py": CALLS})
    env = {k: v for k, v in setting.items() if k.startswith("CQ_")}
    args = ["search", "join", "--root", str(root)]
    if "profile" in setting:
        (root / "bad.toml").write_text(setting["profile"])
        args += ["--profile", str(root / "bad.toml")]
    run = run_cq(*args, env=env)
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cq: ") and words in lines[0], run.stderr


def _report(root: str, cwd: Path, *args: str) -> dict[str, Any]:
    run = run_cq("search", "alpha", "--root", root, "--format", "json", *args, cwd=cwd)
    assert run.returncode == 0, run.stderr
    data = run.json()
    del data["run"]  # wall times and what this run found in the cache
    return data


def test_the_root_is_resolved_once_any_spelling_gives_the_same_report(tmp_path: Path) -> None:
    """A root given through a link, relative to the current directory or with a trailing
    slash is the same tree: the same report (its root, findings and follow-up commands) and
    the same profile file read inside it."""
    real = write_tree(
        tmp_path / "real",
        {
            "pkg/m.py": "def alpha():\n    return 1\n\n\ndef beta():\n    return alpha()\n",
            "few.toml": "max_files = 1\n",
        },
    )
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    spellings = [str(real), str(tmp_path / "link"), "link", "./link/"]
    reports = [_report(root, tmp_path) for root in spellings]
    assert all(report == reports[0] for report in reports)
    assert reports[0]["summary"]["root"] == str(real.resolve())
    profiled = [_report(root, tmp_path, "--profile", str(real / "few.toml")) for root in spellings]
    assert all(report == profiled[0] for report in profiled)
    assert profiled[0]["summary"]["stats"]["caps_hit"] == "none"  # one file: within max_files
