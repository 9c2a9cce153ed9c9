"""A dotted query without Pyrefly (the suite's default, ``CQ_SEMANTIC=0``): the last name is
searched too, the owner's definition leads, uses whose receiver names the owner come next,
and other owners' definitions of the name go below the uses. Real ``python -m cq`` runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

CLIENT = """\
class Client:
    def send(self, data: bytes) -> int:
        return len(data)

    def resend(self, data: bytes) -> int:
        return self.send(data)
"""
OTHER = """\
class Other:
    def send(self, text: str) -> None:
        print(text)


def send(text: str) -> None:
    print(text)


send("bare")
"""
USE = """\
from pkg.client import Client
from pkg.other import Other

other = Other()
other.send("text")
Client().send(b"payload")
http_client = Client()
http_client.send(b"more")
clients = [Client()]
clients[0].send(b"again")
"""
RUST = """\
pub struct Utc;
pub struct Local;

impl Local {
    pub fn now() -> u64 {
        Utc::now() + 1
    }
}

impl Utc {
    pub fn now() -> u64 {
        0
    }
}

pub fn stamp() -> u64 {
    Local::now() + Utc::now()
}
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "repo",
        {
            "pkg/__init__.py": "",
            "pkg/client.py": CLIENT,
            "pkg/other.py": OTHER,
            "pkg/use.py": USE,
            "src/time.rs": RUST,
        },
    )


def _places(root: Path, query: str) -> list[tuple[str, int, str]]:
    run = run_cq("search", query, "--root", str(root), "--format", "json", "--no-semantic")
    assert run.returncode == 0, run.stderr
    return [(f["file"], f["line"], f["category"]) for f in run.json()["findings"]]


def test_the_owners_definition_leads_and_its_uses_come_before_other_owners(tree: Path) -> None:
    places = _places(tree, "Client.send")
    assert places[0] == ("pkg/client.py", 2, "definition")
    mine = [
        places.index(("pkg/client.py", 6, "callsite")),  # self.send inside Client
        places.index(("pkg/use.py", 6, "callsite")),  # Client().send
        places.index(("pkg/use.py", 8, "callsite")),  # http_client.send
    ]
    other_call = places.index(("pkg/use.py", 5, "callsite"))  # other.send
    other_definition = places.index(("pkg/other.py", 2, "definition"))
    assert max(mine) < other_call < other_definition
    # a receiver cq cannot read stays a plain use; a call without one cannot be the method
    unread = places.index(("pkg/use.py", 10, "callsite"))  # clients[0].send
    bare = places.index(("pkg/other.py", 10, "callsite"))  # send("bare")
    assert max(mine) < unread < bare


def test_a_module_qualified_name_finds_the_function_in_that_module(tree: Path) -> None:
    places = _places(tree, "other.Other.send")
    assert places[0] == ("pkg/other.py", 2, "definition")
    assert places.index(("pkg/client.py", 2, "definition")) > places.index(
        ("pkg/use.py", 5, "callsite")
    )


def test_a_rust_path_finds_the_impls_fn(tree: Path) -> None:
    places = [p for p in _places(tree, "Utc::now") if p[0] == "src/time.rs"]
    assert places[0] == ("src/time.rs", 11, "definition")  # fn now in impl Utc
    utc_calls = [places.index(("src/time.rs", line, "callsite")) for line in (6, 17)]
    local_definition = places.index(("src/time.rs", 5, "definition"))
    assert max(utc_calls) < local_definition


def test_the_markdown_answer_is_the_owners_definition(tree: Path) -> None:
    run = run_cq("search", "Client.send", "--root", str(tree), "--no-semantic")
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith("**Answer:** `send`"), answer
    assert "defined at `pkg/client.py:2:8` in `Client`" in answer


def test_an_attribute_of_self_is_searched_as_written(tree: Path) -> None:
    run = run_cq("search", "self.send", "--root", str(tree), "--format", "json")
    assert run.json()["summary"]["patterns"] == ["identifier:self.send"]
    assert [(f["file"], f["line"]) for f in run.json()["findings"]] == [("pkg/client.py", 6)]
    dotted = run_cq("search", "Client.send", "--root", str(tree), "--format", "json").json()
    assert dotted["summary"]["patterns"] == ["identifier:Client.send", "identifier:send"]


def test_another_owners_definition_is_not_the_answer(tree: Path) -> None:
    run = run_cq("search", "Server.send", "--root", str(tree), "--format", "json")
    result = run.json()
    assert result["summary"]["primary"] is None
    assert {f["text"] for f in result["findings"]} >= {"send"}  # the last name was searched
    md = run_cq("search", "Server.send", "--root", str(tree)).stdout
    assert md.split("\n\n")[1].startswith("**No definition found.**"), md


