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


def test_the_everyday_check_without_its_trees_is_not_available_not_failed() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CQ_BENCH_")}
    run = subprocess.run(
        [sys.executable, "-m", "bench.gate", "--only", "everyday"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "N/A  everyday     no trees: --everyday-trees DIR or $CQ_BENCH_TREES"
    ]


def test_the_everyday_check_fails_when_the_pooled_answers_fall() -> None:
    """Judged on the pooled Answer@1 and top-5 against the baseline's, within
    ``EVERYDAY_SLACK`` points; a run of other questions is no comparison."""
    from bench import _everyday, gate

    def run(answered: int, n: int = 100, prefix: str = "q") -> _everyday.RunFile:
        outcomes = [
            _everyday.Outcome(
                id=f"{prefix}{i}",
                repo="moto",
                kind="concept",
                query="how?",
                gold=[],
                answer_kind="definition",
                answer=None,
                top=[],
                ans=i < answered,
                top5=i < answered,
            )
            for i in range(n)
        ]
        return _everyday.RunFile(data="", options=[], outcomes=outcomes)

    same = gate._everyday_outcome(run(80), run(80))
    assert same.status == "PASS" and "worse" not in same.detail
    noise = gate._everyday_outcome(run(80), run(79))
    assert noise.status == "PASS" and "1 questions worse, 0 better" in noise.detail
    fell = gate._everyday_outcome(run(80), run(70))
    assert fell.status == "FAIL" and "Answer@1 70.0 (baseline 80.0)" in fell.detail
    assert gate._everyday_outcome(run(80), run(80, prefix="x")).status == "N/A"


def test_the_everyday_baseline_names_no_directory_of_one_machine() -> None:
    from bench import _everyday

    baseline = _everyday.read(str(REPO / "bench" / "baselines" / "everyday.json.gz"))
    assert baseline.data == "bench/data/everyday.jsonl"
    assert not any(o.startswith("--cq-checkout") for o in baseline.options)
    assert "--cache=warm" in baseline.options
