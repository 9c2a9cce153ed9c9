"""The query read once (``cq.rewrite.understand``): how each shape of query is searched
(mode, the line rg gets), what it asks (intent, the name, callers) and whether it is
rewritten. A pure function: no tree, no subprocess."""

from __future__ import annotations

import pytest

from cq.errors import UsageError
from cq.model import SearchRequest
from cq.rewrite import question_of, understand

ISSUE = (
    "KeyError when loading a saved model\n"
    "\n"
    "Calling `load_archive` on an archive saved with 0.9 fails:\n"
    "  File 'allennlp/models/archival.py', line 230, in load_archive\n"
    "Where is the vocabulary called twice?\n"
)


@pytest.mark.parametrize(
    ("text", "mode", "typed", "intent"),
    [
        ("register", "identifier", "register", "definition"),
        ("ABCMeta.register", "identifier", "ABCMeta.register", "definition"),
        ("Arg::new", "identifier", "Arg::new", "definition"),
        ("  store.insert_call \n", "identifier", "  store.insert_call ", "definition"),
        ("foo()", "literal", "foo()", "text"),
        ("a+b", "literal", "a+b", "text"),
        ("(", "literal", "(", "text"),
        ("->", "literal", "->", "text"),
        ("\n\nparse_args\r\n\n", "identifier", "parse_args", "definition"),
    ],
)
def test_code_is_searched_as_typed(text: str, mode: str, typed: str, intent: str) -> None:
    q = understand(text)
    assert (q.mode, q.typed, q.intent) == (mode, typed, intent)
    assert q.text == text  # as asked, never replaced
    assert q.trigger is None and q.mode_requested is None
    assert q.named is (mode == "identifier")


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("how does `Arg::new` work?", "Arg::new"),
        ("what does Client.send do?", "Client.send"),
        ("where is `parse_args()` defined?", "parse_args"),
        ("what does self.run do?", "run"),
        ("where is S3Backend defined?", "S3Backend"),
    ],
)
def test_a_name_written_as_code_is_searched_as_that_name(text: str, name: str) -> None:
    q = understand(text)
    assert q.asked_name == name
    assert q.typed == name and q.mode == "identifier" and q.named
    assert q.intent == "definition" and q.trigger is None  # no rewrite guesses around it
    assert q.text == text


def test_a_name_asked_about_in_prose_is_rewritten_and_answered_by_its_definition() -> None:
    q = understand("where is Vocabulary defined?")
    assert q.about == frozenset({"Vocabulary"})
    assert q.intent == "definition" and q.asked_name is None
    assert q.trigger == "heuristic" and q.mode == "literal" and not q.named


def test_a_name_with_a_kind_word_beside_it_is_asked_about() -> None:
    """ "the EarlyStopping handler": a name written as code and a word saying what it is; a
    question about two plain words asks about no name."""
    q = understand("where's the EarlyStopping handler defined?")
    assert q.about == frozenset({"EarlyStopping"})
    assert understand("where is the Nested field class").about == frozenset({"Nested"})
    assert understand("where is the padding length defined?").about == frozenset()
    assert understand("how does the EarlyStopping handler work?").about == frozenset()


def test_a_callers_question_names_the_function_it_asks_about() -> None:
    q = understand("who calls build_graph?")
    assert q.callers and q.intent == "callers"
    assert "build_graph" in q.written
    assert q.asked_name == "build_graph" and not q.says_nothing
    # "who calls `Client.send`?" is searched as that name, its owner kept, and answered by
    # the calls (the intent stays callers)
    quoted = understand("who calls `Client.send`?")
    assert quoted.callers and quoted.intent == "callers" and quoted.asked_name == "Client.send"


@pytest.mark.parametrize("text", ["who calls?", "where is defined?", "callers"])
def test_a_question_with_nothing_to_look_for_says_nothing(text: str) -> None:
    assert understand(text).says_nothing
    assert not understand("who calls build_graph?").says_nothing


def test_a_pasted_issue_is_no_pattern_of_its_own_and_is_rewritten() -> None:
    q = understand(ISSUE)
    assert q.typed is None and q.intent == "issue" and q.trigger == "heuristic"
    # it says "called" on its fifth line: callers read anywhere (the ranking), but it is no
    # one-line callers question (the index, the offline rewriter)
    assert q.callers and q.intent != "callers"
    assert q.asked_name is None and not q.says_nothing and not q.named
    assert {"load_archive", "KeyError"} <= q.written


