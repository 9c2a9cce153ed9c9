"""What an issue text points at, read against a tree's files: traceback frames and paths
from their end, dotted names as modules, names written as code at their definitions; vague
mentions (a file name ten directories share, a method fifty classes define) count for
nothing. Real extraction (the rewriter's), real files listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from cq.index.mentions import (
    Definition,
    code_names,
    defining_files,
    files_named_by_words,
    merged,
    named_files,
)
from cq.model.index_tuning import IndexTuning
from cq.rewrite import FileTable, extract_mentions
from tests.conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

TREE = [
    "src/pkg/trainer/trainer.py",
    "src/pkg/trainer/__init__.py",
    "src/pkg/core/lightning.py",
    "src/pkg/a/utils.py",
    "src/pkg/b/utils.py",
    "src/pkg/c/utils.py",
    "src/pkg/d/utils.py",
    "examples/train.py",
]

ISSUE = """Trainer crashes when val_dataloader is None

```
Traceback (most recent call last):
  File "/home/me/run.py", line 3, in <module>
  File "/opt/conda/lib/python3.8/site-packages/pkg/core/lightning.py", line 40, in fit
  File "C:\\envs\\lib\\site-packages\\pkg\\trainer\\trainer.py", line 500, in get_dataloaders
TypeError: 'NoneType' object is not iterable
```
It also happens with `self.trainer.fit` and in utils.py.
"""


def test_frames_resolve_from_their_end_innermost_first() -> None:
    named = named_files(extract_mentions(ISSUE), TREE, IndexTuning())
    assert [m.path for m in named] == ["src/pkg/trainer/trainer.py", "src/pkg/core/lightning.py"]
    assert {m.how for m in named} == {"traceback"}


def test_a_path_must_match_two_parts_and_pick_few_files() -> None:
    table = FileTable(p for p in TREE if p.endswith(".py"))
    assert table.resolve("site-packages/pkg/core/lightning.py") == ["src/pkg/core/lightning.py"]
    assert table.resolve("self/trainer.py") == []  # read from self.trainer: not a module
    assert table.resolve("other/lightning.py") == []
    assert table.resolve("train.py") == ["examples/train.py"]  # a bare name, one file has it
    text = "see pkg/core/lightning.py and pkg.trainer.trainer, also utils.py"
    named = named_files(extract_mentions(text), TREE, IndexTuning())
    assert [m.path for m in named] == ["src/pkg/core/lightning.py", "src/pkg/trainer/trainer.py"]


def test_a_definition_counts_only_when_few_files_define_the_name() -> None:
    names = code_names(extract_mentions("`DataLoader` breaks in `forward` of `Model`"))
    assert names[:3] == ["DataLoader", "forward", "Model"]
    definitions = {
        "DataLoader": [Definition(path="pkg/data.py", qualname="DataLoader", line=3, kind="class")],
        "forward": [
            Definition(path=f"pkg/m{i}.py", qualname=f"M{i}.forward", line=9, kind="function")
            for i in range(5)
        ],
    }
    found = defining_files(names, definitions, IndexTuning().mention_max_files)
    assert [(m.path, m.how) for m in found] == [("pkg/data.py", "definition")]
    assert found[0].unit == definitions["DataLoader"][0]


def test_a_title_names_a_file_by_its_name_alone_when_one_file_has_it() -> None:
    tree = [
        "examples/GAN/CycleGAN.py",
        "examples/GAN/GAN.py",
        "pkg/time_feature/holiday.py",
        "pkg/spatial/random_affine.py",
        "pkg/__init__.py",
        "tests/test_holiday.py",
        "tests/holiday.py",
        *TREE,
    ]
    tuning = IndexTuning()

    def named(title: str) -> list[tuple[str, str]]:
        found = files_named_by_words(title, tree, lambda p: not p.startswith("tests/"), tuning)
        return [(m.path, m.how) for m in found]

    # two adjacent words joined spell CycleGAN.py; "gan" spells GAN.py (case ignored)
    assert named("Running Cycle GAN fails") == [
        ("examples/GAN/GAN.py", "name"),
        ("examples/GAN/CycleGAN.py", "name"),
    ]
    assert named("Holiday features are off by one") == [("pkg/time_feature/holiday.py", "name")]
    assert named("RandomAffine and random affine") == [("pkg/spatial/random_affine.py", "name")]
    # four utils.py say nothing, a package is not a name, a test file is not kept
    assert named("utils of pkg break the trainer") == [("src/pkg/trainer/trainer.py", "name")]
    # a file both a path and the title name leads the files named by a path alone
    paths = named_files(
        extract_mentions("see pkg/core/lightning.py, pkg.trainer.trainer"), tree, tuning
    )
    title = files_named_by_words("Trainer breaks", tree, lambda p: True, tuning)
    assert [m.path for m in paths] == ["src/pkg/core/lightning.py", "src/pkg/trainer/trainer.py"]
    assert [(m.path, m.how) for m in merged(paths, title)] == [
        ("src/pkg/trainer/trainer.py", "path"),
        ("src/pkg/core/lightning.py", "path"),
    ]


RUST_TREE = [
    "src/lib.rs",
    "src/parse/parser.rs",
    "src/parse/validator.rs",
    "src/build/arg.rs",
    "crates/nu-cli/src/lib.rs",
]

RUST_ISSUE = """Conflicting group panics

