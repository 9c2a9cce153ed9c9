"""Names inside questions kept whole, and what a question asks of them.

A name with a digit (``S3Backend``) is one name, not the words "s", "backend"; "where is X
imported?" and "where is X used?" are answered by the uses, not the definition; a callers
question naming the owner (``Alpha.build``) is about that owner's method, never another
class's, and a call passing keywords the definition does not take is another receiver's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cq, write_tree

pytestmark = pytest.mark.cli_forked  # what cq prints, not how it starts (forked_cli.py)

BACKENDS = {
    "svc/s3/models.py": (
        "class S3Backend:\n    def create_bucket(self, bucket_name, region_name):\n"
        "        return bucket_name\n"
    ),
    # many names about backends, which a rewrite of the question's words would find
    "svc/backends.py": (
        "def get_backend(name):\n    return BACKENDS[name]\n\n\n"
        "def list_backends():\n    return list(BACKENDS)\n\n\n"
        "def backend_defined(name):\n    return name in BACKENDS\n\n\nBACKENDS = {}\n"
    ),
    "svc/core/base_backend.py": (
        "class BaseBackend:\n    def reset_backend(self):\n        pass\n\n"
        "    def backend_where(self):\n        pass\n"
    ),
    "svc/s3/responses.py": (
        "from svc.s3.models import S3Backend\n\n\ndef backend() -> S3Backend:\n"
        "    return S3Backend()\n"
    ),
    "svc/s3/urls.py": "from svc.s3.models import S3Backend\n\nBACKEND = S3Backend\n",
}


def _answer(*argv: str) -> str:
    run = run_cq(*argv)
    assert run.returncode == 0, run.stderr
    return run.stdout.split("\n\n")[1]


def test_a_name_with_a_digit_is_answered_by_its_definition(tmp_path: Path) -> None:
    write_tree(tmp_path, BACKENDS)
    answer = _answer("search", "where is S3Backend defined?", "--root", str(tmp_path))
    assert answer.startswith("**Answer:** `S3Backend`"), answer
    assert "`svc/s3/models.py:1:6`" in answer


def test_an_import_question_is_answered_by_the_import_sites(tmp_path: Path) -> None:
    write_tree(tmp_path, BACKENDS)
    answer = _answer("search", "where is S3Backend imported?", "--root", str(tmp_path))
    assert answer.startswith("**Answer:** 2 imports of `S3Backend`"), answer
    assert "- `svc/s3/responses.py:1:26`" in answer and "- `svc/s3/urls.py:1:26`" in answer


def test_an_answer_counting_more_sites_than_it_lists_says_where_the_rest_are(
    tmp_path: Path,
) -> None:
    more = {f"svc/extra/m{i}.py": "from svc.s3.models import S3Backend\n" for i in range(3)}
    write_tree(tmp_path, {**BACKENDS, **more})
    answer = _answer("search", "where is S3Backend imported?", "--root", str(tmp_path))
    assert answer.startswith("**Answer:** 5 imports of `S3Backend`"), answer
    listed = [line for line in answer.splitlines() if line.startswith("- `")]
    assert len(listed) == 3, answer
    assert "- and 2 more among the findings below" in answer.splitlines(), answer


def test_a_usage_question_is_answered_by_the_uses(tmp_path: Path) -> None:
    write_tree(tmp_path, BACKENDS)
    answer = _answer("search", "where is S3Backend used?", "--root", str(tmp_path))
    assert answer.startswith("**Answer:** "), answer
    assert " uses of `S3Backend` (defined at `svc/s3/models.py:1:6`)" in answer.splitlines()[0]
    assert "- `svc/s3/models.py" not in answer  # its definition is no use


OWNERS = {
    "app/alpha.py": (
        "class Alpha:\n    @classmethod\n    def build(cls, spec):\n        return cls()\n\n"
        "    @classmethod\n    def rebuild(cls, spec):\n        return cls.build(spec)\n"
    ),
    "app/beta.py": (
        "class Beta:\n    @classmethod\n    def build(cls, spec):\n        return cls()\n\n"
        "    @classmethod\n    def rebuild(cls, spec):\n        return cls.build(spec)\n"
    ),
    "app/gamma.py": (
        "class Gamma:\n    @classmethod\n    def build(cls, spec):\n        return cls()\n\n"
        "    @classmethod\n    def again(cls, spec):\n        return cls.build(spec)\n"
    ),
    "app/run.py": (
        "from app.beta import Beta\n\n\ndef make(kind, spec):\n    Beta.build(spec)\n"
        "    return kind.build(spec)\n"
    ),
}


def test_a_callers_question_naming_the_owner_is_about_that_owner(tmp_path: Path) -> None:
    write_tree(tmp_path, OWNERS)
    answer = _answer("search", "who calls Alpha.build?", "--root", str(tmp_path))
    head = answer.splitlines()[0]
    assert head.startswith("**Answer:** 2 shown callsites of `Alpha.build`"), answer
    assert "(defined at `app/alpha.py:3:8`)" in head
    assert "- `app/alpha.py:8:19` in `Alpha.rebuild`" in answer  # cls inside Alpha
    assert "- `app/run.py:6:16` in `make`" in answer  # a variable: may be Alpha
    assert "beta.py" not in answer and "gamma.py" not in answer
    assert "app/run.py:5:" not in answer  # Beta.build is Beta's


def test_calls_passing_keywords_it_does_not_take_are_told_apart(tmp_path: Path) -> None:
    """A client library's method of the same name (``client.create_bucket(Bucket=...)``)
    is not a call of the tree's ``create_bucket(bucket_name, region_name)``."""
    write_tree(
        tmp_path,
        {
            **BACKENDS,
            "svc/s3/api.py": (
                "from svc.s3.models import S3Backend\n\n\ndef put(backend: S3Backend, name):\n"
                "    return backend.create_bucket(name, 'us-east-1')\n"
            ),
            "tests/test_s3.py": (
                "import boto3\n\n\ndef test_create():\n    client = boto3.client('s3')\n"
                "    client.create_bucket(Bucket='b')\n    client.create_bucket(Bucket='c')\n"
            ),
        },
    )
    answer = _answer("search", "who calls create_bucket?", "--root", str(tmp_path))
    head = answer.splitlines()[0]
    assert head.startswith("**Answer:** 1 shown callsite of `create_bucket`"), answer
    assert "2 other shown calls pass keywords it does not take" in head
    assert "- `svc/s3/api.py:5:19` in `put`" in answer
    assert "tests/test_s3.py" not in answer