def test_a_question_about_one_written_name_is_that_names_search(tree: Path) -> None:
    """ "how does `Client.send` work?" asks for the method itself: its search, not the
    rewriter's guesses at "work" (``Arg::new`` was dropped as a common last name and such a
    question found nothing)."""
    question = "how does `Client.send` work?"
    asked = run_cq("search", question, "--root", str(tree), "--format", "json", "--no-semantic")
    assert asked.returncode == 0, asked.stderr
    got = asked.json()["summary"]
    assert (got["query"], got["asked_name"], got["rewrite"]) == (question, "Client.send", None)
    assert _places(tree, question) == _places(tree, "Client.send")
    rust = [p for p in _places(tree, "what does Utc::now do?") if p[0] == "src/time.rs"]
    assert rust[0] == ("src/time.rs", 11, "definition")
    md = run_cq("search", question, "--root", str(tree), "--no-semantic").stdout
    assert "asked about `Client.send`: searched as that name" in md
    assert "defined at `pkg/client.py:2:8` in `Client`" in md.split("\n\n")[1]


def test_a_question_saying_more_than_the_name_is_rewritten(tree: Path) -> None:
    for args in (
        ["how does `Client.send` count bytes?"],
        ["how does `Client.send` work?", "--literal"],
    ):
        got = run_cq("search", *args, "--root", str(tree), "--format", "json").json()["summary"]
        assert got["asked_name"] is None, args
    rewritten = run_cq(
        "search", "how does `Client.send` count bytes?", "--root", str(tree), "--format", "json"
    ).json()["summary"]
    assert rewritten["rewrite"]["applied"], rewritten


@pytest.mark.parametrize("root_dir", ["", "src/"], ids=["flat", "src-layout"])
def test_a_packages_public_path_finds_what_a_module_inside_it_defines(
    tmp_path: Path, root_dir: str
) -> None:
    """``shop.core.Cart`` is how the package's users write it (its ``__init__`` re-exports
    ``Cart`` from ``shop/core/cart/model.py``): the class is the Answer, not "no definition"."""
    write_tree(
        tmp_path,
        {
            f"{root_dir}shop/__init__.py": "",
            f"{root_dir}shop/core/__init__.py": "from shop.core.cart.model import Cart\n",
            f"{root_dir}shop/core/cart/__init__.py": "",
            f"{root_dir}shop/core/cart/model.py": (
                "class Cart:\n    def add(self, item):\n        return item\n"
            ),
            f"{root_dir}shop/web/views.py": (
                "from shop.core import Cart\n\n\ndef show():\n    return Cart()\n"
            ),
        },
    )
    run = run_cq("search", "shop.core.Cart", "--root", str(tmp_path))
    assert run.returncode == 0, run.stderr
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith(
        f"**Answer:** `Cart` — `class Cart:` defined at `{root_dir}shop/core/cart/model.py:1:6`"
    ), answer


@pytest.mark.parametrize(
    "path", ["crate::builder::Command", "shop_core::builder::Command", "builder::Command"]
)
def test_a_rust_path_from_the_crates_root_finds_the_item_a_module_below_defines(
    tmp_path: Path, path: str
) -> None:
    """``builder/mod.rs`` re-exports ``Command`` from ``builder/command.rs``: the path from the
    crate's root (led by ``crate``, by the crate's directory, or by neither) finds it."""
    write_tree(
        tmp_path,
        {
            "shop_core/src/lib.rs": "pub mod builder;\n",
            "shop_core/src/builder/mod.rs": "mod command;\npub use self::command::Command;\n",
            "shop_core/src/builder/command.rs": (
                "pub struct Command {\n    name: String,\n}\n\n"
                "impl Command {\n    pub fn new(name: &str) -> Self {\n"
                "        Command { name: name.to_string() }\n    }\n}\n"
            ),
            "shop_cli/src/main.rs": (
                'use shop_core::builder::Command;\n\nfn main() {\n    Command::new("x");\n}\n'
            ),
        },
    )
    run = run_cq("search", path, "--root", str(tmp_path))
    assert run.returncode == 0, run.stderr
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith(
        "**Answer:** `Command` — `pub struct Command` defined at "
        "`shop_core/src/builder/command.rs:1:11`"
    ), answer