```
error[E0433]: failed to resolve: use of undeclared type `Cmd`
  --> src/lib.rs:21:35
thread 'main' panicked at 'oops', ~/.cargo/registry/src/x/clap-3.0.0/src/parse/validator.rs:240:1
```
The check is https://github.com/clap-rs/clap/blob/0123abc/src/build/arg.rs#L32-L36
"""


def test_a_rust_text_names_its_tree_files_by_location_and_link_but_not_by_crate_root() -> None:
    mentions = extract_mentions(RUST_ISSUE)
    named = named_files(mentions, RUST_TREE, IndexTuning(), "rust")
    # the panic's location (a frame, innermost) first, then the linked file; rustc's
    # ``--> src/lib.rs`` is the reporter's own crate root and names nothing here
    assert [(m.path, m.how) for m in named] == [
        ("src/parse/validator.rs", "traceback"),
        ("src/build/arg.rs", "path"),
    ]
    assert named_files(mentions, RUST_TREE, IndexTuning()) == []  # a Python table reads no .rs


def test_a_python_text_names_the_file_it_links_on_github(tmp_path: Path) -> None:
    """A link to a file (``github.com/o/r/blob/<ref>/pkg/x.py#L3``) names it as a path in the
    prose does: it leads a question whose words are about another file."""
    root = write_tree(
        tmp_path / "repo",
        {
            "pkg/stopping.py": (
                '"""Early stopping: stop training when the monitored metric stops improving."""\n'
                "def should_stop(history, patience):\n    return len(history) > patience\n"
            ),
            "pkg/saving.py": "def save_model(model, path):\n    return path\n",
        },
    )
    text = (
        "Early stopping stops training too soon\n\n"
        "When the monitored metric stops improving training stops, but the model is lost:\n"
        "https://github.com/owner/repo/blob/0123abc/pkg/saving.py#L1-L2\n"
    )
    run = run_cq("search", "-", "--root", str(root), "--format", "json", stdin=text)
    files = list(dict.fromkeys(f["file"] for f in run.json()["findings"]))
    assert files[0] == "pkg/saving.py", files


IPYTHON_ISSUE = """Trainer.fit fails on one GPU

```
RuntimeError                              Traceback (most recent call last)
~/conda/lib/python3.6/site-packages/pkg/trainer/trainer.py in fit(self, model)
    343         # if we did not use slurm
--> 344         self.single_gpu_train(model)

/opt/conda/lib/python3.6/site-packages/pkg/core/memory.py(189): summarize
```
"""


def test_ipython_and_pdb_frames_are_traceback_frames() -> None:
    """Jupyter's ``path.py in func(...)`` and pdb's / a trace's ``path.py(189): func`` name the
    file and the function as ``File "path", line N, in func`` does."""
    mentions = extract_mentions(IPYTHON_ISSUE)
    assert mentions.frame_functions == ("fit", "summarize")
    tree = ["src/pkg/trainer/trainer.py", "src/pkg/core/memory.py", "src/pkg/core/hooks.py"]
    named = named_files(mentions, tree, IndexTuning())
    assert [(m.path, m.how) for m in named] == [
        ("src/pkg/core/memory.py", "traceback"),
        ("src/pkg/trainer/trainer.py", "traceback"),
    ]
