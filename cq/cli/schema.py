"""``cq schema``: the JSON Schema of the ``--format json`` report, generated from the structs
themselves (``cq.report.report_schema``)."""

from __future__ import annotations

import sys

import msgspec


def print_schema() -> int:
    from cq.report import report_schema

    schema = report_schema()
    sys.stdout.write(msgspec.json.format(msgspec.json.encode(schema), indent=2).decode() + "\n")
    return 0