def test_the_request_says_how_to_search() -> None:
    literal = understand("how does `Arg::new` work?", mode="literal")
    assert literal.asked_name is None and literal.typed == "how does `Arg::new` work?"
    assert literal.mode == literal.mode_requested == "literal"
    forced = understand("register", rewrite=True)
    assert forced.trigger == "forced" and not forced.named
    kept = understand("how does the cache expire its entries", rewrite=False)
    assert kept.trigger is None
    assert understand("how does the cache expire its entries").trigger == "heuristic"


def test_a_regex_is_one_line() -> None:
    q = understand(r"fn \w+\(", mode="regex")
    assert q.mode == "regex" and q.typed == r"fn \w+\(" and not q.named
    with pytest.raises(UsageError, match="a regex query must be one line"):
        understand("fn a\nfn b", mode="regex")


def test_a_follow_up_is_read_with_its_switches() -> None:
    followed = question_of(SearchRequest(query="where is it called?", root=".", follow_up=True))
    assert followed.trigger == "heuristic" and followed.callers
    assert followed.follow_up and followed.refers_back and followed.context is None
    # the rewrite takes "it" from the Question, never from the request (cq.rewrite.run)
    told = SearchRequest(query="where is it called?", root=".", context="see `load_archive`")
    assert question_of(told).context == "see `load_archive`" and not question_of(told).follow_up


def test_a_questions_words_are_read_once_as_stems() -> None:
    """The words an Answer without the index compares a definition's name with
    (``cq.assemble.result``) are the Question's, stop words left out."""
    q = understand("how are buckets created?")
    assert q.stems == q.content == {"bucket", "creat"}
    assert understand("create_bucket").stems == frozenset()  # a name: its definition answers


def test_an_empty_query_is_refused_by_the_request_itself() -> None:
    """The CLI and the MCP tool build the same ``SearchRequest``; it alone says so."""
    for blank in ("", "  \n\t"):
        with pytest.raises(UsageError, match="empty query"):
            SearchRequest(query=blank, root=".")
    assert SearchRequest(query="", root=".", listing="files").query == ""  # --files: no query


@pytest.mark.parametrize(
    ("text", "uses"),
    [
        ("where is the suggestions module used", "uses"),
        ("where is the suggestions module imported?", "imports"),
    ],
)
def test_a_module_named_in_words_in_a_usage_question_is_that_name(text: str, uses: str) -> None:
    """A plain word with "module" after it is a name in a usage question; in a question
    about what code does it stays words (rewritten, answered by the code that does it)."""
    q = understand(text)
    assert (q.intent, q.asked_name, q.uses) == ("usage", "suggestions", uses)
    q = understand("how does the parser module work")
    assert q.asked_name is None and q.intent == "question"


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("where is Styles used?", ("usage", "Styles", "uses")),
        ("Where is Styles imported in the builder?", ("usage", "Styles", "imports")),
        # its definition: the rewrite reads its spellings; JSON is no name of a class's shape
        ("where is Vocabulary defined?", (None, None)),
        ("where is JSON used?", (None, None)),
        ("where are Styles and Colors used?", (None, None)),
    ],
)
def test_a_capitalized_word_in_a_usage_question_is_its_name(text: str, asked: tuple) -> None:
    q = understand(text)
    got = (q.intent, q.asked_name, q.uses) if len(asked) == 3 else (q.asked_name, q.uses)
    assert got == asked


TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/home/me/app.py", line 12, in <module>\n'
    '    client.put_object(Bucket="b")\n'
    "botocore.errorfactory.NoSuchBucket: An error occurred (NoSuchBucket) when calling the "
    "PutObject operation: The specified bucket does not exist\n"
)


def test_a_traceback_pasted_alone_is_read_for_its_last_message_and_an_issue_is_not() -> None:
    """A traceback pasted alone is about the error its last line says (searched as a phrase
    when its frames are not in the tree, ``cq.ladder``); an issue quoting one after its
    prose says more than that line, and is read whole."""
    message = (
        "An error occurred (NoSuchBucket) when calling the PutObject operation: "
        "The specified bucket does not exist"
    )
    assert understand(TRACEBACK).raised == message
    assert understand("\n" + TRACEBACK).raised == message
    assert understand("Uploads fail after the bucket was renamed\n\n" + TRACEBACK).raised is None
    short = TRACEBACK.rsplit("\n", 2)[0] + "\nKeyError: 'b'\n"  # no message to search
    assert understand(short).raised is None
