"""Rendering: a finished ``SearchResult`` as markdown or JSON. Computes nothing: what the
markdown says beyond the result's facts (the Answer and its kind, the one-line headers) is the
``ReportPlan`` that ``cq.assemble`` decided (``SearchResult.plan``). Imports only ``cq.model``,
``cq.terminal`` and itself (``tests/test_layout.py``).

Open ``markdown.py`` for the human/agent report, ``json_format.py`` for the machine one;
``colour.py`` colours a finished markdown report for a terminal.
"""

from cq.report.colour import colour_markdown, colour_path
from cq.report.json_format import render_json, report_schema
from cq.report.markdown import render_markdown

__all__ = ["colour_markdown", "colour_path", "render_json", "render_markdown", "report_schema"]
