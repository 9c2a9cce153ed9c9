"""A usage question answered by the uses it asks for, in the place it names.

"where is X raised?" is answered by the lines raising it, "... caught?" by its handlers,
"... instantiated?" by the calls making one, and "where is X imported in the handlers?" by
the imports under ``handlers/`` ahead of the others; before, such questions were rewritten
into guessed names, or answered with the definition.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

TREE = {
    "lib/errors.py": "class StoreFull(RuntimeError):\n    pass\n",
    "lib/store.py": (
        "from lib.errors import StoreFull\n\n\nclass Store:\n"
        "    def put(self, key):\n        if key:\n            raise StoreFull(key)\n"
        "        return StoreFull\n"
    ),
    "lib/handlers/retry.py": (
        "from lib.errors import StoreFull\n\n\ndef retry(store, key):\n    try:\n"
        "        store.put(key)\n    except StoreFull:\n        return None\n"
    ),
    "lib/handlers/log.py": (
        "from lib.errors import StoreFull\n\n\ndef note(err):\n"
        "    return isinstance(err, StoreFull)\n"
    ),
    "lib/make.py": (
        "from lib.errors import StoreFull\n\n\ndef make(key):\n    return StoreFull(key)\n"
    ),
}


def _answer(tree: Path, question: str) -> dict:
    run = run_cq("search", question, "--root", str(tree), "--format", "json", "--no-semantic")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    answer = report["answer"]
    assert answer["kind"] == "uses", answer
    return {
        "first": (answer["file"], answer["line"]),
        "sites": [
            (report["findings"][i]["file"], report["findings"][i]["line"]) for i in answer["calls"]
        ],
        "findings": [(f["file"], f["line"]) for f in report["findings"]],
    }


def test_where_raised_is_answered_by_the_raise(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    got = _answer(tmp_path, "where is StoreFull raised?")
    assert got["sites"] == [("lib/store.py", 7)], got
    assert got["findings"][0] == ("lib/store.py", 7)  # the report leads with it too


def test_where_caught_is_answered_by_the_handler(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    got = _answer(tmp_path, "where is StoreFull caught?")
    assert got["sites"] == [("lib/handlers/retry.py", 7)], got


def test_where_instantiated_is_answered_by_the_calls(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    got = _answer(tmp_path, "where is StoreFull instantiated?")
    assert sorted(got["sites"]) == [("lib/make.py", 5), ("lib/store.py", 7)], got


def test_imports_in_a_named_place_come_first(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    got = _answer(tmp_path, "where is StoreFull imported in the handlers")
    first_two = sorted(got["sites"][:2])
    assert first_two == [("lib/handlers/log.py", 1), ("lib/handlers/retry.py", 1)], got
    assert len(got["sites"]) == 4  # the others still listed, after them


@pytest.mark.parametrize(
    ("question", "head"),
    [
        ("where is StoreFull raised?", "**Answer:** 1 raise of `StoreFull`"),
        ("where is StoreFull caught?", "**Answer:** 1 handler of `StoreFull`"),
        ("where is StoreFull instantiated?", "**Answer:** 2 instantiations of `StoreFull`"),
    ],
)
def test_the_count_counts_the_uses_asked_for_in_their_words(
    tmp_path: Path, question: str, head: str
) -> None:
    """The Answer's count is of the uses asked for, not of every use of the name, and says
    which ("241 uses of ConfigurationError" answered "where is it raised?")."""
    write_tree(tmp_path, TREE)
    run = run_cq("search", question, "--root", str(tmp_path), "--no-semantic")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("\n\n")[1].startswith(head), run.stdout


def test_imports_nearest_the_definition_answer_first(tmp_path: Path) -> None:
    """The package that defines a name exports it (its ``__init__``) and its neighbours
    import it: they answer "where is X imported?" before a plugin's or another package's
    import of it, whatever the findings' scores."""
    write_tree(
        tmp_path,
        {
            "src/lib/data/grid/aggregator.py": "class GridAggregator:\n    pass\n",
            "src/lib/data/grid/__init__.py": "from .aggregator import GridAggregator\n",
            "src/lib/__init__.py": "from .data.grid import GridAggregator\n",
            "plugins/extra/run.py": (
                "from lib.data.grid.aggregator import GridAggregator\n\n\n"
                "def run(x):\n    return GridAggregator(x) or GridAggregator\n"
            ),
        },
    )
    got = _answer(tmp_path, "where is GridAggregator imported")
    assert got["first"] == ("src/lib/data/grid/__init__.py", 1), got
    assert got["sites"][-1] == ("plugins/extra/run.py", 1), got


