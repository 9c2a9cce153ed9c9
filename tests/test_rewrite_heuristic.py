"""When to rewrite: code-like queries pass through, questions and issue texts are rewritten."""

from __future__ import annotations

import pytest

from cq.rewrite import should_rewrite

ISSUE = """DateTime fields break inside List

```python
from marshmallow import fields, Schema

class MySchema(Schema):
    times = fields.List(fields.DateTime())
```

```
Traceback (most recent call last):
  File "test-mm.py", line 8, in <module>
    s = MySchema()
  File "/site-packages/marshmallow/fields.py", line 1117, in _bind_to_schema
    or getattr(schema.opts, self.SCHEMA_OPTS_VAR_NAME)
AttributeError: 'List' object has no attribute 'opts'
```
"""


@pytest.mark.parametrize(
    "query",
    [
        "how are edges inserted into the graph?",
        "what function handles authentication",
        "where does the config file get loaded",
        "how does the system handle errors in the pipeline",
        "how are spans converted to byte offsets",
        "find the code that retries failed uploads",
        "how does the ProgressBar update?",  # asked: a question word first, a "?" last
        "what does Schema.load return?",
        ISSUE,
        "Schema.load crashes on nested fields\n\nWhen I load a nested schema it fails.\n",
    ],
)
def test_natural_language_is_rewritten(query: str) -> None:
    assert should_rewrite(query) is True


@pytest.mark.parametrize(
    "query",
    [
        "insert_call",
        "insertCall",
        "InsertCall",
        "store.insert_call",
        "graph edges",
        "search",
        "",
        "   ",
        "Vec::new",
        "foo()",
        "store.insert_call(edge)",
        "def insert_call",
    ],
)
def test_code_like_queries_are_not(query: str) -> None:
    assert should_rewrite(query) is False


def test_a_reference_back_needs_context() -> None:
    assert should_rewrite("where is it called?", has_context=True) is True
    assert should_rewrite("it", has_context=True) is False


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("how does `Arg::new` work?", "Arg::new"),
        ("what does Client.send do?", "Client.send"),
        ("where is `SlidingWindowInferer.__call__` defined?", "SlidingWindowInferer.__call__"),
        ("how is `parse_args()` used?", "parse_args"),  # its uses: a usage question
        ("what does self.run do?", "run"),  # the method, whoever's self it is
        ("how does `Arg::new` parse flags?", None),  # says more than the name
        ("how is vocabulary used?", None),  # a plain word: rewritten (names_asked_about)
        ("how is Vocabulary used?", "Vocabulary"),  # capitalized as only a name is: its uses
        ("who calls `Client.send`?", "Client.send"),  # searched as it, answered by the calls
        ("how does e.g. work?", None),  # prose, not a path
        ("Client.send", None),  # a query, not a question about one
        ("how do `a` and `b` differ?", None),
    ],
)
def test_the_name_a_question_asks_about_written_as_code(query: str, name: str | None) -> None:
    from cq.rewrite import understand

    assert understand(query).asked_name == name
