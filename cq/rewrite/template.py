"""Issue-template sections that describe the reporter's machine, not the bug.

GitHub issue forms end with an environment block (``### Environment``: "PyTorch Version
(e.g., 1.0):", "OS:", "CUDA/cuDNN version:"; ``### Rust Version``; a ``### Configuration``
table of ``version``'s output: ``commit_hash``, ``build_os``, ``rust_version``) and a checklist
("I have searched the existing issues"). Their words are the same in every issue of a
repository and name the code that prints versions or checks GPUs: asked of the index, they
pulled nushell's ``version.rs`` into the top 3 of unrelated issues. They are left out of what
the rewriter and the index read; the rest of the text is kept as written.

The headings are those of common issue forms, not fitted to a set. Titles have no such
sections. Measured with bench/studies/index_fusion.py, signals gathered with and without
this, on issue texts (commands: bench/results/2026-11-27-bench-log.md; figures:
bench/results/2026-11-29-figures-from-cq.md).
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z]+")
# Heading words (lower-cased, punctuation and emoji dropped) that open an environment or
# checklist section.
# ``\b`` first: tried only where a word starts, a long run of letters is not rescanned from
# each of them by ``(\w+ )?version`` (bench/studies/rewrite_hostile.py scans it with finditer).
_ENVIRONMENT = re.compile(
    r"\b(?:(your |system |platform |software )?environment( info(rmation)?| details)?"
    r"|system info(rmation)?|specifications|platform|(operating system|os)( version)?"
    r"|versions?( info(rmation)?)?"
    r"|(\w+ )?version|affected versions? of \w+|versions? of \w+( used)?"
    r"|(please |make sure you )?(complete|completed) the following tasks|checklist)"
)
# A "Configuration" section is the environment when it is a table of versions (nushell's
# form pastes ``version``'s output); a config file's text under that heading is kept.
_CONFIGURATION = "configuration"


def without_environment(text: str) -> str:
    """``text`` without its environment and checklist sections: the heading and its body, up
    to the next heading or to a paragraph of prose after a blank line ("The problem is in
    `jsonrep.py` at line 227." after pydicom's version table is the reporter's finding)."""
    if "\n" not in text:
        return text
    out: list[str] = []
    dropping = seen = blank = False
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        heading = _heading(line)
        if heading is not None:
            title = " ".join(_WORD.findall(heading.lower()))
            dropping = _ENVIRONMENT.fullmatch(title) is not None or (
                title == _CONFIGURATION and _version_table(lines[i + 1 :])
            )
            seen = blank = False
        elif dropping and not line.strip():
            blank = seen
        elif dropping:
            if blank and _prose(line):
                dropping = False
            seen = True
        if not dropping:
            out.append(line)
    return "".join(out)


_ITEM = re.compile(r"[-*+|>]|\d+[.)]|`{3}|~{3}|<!--")  # matched at a line's first non-space
_PROSE_WORDS = 8  # hand-set: an environment line ("- OS (e.g., Linux): Ubuntu 18.04") is shorter


def _prose(line: str) -> bool:
    """A sentence, not an environment item: no list, table, fence or comment mark, no
    "key: value" head, and at least ``_PROSE_WORDS`` words."""
    if _ITEM.match(line.lstrip()) or ":" in line[:30]:
        return False
    return len(line.split()) >= _PROSE_WORDS


def _heading(line: str) -> str | None:
    """A heading line's text: markdown ``#``s (one to six, then a space) or a line that is bold
    text alone (``**Environment**``, ``**Versions:**``); None for any other line. Plain string
    work, no regex: a backtracking pattern took 44 s on one 4,000-space line."""
    text = line.strip()
    if text.startswith("#"):
        title = text.lstrip("#")
        if len(text) - len(title) > 6 or not title[:1].isspace():
            return None
        return title.strip().rstrip(":")
    if text.startswith("**") and text.rstrip(":").endswith("**") and len(text) > 4:
        title = text.rstrip(":")[2:-2]
        return None if "*" in title else title.rstrip(":")
    return None


def _version_table(body: list[str]) -> bool:
    """The section's first lines are a markdown table with a version row."""
    rows: list[str] = []
    for line in body:
        if _heading(line) is not None:
            break
        if line.strip():
            rows.append(line.strip())
    table = [r for r in rows if r.startswith("|")]
    return len(table) * 2 > len(rows) > 0 and any("version" in r.lower() for r in table)
