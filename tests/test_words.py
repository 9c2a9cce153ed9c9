"""The one stop-word list and the one stemmer (``cq.rewrite.words``), on words people type
in questions: the rewriter and the index read them the same way."""

from __future__ import annotations

import pytest

from cq.index.words import prose_words
from cq.rewrite import FUNCTION_WORDS, base_forms, derived_forms, stem
from cq.rewrite.words import STOP_WORDS


def test_function_words_are_the_first_grade_of_the_stop_words() -> None:
    assert FUNCTION_WORDS < STOP_WORDS
    # words code names are spelled with are stop words for a rewrite, not for the index
    for word in ("is", "get", "to", "in", "not"):
        assert word in STOP_WORDS and word not in FUNCTION_WORDS


def test_a_question_asks_the_index_for_its_content_words() -> None:
    asked = prose_words("How are the nested fields deserialized when is_valid is false?")
    assert asked == ["nested", "fields", "deserialized", "is_valid", "is", "valid", "is", "false"]


@pytest.mark.parametrize(
    ("typed", "forms"),
    [
        ("rendered", ("render", "rendere")),
        ("parsing", ("pars", "parse")),
        ("stopped", ("stopp", "stoppe", "stop")),
        ("entries", ("entry",)),
        ("copied", ("copy",)),
        ("caches", ("cach", "cache")),
        ("settings", ("setting",)),
        ("using", ("use",)),
        ("handlers", ("handler",)),
    ],
)
def test_base_forms_spell_the_name_code_gives_the_base(typed: str, forms: tuple[str, ...]) -> None:
    assert base_forms(typed) == forms
    assert base_forms(typed.capitalize()) == forms


@pytest.mark.parametrize(
    "typed", ["properly", "status", "analysis", "class", "render", "is_valid", "bug", "utf8"]
)
def test_words_that_are_no_inflection_have_no_base_forms(typed: str) -> None:
    assert base_forms(typed) == ()


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("rendered", "render"),
        ("inserted", "insert"),
        ("edges", "edge"),
        ("validation", "validate"),
        ("mapping", "map"),
        ("written", "write"),
        ("entries", "entry"),
        ("suggestions", "suggest"),
        ("selection", "selected"),
        ("compression", "compress"),
        ("deletion", "delete"),
    ],
)
def test_stem_is_the_key_two_spellings_share(one: str, other: str) -> None:
    assert stem(one) == stem(other)


def test_a_base_form_shares_the_stem_of_its_word() -> None:
    """One stemmer: the spelling the index is asked for and the key the rewriter compares
    meet (the base's own spelling is one of the forms)."""
    for typed in ("rendered", "parsing", "stopped", "entries", "caches", "handlers"):
        assert stem(typed) in {stem(form) for form in base_forms(typed)}


@pytest.mark.parametrize(
    ("typed", "spelled"),
    [
        ("improving", "improvement"),
        ("validated", "validation"),
        ("allocated", "allocation"),
        ("created", "creation"),
        ("estimated", "estimation"),
        ("suggest", "suggestion"),
        ("deleted", "deletion"),
    ],
)
def test_a_word_asks_for_its_other_spellings(typed: str, spelled: str) -> None:
    """The index's body words are not stemmed: a question asks for the nouns ``stem`` reads
    as its verb, and for no other word (an agent noun is one: "trainer")."""
    forms = derived_forms(typed)
    assert spelled in forms
    assert all(stem(form) == stem(typed) for form in forms)
    assert "trainer" not in derived_forms("training") and derived_forms("bug") == ()