def test_a_module_named_in_words_is_answered_by_its_uses(tmp_path: Path) -> None:
    """ "where is the suggestions module used" names a module by a plain word and the word
    "module": its ``use`` lines answer, and the definition it speaks of is the ``mod``
    those lines bring in, not a struct's field of that name (before, the question was
    rewritten into guessed names and answered with a function)."""
    write_tree(
        tmp_path,
        {
            "src/parser/features/mod.rs": "pub(crate) mod suggestions;\n",
            "src/parser/features/suggestions.rs": (
                "pub(crate) fn did_you_mean(v: &str) -> Vec<String> {\n    vec![v.to_owned()]\n}\n"
            ),
            "src/parser/parser.rs": (
                "use crate::parser::features::suggestions;\n\n"
                "pub(crate) fn parse(v: &str) -> Vec<String> {\n"
                "    suggestions::did_you_mean(v)\n}\n"
            ),
            "src/error/mod.rs": (
                "use crate::parser::features::suggestions;\n\n"
                "pub(crate) fn explain(v: &str) -> usize {\n"
                "    suggestions::did_you_mean(v).len()\n}\n"
            ),
            "src/builder/value.rs": (
                "pub struct Unknown {\n    suggestions: Vec<String>,\n}\n\n"
                "impl Unknown {\n    pub fn suggest(&self) -> usize {\n"
                "        self.suggestions.len()\n    }\n}\n"
            ),
        },
    )
    got = _answer(tmp_path, "where is the suggestions module used")
    assert got["first"] in {("src/error/mod.rs", 1), ("src/parser/parser.rs", 1)}, got
    run = run_cq(
        "search", "where is the suggestions module used", "--root", str(tmp_path), "--no-semantic"
    )
    assert "(defined at `src/parser/features/mod.rs:1:" in run.stdout, run.stdout


def test_a_capitalized_word_in_a_usage_question_is_the_name_asked(tmp_path: Path) -> None:
    """ "where is Styles used?": a plain word, but capitalized inside the question, as only a
    name is; it was rewritten into its spellings and answered with ``Styles``' definition."""
    write_tree(
        tmp_path,
        {
            "theme/styles.py": "class Styles:\n    bold = True\n\n\ndef styled(text):\n"
            "    return text\n",
            "app/render.py": "from theme.styles import Styles\n\n\ndef render():\n"
            "    return Styles()\n",
            "app/cli.py": "from theme.styles import Styles\n",
        },
    )
    got = _answer(tmp_path, "where is Styles used?")
    assert set(got["sites"]) == {("app/render.py", 1), ("app/render.py", 5), ("app/cli.py", 1)}
    assert ("theme/styles.py", 1) not in got["sites"]  # its definition is no use


DOTTED = {
    "prob/__init__.py": "from prob.primitives import sample\n",
    "prob/primitives.py": "def sample(name, fn):\n    return fn\n",
    "models/a.py": (
        "import prob\n\n\ndef model(dist):\n    x = prob.sample('x', dist)\n"
        "    y = prob.sample('y', dist)\n    return dist.sample() + x + y\n"
    ),
    "models/b.py": (
        "from prob import sample\n\n\ndef guide(d):\n    return d.sample(), d.sample()\n"
    ),
    "dists/normal.py": (
        "class Normal:\n    def sample(self):\n        return 0\n\n"
        "    def rsample(self):\n        return self.sample() + self.sample()\n"
    ),
}


def test_a_dotted_name_is_answered_by_the_uses_through_its_owner(tmp_path: Path) -> None:
    """ "where is prob.sample used?" asks for ``prob.sample(...)`` and the imports of
    ``sample`` from ``prob``, not every ``.sample`` of the tree (a distribution's own
    method, called on it): the Answer counts and lists those, and names what was asked."""
    write_tree(tmp_path, DOTTED)
    got = _answer(tmp_path, "where is prob.sample used?")
    assert sorted(got["sites"]) == [
        ("models/a.py", 5),
        ("models/a.py", 6),
        ("models/b.py", 1),
        ("prob/__init__.py", 1),
    ], got
    run = run_cq("search", "where is prob.sample used?", "--root", str(tmp_path), "--no-semantic")
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith("**Answer:** 4 uses of `prob.sample` (defined at"), run.stdout


