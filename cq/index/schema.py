"""The index's schema and analyzer: code tokenized the way people write about it.

Names, signatures and paths are split in Python (``words.py``) into each identifier whole
and its subwords; bodies (identifiers, comments and strings) and docs go through tantivy's
simple tokenizer, lower-cased, which splits snake_case and keeps CamelCase whole; the query
is split like the names, so it meets both. Tantivy's regex tokenizer could split CamelCase
inside bodies too, but it (and the English stemmer) made a first build several times slower
than the simple one, past the first-build budget (``python -m bench.index_speed``; figures:
bench/results/2026-11-29-figures-from-cq.md). Terms keep frequencies, not positions (no
phrase queries are asked): that keeps the index small.
"""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 4  # bump when fields, analyzers or documents change: a new index is built

CODE = "cq_code"
TEXT_FIELDS = ("path_words", "names", "sig", "doc", "body")


def build_schema() -> Any:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("path", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("kind", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("qualname", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_unsigned_field("line", stored=True)
    for name in TEXT_FIELDS:
        builder.add_text_field(name, tokenizer_name=CODE, index_option="freq")
    return builder.build()


def register_analyzers(index: Any) -> None:
    """Tantivy keeps analyzers per process: register them on every opened index."""
    import tantivy

    code = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.remove_long(40))
        .build()
    )
    index.register_tokenizer(CODE, code)
