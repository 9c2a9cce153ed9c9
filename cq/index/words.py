"""Identifiers the way people write about them: ``FileUploadHandler`` -> fileuploadhandler
file upload handler; ``FILE_UPLOAD_PERMISSION`` -> file_upload_permission file upload
permission. Applied in Python to the small fields (names, signatures, paths) and to the query;
bodies are split by tantivy's simple tokenizer (see ``schema.py`` for why)."""

from __future__ import annotations

import functools
import re

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# English function words: in a question or an issue's prose they say nothing about which code
# is meant, and as subwords of test names (``test_fields_are_added``) or of ``how_to`` they
# matched it. Only closed-class words: ``is``, ``get``, ``set``, ``not``, ``to``, ``in`` and the
# like stay, as code spells names with them (``is_valid``, ``to_dict``). Measured with
# bench/studies/index_fusion.py --requery on the saved signals, fused file Acc@5:
# python_tuning 313 texts 62.6 -> 64.2 (one issue more in each of 5 of 9 repositories, none
# fewer), rust_tuning 123 texts 39.8 -> 42.3 (clap +2, async-graphql +1), titles 54.0 -> 53.7
# and 43.1 -> 42.3 (one issue each), lite-dev 22 unchanged.
FUNCTION_WORDS = frozenset(
    re.findall(
        r"\w+",
        """a an the are am was were be been being do does did doing has have had having how
    what where why which who whom whose when whether would could should might must shall
    will i me my we our you your he she him her his they them their its this that these
    those there here than then so such very just also too about into onto upon""",
    )
)
_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def split_words(text: str) -> str:
    """Every identifier of ``text`` lower-cased, and its subwords when it is a compound."""
    return " ".join(map(_identifier_words, _IDENT.findall(text)))


# A build splits the same identifiers over and over (a class's name in every method's names,
# ``self`` in every signature): on the bench tree of bench/index_speed.py, 19 MB, splitting
# the names and signatures took 0.27 CPU-s split each time, 0.18 remembered. Bounded: a
# long-lived process (``cq mcp``) indexing many trees keeps at most this many.
@functools.lru_cache(maxsize=1 << 16)
def _identifier_words(ident: str) -> str:
    """``ident`` lower-cased, then its subwords when it has more than one."""
    parts = _PART.findall(ident)
    if len(parts) > 1:
        return f"{ident} {' '.join(parts)}".lower()
    return ident.lower()


def prose_words(text: str) -> list[str]:
    """The words of a question or an issue text as the index is asked: ``split_words``
    without ``FUNCTION_WORDS``."""
    return [w for w in split_words(text).split() if w not in FUNCTION_WORDS]


def base_forms(word: str) -> tuple[str, ...]:
    """What an inflected English word may be the form of, for code that names the base:
    ``rendered`` -> render, rendere; ``parsing`` -> pars, parse; ``stopped`` -> stopp, stoppe,
    stop; ``entries`` -> entry; ``caches`` -> cach, cache. Spellings no document holds match
    nothing. Bases under 3 letters are left out."""
    w = word.lower()
    if len(w) < 5 or not w.isalpha():
        return ()
    if w.endswith(("ies", "ied")):
        found = [w[:-3] + "y"]
    elif w.endswith(("ing", "ed")):
        stem = w[:-3] if w.endswith("ing") else w[:-2]
        found = [stem, stem + "e"] + ([stem[:-1]] if stem[-1] == stem[-2] else [])
    elif w.endswith("es"):
        found = [w[:-2], w[:-1]]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        found = [w[:-1]]
    else:
        return ()
    return tuple(f for f in dict.fromkeys(found) if len(f) >= 3 and f != w)