def test_a_bare_use_counts_where_the_file_imports_it_from_the_owner(tmp_path: Path) -> None:
    """``from prob import sample`` then ``sample(...)``: a use of ``prob.sample``, as common
    in Python as ``prob.sample(...)``; a module's own ``sample(...)`` is not."""
    write_tree(
        tmp_path,
        {
            **DOTTED,
            "models/c.py": (
                "from prob import sample\n\n\ndef guide(d):\n    return sample('z', d)\n"
            ),
            "models/d.py": "def sample(x):\n    return x\n\n\ndef other():\n    return sample(1)\n",
        },
    )
    got = _answer(tmp_path, "where is prob.sample used?")
    assert ("models/c.py", 5) in got["sites"], got
    assert ("models/c.py", 1) in got["sites"], got
    assert not any(file == "models/d.py" for file, _ in got["sites"]), got
    assert len(got["sites"]) == 6, got


def test_the_definition_is_said_when_the_uses_fill_the_limit(tmp_path: Path) -> None:
    """A usage Answer says where the name is defined though its uses fill ``--limit``: the
    definition is kept in the last shown place ("where is Schema.load used?" printed no
    "(defined at ...)", the definition ranked beyond the limit); a name defined in several
    places names none of them."""
    calls = "".join(f"    r{i} = Store().put({i})\n" for i in range(6))
    tree = {
        "lib/store.py": "class Store:\n    def put(self, key):\n        return key\n",
        "app/use.py": f"from lib.store import Store\n\n\ndef run():\n{calls}",
    }
    write_tree(tmp_path, tree)
    ask = ("search", "where is Store.put used?", "--root", str(tmp_path), "--no-semantic")
    run = run_cq(*ask, "--limit", "3")
    assert run.returncode == 0, run.stderr
    head = run.stdout.split("\n\n")[1].splitlines()[0]
    assert head == "**Answer:** 6 uses of `Store.put` (defined at `lib/store.py:2:8`), 2 shown:"
    one = run_cq(*ask, "--limit", "1").stdout.split("\n\n")[1].splitlines()[0]
    assert one == "**Answer:** 6 uses of `Store.put`, 1 shown:"  # a use, not the definition
    write_tree(tmp_path, {"lib/other.py": "class Store:\n    def put(self, key):\n        pass\n"})
    run = run_cq(*ask, "--limit", "3")
    assert "defined at" not in run.stdout.split("\n\n")[1], run.stdout


# a trait's implementations and a class's subclasses, among lines naming them otherwise
KINDS = {
    "src/traits.rs": "pub trait Datelike {\n    fn year(&self) -> i32;\n}\n",
    "src/date.rs": (
        "use crate::traits::Datelike;\n\npub struct Date;\n\n"
        "impl Datelike for Date {\n    fn year(&self) -> i32 {\n        1\n    }\n}\n\n"
        "pub fn first<D: Datelike>(d: &D) -> i32 {\n    d.year()\n}\n"
    ),
    "src/time.rs": (
        "pub struct Time;\n\nimpl<Tz: Zone> crate::traits::Datelike for Time<Tz> {\n"
        "    fn year(&self) -> i32 {\n        2\n    }\n}\n"
    ),
    "pkg/fields.py": (
        "class Field:\n    pass\n\n\nclass Raw(Field):\n    pass\n\n\n"
        "class Nested(Mixin, Field):\n    pass\n\n\n"
        "def is_field(x):\n    return isinstance(x, Field)\n"
    ),
    "pkg/schema.py": "from pkg.fields import Field\n\n\ndef declared(attrs):\n    return Field\n",
}


@pytest.mark.parametrize(
    ("question", "sites"),
    [
        ("where is the Datelike trait implemented?", [("src/date.rs", 5), ("src/time.rs", 3)]),
        ("who implements Datelike?", [("src/date.rs", 5), ("src/time.rs", 3)]),
        ("what subclasses Field?", [("pkg/fields.py", 5), ("pkg/fields.py", 9)]),
        ("which classes inherit from Field?", [("pkg/fields.py", 5), ("pkg/fields.py", 9)]),
    ],
)
def test_implementors_and_subclasses_answer_who_implements_or_subclasses_it(
    tmp_path: Path, question: str, sites: list[tuple[str, int]]
) -> None:
    """No question read implementors or subclasses: "where is the Datelike trait
    implemented?" was answered by the trait, "what subclasses Field?" by a function whose
    name shares its words."""
    write_tree(tmp_path, KINDS)
    got = _answer(tmp_path, question)
    assert sorted(got["sites"]) == sites, got


def test_where_a_function_is_implemented_is_still_its_definition(tmp_path: Path) -> None:
    write_tree(tmp_path, KINDS)
    run = run_cq("search", "where is is_field implemented?", "--root", str(tmp_path))
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("\n\n")[1].startswith("**Answer:** `is_field` "), run.stdout
