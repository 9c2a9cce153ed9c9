"""The five Python enrichment stages on real parses of fixture files, in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_tree
from enrich_hits import enrich, enrich_one, finding_at

from cq.model import Binding, FunctionFacts, ImportFacts

MOD = """\
from __future__ import annotations

import os.path as osp
from typing import TYPE_CHECKING

from . import sibling
from ..core import helper as assist, other

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
else:
    from typing import Any


class Outer:
    class Inner:
        @staticmethod
        @functools.cache
        async def stream(self, n: int) -> AsyncIterator[int]:
            await self.ready()
            for i in range(n):
                yield i
            self.registry.register(osp.join("a", "b"))

    def plain(self, value):
        return assist(value) + other


Outer.plain(None, osp.sep)
"""

BROKEN = """\
def good(x):
    return register(x)


def bad(x):
    return x +


def broken(:
    pass
"""


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(
        tmp_path_factory.mktemp("py"), {"pkg/sub/mod.py": MOD, "pkg/broken.py": BROKEN}
    )


def test_decorated_async_generator_method_in_nested_class(root: Path) -> None:
    e = enrich_one(root, "pkg/sub/mod.py", "stream", "async def")
    assert e.status == "applied"
    assert e.construct == "function_def"
    assert e.signature == "async def stream(self, n: int) -> AsyncIterator[int]:"
    assert e.decorators == ("staticmethod", "functools.cache")
    assert e.class_context == "Inner" and e.scope_chain == ("Outer", "Inner")
    assert e.function == FunctionFacts(
        is_async=True, is_generator=True, awaits=1, yields=1, returns_value=False
    )
    assert e.agreement is not None and e.agreement.status == "partial"
    assert e.stages is not None
    assert (e.stages.ast_grep, e.stages.python_ast, e.stages.tree_sitter) == (
        "applied",
        "applied",
        "applied",
    )
    assert e.stages.imports is None and e.stages.libcst is None  # do not apply to a def


def test_method_call_on_attribute(root: Path) -> None:
    e = enrich_one(root, "pkg/sub/mod.py", "register", "self.registry.register")
    assert e.construct == "call"
    assert e.call is not None
    assert (e.call.target, e.call.receiver, e.call.method) == (
        "self.registry.register",
        "self.registry",
        "register",
    )
    assert e.scope_chain == ("Outer", "Inner", "stream") and e.class_context == "Inner"
    assert e.function is None and e.import_ is None
    assert e.stages is not None and e.stages.libcst is None  # self.x: nothing to resolve
    assert e.agreement is not None and e.agreement.sources == ("ast_grep", "tree_sitter")


def test_libcst_runs_for_names_and_all_three_agree(root: Path) -> None:
    e = enrich_one(root, "pkg/sub/mod.py", "assist", "return assist")
    assert e.construct == "call" and e.call is not None and e.call.target == "assist"
    assert e.stages is not None and e.stages.libcst == "applied"
    assert e.agreement is not None and e.agreement.status == "full"
    assert e.scope_chain == ("Outer", "plain") and e.class_context == "Outer"


def test_aliased_import_resolves_through_libcst(root: Path) -> None:
    use = enrich_one(root, "pkg/sub/mod.py", "osp", "osp.join")
    assert use.resolution is not None
    assert use.resolution.import_alias_chain == ("osp", "os.path")
    assert use.resolution.qualified_names == ("os.path",)
    assert use.resolution.bindings == (Binding(kind="import", line=3),)
    joined = enrich_one(root, "pkg/sub/mod.py", "join", "osp.join")
    assert joined.resolution is not None and joined.resolution.qualified_names == ("os.path.join",)
    assert joined.call is not None and joined.call.receiver == "osp"

    statement = enrich_one(root, "pkg/sub/mod.py", "osp", "import os.path")
    assert statement.construct == "import"
    assert statement.import_ == ImportFacts(
        module="os.path", names=("os.path as osp",), alias="osp"
    )


def test_relative_imports(root: Path) -> None:
    dot = enrich_one(root, "pkg/sub/mod.py", "sibling", "import sibling")
    assert dot.import_ == ImportFacts(module=None, names=("sibling",), level=1)
    assert dot.resolution is not None and dot.resolution.import_alias_chain == (
        "sibling",
        ".sibling",
    )
    two = enrich_one(root, "pkg/sub/mod.py", "helper", "import helper")
    assert two.import_ == ImportFacts(
        module="core", names=("helper as assist", "other"), alias="assist", level=2
    )
    assert two.resolution is not None
    assert two.resolution.import_alias_chain == ("assist", "..core.helper")
    use = enrich_one(root, "pkg/sub/mod.py", "assist", "return assist")
    assert use.resolution is not None
    assert use.resolution.bindings == (Binding(kind="import", line=7),)
    assert use.resolution.import_alias_chain == ("assist", "..core.helper")


def test_a_module_path_in_a_from_import_skips_libcst(root: Path) -> None:
    """``abc`` in ``from collections.abc import X`` binds nothing: no LibCST parse for it."""
    path = enrich_one(root, "pkg/sub/mod.py", "abc", "collections.abc import")
    assert path.import_ is not None and path.import_.module == "collections.abc"
    assert path.stages is not None and path.stages.libcst is None
    assert path.resolution is None
    name = enrich_one(root, "pkg/sub/mod.py", "AsyncIterator", "import AsyncIterator")
    assert name.stages is not None and name.stages.libcst == "applied"


def test_type_checking_imports(root: Path) -> None:
    guarded = enrich_one(root, "pkg/sub/mod.py", "AsyncIterator", "import AsyncIterator")
    assert guarded.import_ is not None and guarded.import_.type_checking is True
    assert guarded.import_.module == "collections.abc"
    other = enrich_one(root, "pkg/sub/mod.py", "Any", "import Any")
    assert other.import_ is not None and other.import_.type_checking is False
    annotation = enrich_one(root, "pkg/sub/mod.py", "AsyncIterator", "-> AsyncIterator")
    assert annotation.construct == "annotation"
    assert annotation.resolution is not None
    assert annotation.resolution.qualified_names == ("collections.abc.AsyncIterator",)


def test_failing_stages_degrade_alone(root: Path) -> None:
    """ast and LibCST cannot parse the file; ast-grep and tree-sitter still give their fields."""
    e = enrich_one(root, "pkg/broken.py", "register", "return register")
    assert e.status == "degraded"
    assert e.stages is not None
    assert e.stages.ast_grep == "applied" and e.stages.tree_sitter == "applied"
    assert e.stages.libcst == "degraded" and e.stages.python_ast is None  # not a def
    assert [r.split(":")[0] for r in e.degrade_reasons] == ["libcst"]
    assert e.degrade_reasons[0].startswith("libcst: SyntaxError")
    assert e.construct == "call" and e.call is not None and e.call.target == "register"
    assert e.scope_chain == ("good",)
    # its own statement parses: the file's syntax errors elsewhere do not touch it, unsaid
    assert e.parse_quality is None
    assert e.resolution is None and e.agreement is not None
    assert e.agreement.sources == ("ast_grep", "tree_sitter")

    # A sound def in a broken file: its own source parses, so the ast stage still applies.
    good = enrich_one(root, "pkg/broken.py", "good", "def good")
    assert good.stages is not None and good.stages.python_ast == "applied"
    assert good.function is not None and good.function.returns_value is True

    # a hit whose statement does not parse: read in the file's tree, its quality said
    inside = enrich_one(root, "pkg/broken.py", "x", "return x +")
    assert inside.parse_quality is not None and inside.parse_quality.hit_in_error is True
    assert inside.parse_quality.error_nodes + inside.parse_quality.missing_nodes >= 1
    assert inside.scope_chain == ("bad",)

    definition = enrich_one(root, "pkg/broken.py", "bad", "def bad")
    assert definition.parse_quality is not None
    assert definition.parse_quality.hit_in_error is False
    assert definition.stages is not None and definition.stages.python_ast == "degraded"
    assert definition.degrade_reasons[0].startswith("python_ast: SyntaxError")
    assert definition.signature is not None and definition.signature.startswith("def bad(x):")
    assert definition.function is None


def test_decorator_is_outside_the_function_it_decorates(root: Path) -> None:
    """Found by a stdlib sweep: LibCST nests decorators in the def, tree-sitter does not."""
    e = enrich_one(root, "pkg/sub/mod.py", "cache", "@functools.cache")
    assert e.construct == "decorator"
    assert e.scope_chain == ("Outer", "Inner")
    assert e.stages is not None and e.stages.libcst == "applied"
    assert e.agreement is not None and e.agreement.status == "full"


def test_libcst_runs_only_where_scopes_resolve_something(root: Path) -> None:
    local = enrich_one(root, "pkg/sub/mod.py", "plain", "Outer.plain(None")
    assert local.construct == "call" and local.call is not None
    assert local.call.receiver == "Outer"  # from tree-sitter's gap-fill
    assert local.stages is not None and local.stages.libcst is None
    imported = enrich_one(root, "pkg/sub/mod.py", "join", "osp.join")
    assert imported.stages is not None and imported.stages.libcst == "applied"


def test_libcst_hit_quota_is_a_count(root: Path) -> None:
    first = finding_at(root, "pkg/sub/mod.py", "osp", "osp.join")
    second = finding_at(root, "pkg/sub/mod.py", "assist", "return assist")
    one, two = enrich(root, first, second, libcst_hits=1)
    assert one.stages is not None and one.stages.libcst == "applied"
    assert two.stages is not None and two.stages.libcst == "skipped"
    assert two.status == "degraded" and two.degrade_reasons == ("libcst: hit quota",)
    assert two.call is not None and two.call.target == "assist"  # other stages unaffected


def test_type_alias_statement_is_a_definition(tmp_path: Path) -> None:
    write_tree(tmp_path, {"aliases.py": "type Pairs[T] = list[tuple[T, T]]\n"})
    e = enrich_one(tmp_path, "aliases.py", "Pairs", "type Pairs")
    assert (e.construct, e.signature) == ("type_alias", "type Pairs[T] = list[tuple[T, T]]")


def test_a_function_declared_to_return_none_is_not_said_to_return_a_value(
    tmp_path: Path,
) -> None:
    """ignite's ``def fire_event(self, event_name) -> None: return self._fire_event(...)``
    was reported as "returns a value" beside its own ``-> None``: the declaration is what
    the function gives its caller."""
    source = (
        "class Engine:\n"
        "    def fire_event(self, name) -> None:\n"
        "        return self._fire(name)\n"
        "\n"
        "    def state_of(self, name):\n"
        "        return self._fire(name)\n"
    )
    root = write_tree(tmp_path, {"engine.py": source})
    declared = enrich_one(root, "engine.py", "fire_event", "def fire_event")
    assert declared.function is not None and declared.function.returns_value is False
    unannotated = enrich_one(root, "engine.py", "state_of", "def state_of")
    assert unannotated.function is not None and unannotated.function.returns_value is True
