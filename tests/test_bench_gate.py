"""The one gate (``python -m bench.gate``) and the benches' arguments: a check whose inputs are
missing says so on its line instead of failing the gate, and no bench defaults to a directory
that exists on one machine."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_a_check_without_its_trees_is_not_available_not_failed() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CQ_BENCH_")}
    run = subprocess.run(
        [sys.executable, "-m", "bench.gate", "--only", "localization"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "N/A  localization no trees: --trees DIR or $CQ_BENCH_EVAL_TREES"
    ]


def test_no_bench_defaults_to_an_absolute_path() -> None:
    absolute = re.compile(r"""default=(Path\()?["']/|: Path = Path\(["']/""")
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for path in (REPO / "bench").rglob("*.py")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if absolute.search(line)
    ]
    assert found == []