def test_a_camel_case_near_miss_gets_did_you_mean_not_substring_hits(tmp_path: Path) -> None:
    """``getBucket`` is nowhere as a name; as text only inside ``InvalidTargetBucket``: the
    defined name it misses (``get_bucket``) is offered, not that substring."""
    write_tree(
        tmp_path,
        {
            "store/models.py": "def get_bucket(name):\n    return name\n",
            "store/errors.py": "class InvalidTargetBucket(Exception):\n    pass\n",
        },
    )
    run = run_cq("search", "getBucket", "--root", str(tmp_path))
    assert run.returncode == 1, run.stdout
    lines = run.stdout.splitlines()
    assert lines[2] == (
        "**Not found:** no file in the searched scope holds `getBucket` as a name."
    ), run.stdout
    assert lines[3] == "Did you mean:"
    assert lines[4].startswith("- `get_bucket` — def at `store/models.py:1:4`")
    assert "InvalidTargetBucket" not in run.stdout


def test_follow_ups_name_the_owner_of_a_method(tmp_path: Path) -> None:
    """A follow-up for a method names its class (``Alpha.rebuild``): the bare name would
    search every class's ``rebuild``. "who calls" is asked as the callers question it says."""
    write_tree(tmp_path, OWNERS)
    data = run_cq("search", "Alpha.build", "--root", str(tmp_path), "--format", "json").json()
    section = next(s for s in data["sections"] if s["type"] == "follow_ups")
    whys = [f["why"] for f in section["follow_ups"]]
    assert "who calls `Alpha.rebuild`, the best-ranked caller" in whys, whys
    caller = next(f for f in section["follow_ups"] if f["why"].startswith("who calls"))
    assert caller["argv"][-1] == "who calls Alpha.rebuild?"  # a callers question, as it says
    asked = run_cq("search", caller["argv"][-1], "--root", str(tmp_path)).stdout
    assert asked.split("\n\n")[1].startswith("**Answer:** no callsite of `rebuild`"), asked


def test_a_usage_answer_listing_only_imports_counts_every_use_as_uses(tmp_path: Path) -> None:
    """ "where is X used?" counts calls as well: the count is not of imports because the few
    it lists are (the sources' imports outrank the tests' calls)."""
    tree = {f"svc/extra/m{i}.py": "from svc.s3.models import S3Backend\n" for i in range(4)}
    tree["svc/s3/models.py"] = BACKENDS["svc/s3/models.py"]
    tree["tests/test_models.py"] = (
        "from svc.s3.models import S3Backend\n\n\ndef test_make():\n"
        "    assert S3Backend()\n    assert S3Backend()\n"
    )
    write_tree(tmp_path, tree)
    argv = ("search", "where is S3Backend used?", "--root", str(tmp_path), "--limit", "4")
    answer = _answer(*argv)
    listed = [line for line in answer.splitlines() if line.startswith("- `svc/extra/")]
    assert len(listed) == 3, answer  # three imports shown (the definition the last), no other use
    assert answer.startswith("**Answer:** 7 uses of `S3Backend`"), answer


ZONED = {
    "src/lib.rs": "pub mod zoned;\npub mod other;\n",
    "src/zoned.rs": (
        "pub struct ZonedTime<Tz: Zone> {\n    offset: Tz,\n}\n\n"
        "impl<Tz: Zone> ZonedTime<Tz> {\n    pub fn offset(&self) -> &Tz {\n"
        "        &self.offset\n    }\n}\n"
    ),
    "src/other.rs": (
        "use crate::zoned::ZonedTime;\n\npub fn shift<Tz: Zone>(t: ZonedTime<Tz>) -> "
        "ZonedTime<Tz> {\n    t\n}\n"
    ),
}


def test_a_type_written_with_its_arguments_is_asked_about_by_its_name(tmp_path: Path) -> None:
    """ "where is ZonedTime<Tz> defined?" asks about ``ZonedTime``: its struct, as "where is
    ZonedTime defined?" answers, not a method of its impl found by the question's words."""
    write_tree(tmp_path, ZONED)
    for query in ("where is ZonedTime<Tz> defined?", "where is `ZonedTime<Tz>` defined?"):
        answer = _answer("search", query, "--root", str(tmp_path))
        assert answer.startswith("**Answer:** `ZonedTime` — `pub struct ZonedTime"), answer
    uses = _answer("search", "where is ZonedTime<Tz> used?", "--root", str(tmp_path))
    assert uses.startswith("**Answer:** ") and " uses of `ZonedTime`" in uses, uses
