"""A message with names, lists and backticked values filled in finds its format string, and
one found verbatim only in a test is answered by the code formatting it.

"expected key text_field_embedder for SimpleTagger" was rewritten into guessed names (its
filled values are names, not numbers or quotes); "unused keys: ['a.b']" looked for the
brackets the program printed; a message a test asserts verbatim was answered with the test;
a message of two sentences the code writes as two strings, and one ending in a question
("did you mean 'x'?"), were rewritten into guessed names.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

TREE = {
    "pkg/params.py": (
        "def construct_arg(argument_name, class_name, params):\n"
        "    if argument_name not in params:\n"
        '        raise KeyError(f"expected key {argument_name} for {class_name}")\n\n\n'
        "def with_overrides(params, overrides):\n    unused = sorted(overrides)\n"
        '    raise ValueError(f"overrides dict contains unused keys: {unused}")\n\n\n'
        "def load_state(state, required):\n    for k in required:\n"
        "        if k not in state:\n"
        "            raise ValueError(\n"
        "                f\"Required user state attribute '{k}' is absent in provided state \"\n"
        "                f\"'{list(state)}'\"\n            )\n"
    ),
    # words of the messages name other things a rewrite would guess
    "pkg/models.py": (
        "class SimpleTagger:\n    def forward(self, text_field_embedder):\n"
        "        return text_field_embedder\n\n\n"
        "def expected_keys(params):\n    return list(params)\n"
    ),
    "pkg/queues.py": (
        "def add_permission(queue, action):\n    if action not in queue.actions:\n"
        "        raise ValueError(\n"
        '            f"Value SQS:{action} for parameter ActionName is invalid. "\n'
        '            "Reason: Only the queue owner is allowed to invoke this action."\n'
        "        )\n\n\n"
        "def look_up(name, names):\n    guess = min(names)\n"
        "    raise ValueError(f\"By '{name}', did you mean '{guess}'?\")\n"
    ),
    "pkg/owners.py": (
        "class QueueOwner:\n    def invoke_action(self, action):\n        return action\n\n\n"
        "def mean_guess(names):\n    return names\n"
    ),
    "tests/test_state.py": (
        "import pytest\n\nfrom pkg.params import load_state\n\n\ndef test_absent():\n"
        "    with pytest.raises(ValueError, match=\"Required user state attribute 'alpha' is "
        'absent in provided state"):\n'
        '        load_state({}, ["alpha"])\n'
    ),
}


def _answer(tree: Path, message: str) -> str:
    run = run_cq("search", message, "--root", str(tree), "--no-semantic")
    assert run.returncode == 0, run.stderr
    return run.stdout.split("\n\n")[1]


def test_names_filled_into_a_message(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    answer = _answer(tmp_path, "expected key text_field_embedder for SimpleTagger")
    assert answer.startswith("**Answer:** `construct_arg` raises it, at `pkg/params.py:3:"), answer


def test_a_list_filled_into_a_message(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    answer = _answer(tmp_path, "overrides dict contains unused keys: ['trainer.num_epochs']")
    assert answer.startswith("**Answer:** `with_overrides` raises it, at `pkg/params.py:8:"), answer


def test_a_message_only_a_test_writes_verbatim(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    answer = _answer(tmp_path, "Required user state attribute 'alpha' is absent in provided state")
    assert answer.startswith("**Answer:** `load_state` "), answer
    assert "`pkg/params.py:15:" in answer, answer


def test_a_message_of_several_sentences_written_in_pieces(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    answer = _answer(
        tmp_path,
        "Value SQS:SendMessages for parameter ActionName is invalid. "
        "Reason: Only the queue owner is allowed to invoke this action.",
    )
    assert answer.startswith("**Answer:** `add_permission` "), answer
    assert "`pkg/queues.py:4:" in answer or "`pkg/queues.py:5:" in answer, answer


def test_a_message_asking_a_question(tmp_path: Path) -> None:
    write_tree(tmp_path, TREE)
    answer = _answer(tmp_path, "By 'bilnear', did you mean 'bilinear'?")
    assert answer.startswith("**Answer:** `look_up` raises it, at `pkg/queues.py:11:"), answer


PIECES = {
    "data/fields.py": (
        "class ShapeError(ValueError):\n    pass\n\n\n"
        "class ArrayField:\n    def check(self, name, value, ndim):\n"
        "        if value.ndim != ndim:\n"
        "            raise ShapeError(\n"
        "                f\"Array '{name}' has bad shape - expected \"\n"
        '                f"{ndim} dimensions, got {value.ndim}."\n'
        "            )\n"
    ),
    "cli/checks.rs": (
        "fn assert_unique(cmd: &Command, name: &str) {\n"
        "    panic!(\n"
        "        \"Command {}: Argument names must be unique, but '{}' is in use by more "
        'than one argument",\n'
        "        cmd.name, name\n    );\n}\n"
    ),
    # the same words in a comment: no format string (the runs are looked for in strings)
    "data/notes.py": (
        "def expected_shape(array):\n"
        "    # has bad shape - expected dimensions are read from the schema\n"
        "    return array.shape\n"
    ),
}


def test_a_format_string_written_as_two_literals_on_two_lines(tmp_path: Path) -> None:
    """Its filled-in message is on no line whole: the longest constant run inside a string
    finds it (before, the message was rewritten into guessed names)."""
    write_tree(tmp_path, PIECES)
    answer = _answer(
        tmp_path, "Array 'feat_dynamic_real' has bad shape - expected 2 dimensions, got 1."
    )
    assert answer.startswith("**Answer:** `ArrayField.check` "), answer
    assert "`data/fields.py:9:" in answer, answer


def test_a_message_with_a_plain_word_filled_in(tmp_path: Path) -> None:
    """ "myapp" filled into "Command {}: ..." looks like any other word of the message: its
    other run, inside a string, finds the format string."""
    write_tree(tmp_path, PIECES)
    answer = _answer(
        tmp_path,
        "Command myapp: Argument names must be unique, but 'verbose' is in use by more than "
        "one argument",
    )
    assert answer.startswith("**Answer:** `assert_unique` "), answer
    assert "`cli/checks.rs:3:" in answer, answer


PLAIN = {
    "db/table.py": (
        "from db.errors import InvalidAttributeType\n\n\n"
        "class Table:\n    def put_item(self, item):\n"
        "        if self.range_key not in item:\n"
        "            raise ValueError(\n"
        '                f"One or more parameter values were invalid: Missing the key '
        '{self.range_key} in the item"\n'
        "            )\n"
        "        if not isinstance(item[self.range_key], str):\n"
        "            raise InvalidAttributeType(self.range_key, 'S', 'N')\n"
    ),
    "db/errors.py": (
        "class InvalidAttributeType(ValueError):\n"
        '    msg = "One or more parameter values were invalid: Type mismatch for key {} '
        'expected: {} actual: {}"\n\n'
        "    def __init__(self, name, expected, actual):\n"
        "        super().__init__(self.msg.format(name, expected, actual))\n\n\n"
        "class KeyTooLarge(ValueError):\n"
        '    msg = "One or more parameter values were invalid: Size of the key is too large"\n'
    ),
    # the words of the messages, as names a rewrite would guess
    "db/keys.py": (
        "def missing_key_item(item, key):\n    return key not in item\n\n\n"
        "def type_mismatch_key(expected, actual):\n    return expected != actual\n"
    ),
    "tests/test_table.py": (
        "def test_wrong_type(table):\n"
        '    assert str(table.error) == "One or more parameter values were invalid: Type '
        'mismatch for key id expected: S actual: N"\n'
    ),
}


def test_a_message_filled_with_plain_words_finds_its_longest_run(tmp_path: Path) -> None:
    """ "sk" filled into "Missing the key {} in the item" is a word like the others: the
    message is nowhere whole, and the longest of its heads found in a string (not the lead-in
    every message of the module shares) is where the code writes it (before, the message
    was rewritten into guessed names)."""
    write_tree(tmp_path, PLAIN)
    answer = _answer(
        tmp_path, "One or more parameter values were invalid: Missing the key sk in the item"
    )
    assert answer.startswith("**Answer:** `Table.put_item` "), answer
    assert "`db/table.py:8:" in answer, answer


def test_a_message_only_a_test_writes_with_plain_words_filled_in(tmp_path: Path) -> None:
    """Found whole only in a test asserting it, the message is answered by the format string
    its longest head is found in, not by the test."""
    write_tree(tmp_path, PLAIN)
    answer = _answer(
        tmp_path,
        "One or more parameter values were invalid: Type mismatch for key id expected: S actual: N",
    )
    assert answer.startswith("**Answer:** `InvalidAttributeType` raises it"), answer
    assert "`db/errors.py:2:" in answer, answer


# A command-line tool prints "error: " before the message its format string writes (clap,
# rustc, git); its tests assert the whole line.
LABELLED = {
    "src/format.rs": (
        "pub fn write_error(styled: &mut String, kind: Kind, invalid_arg: &str) -> bool {\n"
        "    match kind {\n        Kind::UnknownArgument => {\n"
        "            let _ = write!(\n                styled,\n"
        "                \"unexpected argument '{invalid}{invalid_arg}{invalid:#}' found\",\n"
        "            );\n            true\n        }\n        _ => false,\n    }\n}\n"
    ),
    "tests/errors.rs": (
        "#[test]\nfn unknown_argument_is_reported() {\n"
        "    let expected = \"error: unexpected argument 'unused' found\\n\";\n"
        '    assert_eq!(run(&["unused"]), expected);\n}\n'
    ),
}


@pytest.mark.parametrize(
    "args",
    [
        ("error: unexpected argument '--foo' found",),  # pasted from the terminal
        ("-F", "error: unexpected argument"),  # the words before the value, as text
    ],
    ids=["filled-in", "literal"],
)
def test_a_message_pasted_with_its_printers_label_is_answered_by_the_code_writing_it(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    write_tree(tmp_path, LABELLED)
    run = run_cq("search", *args, "--root", str(tmp_path), "--no-semantic")
    assert run.returncode == 0, run.stderr
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith("**Answer:** `write_error` writes it, at `src/format.rs:6:"), answer


def test_a_log_line_pasted_with_its_level_and_logger_is_answered_by_the_code_logging_it(
    tmp_path: Path,
) -> None:
    """Python logging's default format puts "WARNING:<logger>:" before the message."""
    write_tree(
        tmp_path,
        {
            "app/db.py": (
                "import logging\n\nlog = logging.getLogger(__name__)\n\n\n"
                "def acquire(pool):\n    if not pool.free:\n"
                '        log.warning("connection pool is exhausted")\n    return pool.take()\n'
            ),
            "app/pool.py": "class Pool:\n    def exhausted(self):\n        return not self.free\n",
        },
    )
    answer = _answer(tmp_path, "WARNING:app.db:connection pool is exhausted")
    assert answer.startswith("**Answer:** `acquire` "), answer
    assert "`app/db.py:8:" in answer, answer


