"""A search that stays in-process takes turns with a forked helper at its files' analyses
(``cq/classify/pool.py``'s ``_Taking``): the same classifications as analysing them all here."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cq, write_tree


def _tree(root: Path) -> Path:
    body = "".join(
        f"class C{i}:\n    def target(self):\n        return target({i})\n\n\n" for i in range(60)
    )
    files = {f"pkg/m{n:02d}.py": f"# module {n}\n{body}" for n in range(30)}
    files["eager.toml"] = "[scale]\nhelper_min_bytes = 0\n"
    files["never.toml"] = "[scale]\nhelper_min_bytes = 1000000000\n"
    return write_tree(root, files)


def _search(root: Path, profile: str) -> dict:
    argv = ["search", "target", "--root", str(root), "--format", "json", "--limit", "0"]
    run = run_cq(*argv, "--no-cache", "--profile", str(root / profile))
    assert run.returncode == 0, run.stderr
    return run.json()


def test_a_forked_helper_classifies_as_this_process_does(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    helped = _search(root, "eager.toml")
    alone = _search(root, "never.toml")
    # The helper took the first turn (``cq.forked.Turns``); how many more is the machine's.
    assert 0 < helped["run"]["counters"]["helper_files"] <= 30
    assert "helper_files" not in alone["run"]["counters"]
    assert "pool_workers" not in helped["run"]["counters"]
    assert helped["findings"] == alone["findings"]
