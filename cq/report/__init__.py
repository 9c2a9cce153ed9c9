"""Rendering: a finished ``SearchResult`` as markdown or JSON. Computes nothing.

Open ``markdown.py`` for the human/agent report, ``json_format.py`` for the machine one.
"""

from cq.report.json_format import render_json
from cq.report.markdown import render_markdown

__all__ = ["render_json", "render_markdown"]