@pytest.mark.parametrize(
    "pasted",
    [
        "thread 'main' panicked at 'invalid or out-of-range datetime', src/main.rs:4:5",
        "thread 'main' panicked at src/main.rs:4:5:\ninvalid or out-of-range datetime\n"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
    ],
    ids=["before-1.73", "since-1.73"],
)
def test_a_rust_panic_is_answered_by_the_code_that_panics(tmp_path: Path, pasted: str) -> None:
    """Rust printed "thread 'main' panicked at '<message>', <file>:<line>:<col>" before 1.73,
    and the place, the message and a hint on three lines since."""
    write_tree(
        tmp_path,
        {
            "src/datetime.rs": (
                "impl NaiveDateTime {\n    pub fn from_timestamp(secs: i64) -> NaiveDateTime {\n"
                "        expect(Self::from_timestamp_opt(secs),\n"
                '            "invalid or out-of-range datetime")\n'
                "    }\n}\n"
            ),
            "src/lib.rs": "pub fn invalid_datetime(range: Range) -> bool {\n    range.out()\n}\n",
        },
    )
    answer = _answer(tmp_path, pasted)
    assert answer.startswith("**Answer:** `NaiveDateTime::from_timestamp` "), answer
    assert "`src/datetime.rs:4:" in answer, answer


