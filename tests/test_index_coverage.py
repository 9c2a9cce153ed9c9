"""Relevant Functions' first places go to the function whose own text says what the question
asks, not to a neighbour that shares its file's names (``cq/index/coverage.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cq.index.coverage import by_coverage, coverage, unit_words, with_members
from cq.index.fuse import UnitVote
from cq.index.query import IndexHit
from tests.conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

SCHEDULER = '''class PlateauScheduler:
    """Lowers the learning rate when a metric stops improving."""

    def __init__(self, optimizer, factor=0.5, patience=3):
        self.optimizer = optimizer
        self.factor = factor
        self.patience = patience
        self.best = None
        self.bad_epochs = 0

    def learning_rate(self):
        """The learning rate of the optimizer's first group."""
        return self.optimizer.groups[0]["lr"]

    def set_learning_rate(self, value):
        """Write a learning rate into every parameter group."""
        for group in self.optimizer.groups:
            group["lr"] = value

    def step(self, metric):
        """Called once an epoch with the validation metric."""
        if self.best is None or metric < self.best:
            self.best = metric
            self.bad_epochs = 0
            return
        self.bad_epochs += 1
        if self.bad_epochs > self.patience:
            self.set_learning_rate(self.learning_rate() * self.factor)
            self.bad_epochs = 0
'''
WARMUP = '''def warmup_learning_rate(base, epoch, epochs):
    """The learning rate during warmup: linear from zero to base."""
    return base * min(1.0, epoch / epochs)
