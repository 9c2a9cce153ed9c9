"""A file's finished classifications, cached by its content hash and its hits' spans.

Classification is a function of the file's bytes, the hits' byte spans (their text, line and
window follow from the bytes and the report tuning) and the tuning, so a repeated search over
unchanged files needs neither the records nor the files: with the digest memory
(``cq.cache.digests``) a warm audit search of 37,000 hits in 6,300 files reads only the files
of the hits it shows. The namespace covers the classifier's code, the line placement of
candidates and the whole ``Tuning``.
"""

from __future__ import annotations

import msgspec

from cq.classify.sliced import hits_key
from cq.model import Classification

# What shapes verdicts: the engine and all it imports; rg lines placed into match windows.
BUILDERS = ("cq.classify.engine", "cq.candidates.lines")


class FileVerdicts(msgspec.Struct, frozen=True, array_like=True):
    """One file's classifications in hit order, and why hits fell back (``reasons``)."""

    classifications: list[Classification]
    reasons: dict[str, int]


def verdicts_key(language: str, digest: str, spans: list[tuple[int, int]]) -> str:
    return f"{language}:{hits_key(digest, spans)}"