@pytest.mark.parametrize(
    ("impl", "said"),
    [("impl Date {", "Date::from_ymd"), ("impl Build for Date {", "Date::from_ymd")],
    ids=["inherent", "trait"],
)
def test_a_rust_method_writing_a_message_is_named_as_rust_names_it(
    tmp_path: Path, impl: str, said: str
) -> None:
    """chrono's panic message was answered "`impl NaiveDate::from_ymd` writes it", and JSON's
    ``answer.name`` said the same: no name an agent can search. The method is
    ``NaiveDate::from_ymd``."""
    source = (
        f"pub struct Date;\n\n{impl}\n"
        "    fn from_ymd(y: i32) -> Date {\n"
        '        expect(y > 0, "invalid or out-of-range date");\n'
        "        Date\n    }\n}\n"
    )
    write_tree(tmp_path, {"src/date.rs": source})
    query = "invalid or out-of-range date"
    run = run_cq("search", query, "--root", str(tmp_path), "--no-semantic")
    assert run.returncode == 0, run.stderr
    answer = run.stdout.split("\n\n")[1]
    assert answer.startswith(f"**Answer:** `{said}` writes it, at `src/date.rs:5:"), answer
    data = run_cq("search", query, "--root", str(tmp_path), "--no-semantic", "--format", "json")
    assert data.json()["answer"]["name"] == said