'''


def test_the_function_that_does_what_the_question_says_comes_first(tmp_path: Path) -> None:
    # "learning rate" names two small accessors; only ``step`` holds "metric" and the
    # improvement check. Ranked by fusion alone, ``learning_rate`` came first.
    root = write_tree(
        tmp_path / "repo", {"sched/scheduler.py": SCHEDULER, "sched/warmup.py": WARMUP}
    )
    question = (
        "when does the scheduler lower the learning rate because the metric stopped improving?"
    )
    run = run_cq("search", question, "--root", str(root), "--format", "json")
    assert run.returncode == 0, run.stderr
    data = run.json()
    section = next(s for s in data["sections"] if s["type"] == "functions")
    names = [f["name"] for f in section["functions"]]
    assert names[0] == "sched/scheduler.py::PlateauScheduler.step", names
    assert set(names[1:3]) == {
        "sched/scheduler.py::PlateauScheduler.learning_rate",
        "sched/scheduler.py::PlateauScheduler.set_learning_rate",
    }
    answer = data["findings"][data["summary"]["primary"]]
    assert (answer["file"], answer["line"]) == ("sched/scheduler.py", 20)  # def step
    # the markdown Answer says rg's patterns matched inside it, though not on its def line
    md = run_cq("search", question, "--root", str(root)).stdout
    head = next(line for line in md.splitlines() if line.startswith("**Answer:**"))
    assert head.endswith("(src; the index found it, patterns matched inside it)"), head


def test_a_word_every_candidate_holds_counts_little() -> None:
    held = [unit_words("def rate(): lr"), unit_words("def step(metric): lr patience")]
    shares = coverage({"lr": 1.0, "metric": 1.0, "nothing": 5.0}, held)
    # "lr" is in both, "metric" only in the second; "nothing" is in neither and left out
    assert shares[1] == 1.0
    assert 0 < shares[0] < 0.25
    assert coverage({"absent": 1.0}, held) == [0.0, 0.0]
    assert coverage({"metric": 1.0}, [None, unit_words("metric")]) == [0.0, 1.0]


def test_stems_meet_across_inflections() -> None:
    held = [unit_words("def render_templates(self): pass")]
    assert coverage({"rendered": 1.0, "template": 1.0}, held) == [1.0]


def test_only_the_first_units_are_reordered() -> None:
    votes = [
        UnitVote(file="a.py", qualname=name, fused=1.0 - i / 10) for i, name in enumerate("pqrs")
    ]
    units = [(v, []) for v in votes]
    says = {"r": frozenset({"metric"}), "s": frozenset({"metric"})}

    def read(vote: UnitVote) -> frozenset[str] | None:
        return says.get(vote.qualname, frozenset())

    got = [v.qualname for v, _ in by_coverage(units, {"metric": 1.0}, read, 3, 2.0)]
    assert got == ["r", "p", "q", "s"]  # "s" is past the first 3 and keeps its place
    assert by_coverage(units, {"metric": 1.0}, read, 3, 0.0) == units
    assert by_coverage(units, {}, read, 3, 2.0) == units


def _method(name: str, line: int) -> IndexHit:
    return IndexHit(path="train/stopping.py", kind="function", qualname=name, line=line)


def test_a_class_the_index_found_is_represented_by_its_method_that_says_the_question() -> None:
    # the class's docstring paraphrases the question; classes are not Relevant Functions,
    # so its method holding the question's words takes its place
    cls = IndexHit(path="train/stopping.py", kind="class", qualname="EarlyStopping", score=9.0)
    other = IndexHit(path="train/metrics.py", kind="function", qualname="best", score=5.0)
    methods = [
        (_method("EarlyStopping.__init__", 4), unit_words("def __init__(self, monitor, patience)")),
        (_method("EarlyStopping.step", 13), unit_words("def step(state): stop_training monitor")),
    ]

    def members(hit: IndexHit) -> list[tuple[IndexHit, frozenset[str]]]:
        return methods if hit.qualname == "EarlyStopping" else []

    words = {"training": 1.0, "stopped": 1.0, "monitored": 1.0}
    got = with_members((cls, other), words, members)
    assert [(h.qualname, h.line, h.score) for h in got] == [
        ("EarlyStopping.step", 13, 9.0),
        ("best", 1, 5.0),
    ]
    # no method holds a word: the class stays (and Relevant Functions leave it out)
    assert with_members((cls,), {"unrelated": 1.0}, members) == (cls,)
    # Rust types keep their place
    ty = IndexHit(path="src/stop.rs", kind="class", qualname="EarlyStopping")
    assert with_members((ty,), words, members) == (ty,)


def test_a_short_question_keeps_the_fused_order() -> None:
    votes = [UnitVote(file="a.py", qualname=q, fused=1.0 - i / 10) for i, q in enumerate("pq")]
    units = [(v, []) for v in votes]

    def read(vote: UnitVote) -> frozenset[str] | None:
        return unit_words("def render(self)") if vote.qualname == "q" else frozenset()

    few = {"templates": 1.0, "rendered": 1.0}
    assert by_coverage(units, few, read, 10, 2.0, least=5) == units
    assert [v.qualname for v, _ in by_coverage(units, few, read, 10, 2.0)] == ["q", "p"]


def test_a_unit_the_index_ranks_high_joins_the_candidates_from_a_low_fused_place() -> None:
    # rg's patterns missed its file, so its fused place is low; the index ranked it 2nd
    votes = [
        UnitVote(file="a.py", qualname=q, fused=1.0 - i / 20, rank_index=r)
        for i, (q, r) in enumerate((("p", 0), ("q", 0), ("r", 0), ("s", 2), ("t", 9)))
    ]
    units = [(v, []) for v in votes]

    def read(vote: UnitVote) -> frozenset[str] | None:
        return unit_words("bucket padding length") if vote.qualname in "st" else frozenset()

    words = {"padding": 1.0, "length": 1.0}
    got = [v.qualname for v, _ in by_coverage(units, words, read, 3, 2.0)]
    assert got == ["s", "p", "q", "r", "t"]  # "t": the index's 9th, past the first 3


def test_files_are_reordered_by_their_best_function_and_named_files_keep_their_place() -> None:
    from cq.index.coverage import files_by_coverage
    from cq.index.fuse import FileVote

    votes = [
        FileVote(file="pkg/trainer.py", fused=1.0),
        FileVote(file="pkg/trace.py", fused=0.95, rank_named=1),  # a traceback frame's file
        FileVote(file="pkg/settings.py", fused=0.9),  # constants only
        FileVote(file="pkg/stopping.py", fused=0.85),
        FileVote(file="pkg/later.py", fused=0.1),
    ]
    held = {
        "pkg/trainer.py": [unit_words("def fit(self): loop epochs")],
        "pkg/trace.py": [unit_words("def report(): print")],
        "pkg/settings.py": [],
        "pkg/stopping.py": [unit_words("def step(self): stop training monitor metric")],
        "pkg/later.py": [unit_words("def stop_training_on_metric(self): stop training metric")],
    }
    words = {w: 1.0 for w in ("stop", "training", "monitored", "metric", "improving")}
    got = [v.file for v in files_by_coverage(votes, words, held.__getitem__, 4, 1.0)]
    # the named file and the settings module keep places 2 and 3; the 5th is past the first 4
    assert got == [
        "pkg/stopping.py",
        "pkg/trace.py",
        "pkg/settings.py",
        "pkg/trainer.py",
        "pkg/later.py",
    ]
    assert files_by_coverage(votes, words, held.__getitem__, 4, 0.0) == votes
    assert files_by_coverage(votes, {"stop": 1.0}, held.__getitem__, 4, 1.0, least=5) == votes


def test_a_test_file_keeps_its_place_unless_the_question_is_about_tests() -> None:
    from cq.index.coverage import files_by_coverage
    from cq.index.fuse import FileVote

    votes = [
        FileVote(file="pkg/trainer.py", fused=1.0),
        FileVote(file="tests/test_stopping.py", fused=0.9),
    ]
    held = {
        "pkg/trainer.py": [unit_words("def fit(self): loop epochs")],
        "tests/test_stopping.py": [
            unit_words("def test_training_stops_when_the_monitored_metric_stops_improving(): pass")
        ],
    }
    words = {w: 1.0 for w in ("stop", "training", "monitored", "metric", "improving")}
    kept = files_by_coverage(votes, words, held.__getitem__, 10, 1.0)
    assert [v.file for v in kept] == ["pkg/trainer.py", "tests/test_stopping.py"]
    asked = files_by_coverage(votes, words, held.__getitem__, 10, 1.0, tests_wanted=True)
    assert [v.file for v in asked] == ["tests/test_stopping.py", "pkg/trainer.py"]