@pytest.mark.parametrize(
    ("path", "item"),
    [
        ("shop::Cart", "pub struct Cart"),
        ("crate::Cart", "pub struct Cart"),
        ("shop::model::Cart", "pub struct Cart"),
        ("shop::Cart::add", "pub fn add(&mut self, item: u32)"),
    ],
)
def test_a_rust_path_through_a_root_crates_name_finds_the_item(
    tmp_path: Path, path: str, item: str
) -> None:
    """A crate whose ``src/`` is the tree's own: its name is in no path, yet its users write
    ``shop::Cart`` (``lib.rs`` re-exports ``Cart`` from ``model.rs``), and its own code
    ``crate::Cart``. Both name the struct, as ``shop::model::Cart`` does, and
    ``shop::Cart::add`` its method."""
    write_tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "shop"\n',
            "src/lib.rs": "pub mod model;\npub mod shelf;\npub use model::Cart;\npub struct Tag;\n",
            "src/model.rs": (
                "pub struct Cart {\n    items: Vec<u32>,\n}\n\nimpl Cart {\n"
                "    pub fn add(&mut self, item: u32) {\n        self.items.push(item);\n    }\n}\n"
            ),
            "src/shelf.rs": "pub struct Shelf;\n\nimpl Shelf {\n    pub fn add(&self) {}\n}\n",
            "src/checkout.rs": "use crate::Cart;\n\npub fn pay(c: &Cart) {}\n",
            "tests/cart.rs": (
                "use shop::Cart;\n\n#[test]\nfn t() {\n    let _ = Cart { items: vec![] };\n}\n"
            ),
        },
    )
    run = run_cq("search", path, "--root", str(tmp_path))
    assert run.returncode == 0, run.stderr
    answer = run.stdout.split("\n\n")[1]
    name = path.rsplit("::", 1)[-1]
    assert answer.startswith(f"**Answer:** `{name}` — `{item}` defined at `src/model.rs:"), answer


@pytest.mark.parametrize("path", ["shop::Command", "shop::builder::Command"])
def test_a_rust_path_through_a_facade_crate_finds_its_workspace_crates_item(
    tmp_path: Path, path: str
) -> None:
    """A facade crate at the tree's root re-exports its workspace's implementation crate
    (``pub use shop_builder::*;``, as ``clap`` does ``clap_builder``): its users write
    ``shop::Command`` for the struct ``shop_builder/src/builder/command.rs`` defines."""
    write_tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "shop"\n\n[workspace]\nmembers = ["shop_builder"]\n',
            "src/lib.rs": "pub use shop_builder::*;\n",
            "shop_builder/src/lib.rs": "pub mod builder;\npub use crate::builder::Command;\n",
            "shop_builder/src/builder/mod.rs": "mod command;\npub use self::command::Command;\n",
            "shop_builder/src/builder/command.rs": ("pub struct Command {\n    name: String,\n}\n"),
            "examples/demo.rs": (
                "use shop::Command;\n\nfn main() {\n    let _c: Option<Command> = None;\n}\n"
            ),
        },
    )
    run = run_cq("search", path, "--root", str(tmp_path))
    assert run.returncode == 0, run.stderr
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith(
        "**Answer:** `Command` — `pub struct Command` defined at "
        "`shop_builder/src/builder/command.rs:1:11`"
    ), answer


@pytest.mark.parametrize("path", ["Weekday::Mon", "cal::Weekday::Mon"])
def test_a_rust_path_to_an_enum_variant_finds_the_variant(tmp_path: Path, path: str) -> None:
    """``Weekday::Mon`` names the variant ``Mon`` of ``enum Weekday``: its definition is the
    Answer, not one of the many ``Weekday::Mon`` written in a match."""
    write_tree(
        tmp_path,
        {
            "Cargo.toml": '[package]\nname = "cal"\n',
            "src/lib.rs": "pub mod weekday;\npub use weekday::Weekday;\n",
            "src/weekday.rs": "pub enum Weekday {\n    Mon = 0,\n    Tue,\n}\n",
            "src/parse.rs": (
                "use crate::Weekday;\n\npub fn day(n: u8) -> Option<Weekday> {\n"
                "    match n {\n        1 => Some(Weekday::Mon),\n"
                "        2 => Some(Weekday::Tue),\n"
                "        _ => None,\n    }\n}\n"
            ),
        },
    )
    run = run_cq("search", path, "--root", str(tmp_path))
    assert run.returncode == 0, run.stderr
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith(
        "**Answer:** `Mon` defined at `src/weekday.rs:2:4` in `Weekday` (src)\n"
        "```rust\n    Mon = 0,"
    ), answer


def test_a_rust_type_path_ending_with_the_owners_name_is_another_type(tmp_path: Path) -> None:
    """``TypedValueParser::parse(..)`` is no call of ``Parser::parse``: a Rust type path names
    that type, and no inheritance lets a longer name reach the owner's fn (clap's "who calls
    Parser::parse?" listed them, a suffix read as the owner)."""
    write_tree(
        tmp_path,
        {
            "src/parser.rs": "pub struct Parser;\n\nimpl Parser {\n"
            "    pub fn parse(n: u8) -> u8 {\n        n\n    }\n}\n",
            "src/typed.rs": "pub struct TypedValueParser;\n\nimpl TypedValueParser {\n"
            "    pub fn parse(n: u8) -> u8 {\n        n + 1\n    }\n}\n",
            "src/main.rs": "fn main() {\n    let a = Parser::parse(1);\n"
            "    let b = TypedValueParser::parse(2);\n    let _ = (a, b);\n}\n",
        },
    )
    run = run_cq("search", "who calls Parser::parse?", "--root", str(tmp_path), "--format", "json")
    data = run.json()
    calls = [
        (data["findings"][i]["file"], data["findings"][i]["line"]) for i in data["answer"]["calls"]
    ]
    assert calls == [("src/main.rs", 2)], data["answer"]