# clap prints a hint under its error as "tip: " before the message its format string writes;
# the tests assert the whole line.
TIPPED = {
    "src/error/format.rs": (
        "pub fn write_tip(styled: &mut String, arg: &str) {\n"
        "    let _ = write!(\n        styled,\n"
        "        \"to pass '{bad}{arg}{bad:#}' as a value, use '{good}-- {arg}{good:#}'\",\n"
        "    );\n}\n"
    ),
    "tests/errors.rs": (
        "#[test]\nfn trailing_is_suggested() {\n"
        "    let expected = \"  tip: to pass '--foo' as a value, use '-- --foo'\\n\";\n"
        '    assert_eq!(run(&["--foo"]), expected);\n}\n'
    ),
}


def test_a_tip_pasted_with_its_label_is_answered_by_the_code_writing_it(tmp_path: Path) -> None:
    write_tree(tmp_path, TIPPED)
    answer = _answer(tmp_path, "tip: to pass '--foo' as a value, use '-- --foo'")
    expected = "**Answer:** `write_tip` writes it, at `src/error/format.rs:4:"
    assert answer.startswith(expected), answer


RUSTC = {
    "src/builder/arg.rs": (
        "pub struct Arg {\n    name: String,\n}\n\nimpl Arg {\n"
        "    pub fn new(name: &str) -> Self {\n        Arg { name: name.to_owned() }\n    }\n}\n"
    ),
    "src/derive/item.rs": (
        "pub struct Item;\n\nimpl Item {\n"
        "    fn push_method(&mut self, name: &str, arg: &str) -> bool {\n"
        "        name.is_empty() && arg.is_empty()\n    }\n}\n"
    ),
}


@pytest.mark.parametrize(
    "pasted",
    [
        "error[E0599]: no method named `foo` found for struct `Arg` in the current scope",
        "error[E0599]: no method named `foo` found for reference `&Arg` in the current scope\n"
        " --> src/main.rs:4:7\n  |\n4 |     a.foo();\n  |       ^^^ method not found in `&Arg`\n",
    ],
    ids=["one-line", "with-its-snippet"],
)
def test_a_rustc_error_is_answered_by_the_type_it_names(tmp_path: Path, pasted: str) -> None:
    """rustc's words are the compiler's, in no file of the tree: the type the error names
    (the method was looked for on it) is what to open, not a function sharing its words."""
    write_tree(tmp_path, RUSTC)
    answer = _answer(tmp_path, pasted)
    assert answer.startswith("**Answer:** `Arg` — `pub struct Arg` defined at "), answer
    assert "`src/builder/arg.rs:1:11`" in answer, answer
