"""Code-like evidence in a text: traceback frames, names in code, dotted paths, file names.

Pure functions. ``extract_mentions`` returns what the text says explicitly; the offline
rewriter adds the repository's vocabulary for the remaining words.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Iterable, Iterator
from itertools import pairwise

from cq.model.question import Mentions
from cq.rewrite.words import is_code_like

_TICKS = re.compile(r"`([^`\n]{1,200})`")
_FRAME = re.compile(r'File "(?P<path>[^"\n]+)", line \d+(?:, in (?P<function>\w+))?')
# The frames other tracebacks print, at a line's start: IPython's and Jupyter's
# ``~/lib/python3.6/site-packages/pkg/mod.py in fit(self, model)`` and pdb's or a JIT trace's
# ``> /src/pkg/mod.py(189)fit()`` / ``.../pkg/mod.py(189): fit``. Anchored at a line start, a
# path is tried once per line. The same evidence as a ``File "..."`` frame (measured with
# bench/studies/index_fusion.py, signals gathered again; figures:
# bench/results/2026-11-29-figures-from-cq.md).
_OTHER_FRAME = re.compile(
    r"^[^\S\n]*(?:>[^\S\n]*)?(?P<path>[^\s\"'()<>]+\.pyi?)"
    r"(?: in |\(\d+\)(?::[^\S\n]*)?)(?P<function>[A-Za-z_]\w*)",
    re.M,
)
# ``path.py:12`` as warnings, pytest (``path.py:12: in func``) and linters print locations.
# The path is taken whole (possessive) and its end checked by look-behind; a run of path
# characters that is no location is consumed by the second branch (up to a drive letter
# after a separator, ``x/C:``, where a location may start), so no run is rescanned from
# each of its characters (a lazy path took 48 s on 4 KB of ``a-a-a-...``).
_LOCATION = re.compile(
    r"(?<![\w.])(?:"
    r"(?P<path>(?:[A-Za-z]:)?(?!\.(?:pyi|py|rs)(?![\w./\\-]))"  # a bare ``.py`` names no file
    r"[\w./\\-]*+(?:(?<=[\w-]\.py)|(?<=[\w-]\.pyi)|(?<=[\w-]\.rs)))"
    r":\d+(?::\d+)?(?::\s+in\s+(?P<function>\w+))?"
    r"|[\w./\\-](?:(?<![/\\-])[\w./\\-]|(?![A-Za-z]:)[\w./\\-])*+)"
)
_PATH = re.compile(r"(?<![\w/\\.-])((?:[A-Za-z]:)?[/\\]?(?:[\w.-]+[/\\])*[\w-]+\.(?:py|pyi|rs))\b")
# A link to a file on GitHub (``github.com/owner/repo/blob/<ref>/src/x.rs#L32``): the path
# after the ref, which ``_PATH`` does not read inside a URL. At most 30 folders: a text of
# repeated link prefixes is not rescanned to its end from each of them. How many issue texts
# link a file, and what reading the links did (bench/studies/index_fusion.py, signals
# gathered again): bench/results/2026-11-29-figures-from-cq.md.
_LINK = re.compile(
    r"github\.com/[\w.-]+/[\w.-]+/(?:blob|tree)/[^/\s]+/((?:[\w.-]+/){0,30}[\w-]+\.(?:py|pyi|rs))\b"
)
_NAME = re.compile(r"[A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)*")
# Leading blanks, not ``\s*``: that also crossed newlines, so every line of a run of empty
# lines rescanned the rest of the run.
_FROM_IMPORT = re.compile(r"^[^\S\n]*from\s+([\w.]+)\s+import\s+([\w\s,()]+)", re.M)
_IMPORT = re.compile(r"^[^\S\n]*import\s+([\w.]+)", re.M)
_WORDS = re.compile(r"\w+")
_DOTTED = re.compile(r"\.|::")
_TRACEBACK_HEAD = re.compile(r"Traceback \(most recent call last\):")
_ERROR_LINE = re.compile(
    r"^(?:\S+\.(?:py|pyi|rs):\d+:\s*)?(\w+(?:Error|Exception|Warning)): (.+)$", re.M
)
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
# a phrase the prose quotes: "Avoid using aliases in join condition" (straight or curly
# double quotes), or 'The batch does not seem to contain any images' (single quotes, as a
# Python repr prints a message; a quote beside a letter is an apostrophe, "doesn't", never
# one of these)
_QUOTED_PHRASE = re.compile(
    r"(?<!\w)[\"\u201c](?!\s)([^\"\u201c\u201d\n]{12,160})(?<!\s)[\"\u201d]"
    r"|(?<![\w'])'(?!\s)([^'\n]{12,160})(?<!\s)'(?![\w'])"
)
_TOKEN = re.compile(r"\S+")
_DIGIT = re.compile(r"\d")
_MAX_MODULE_PARTS = 16  # pkg.mod.func -> pkg/mod.py: deepest .py in the stdlib with
# site-packages has 14 parts (moto), in the 458 localization eval trees 9.

# Names so common in any Python or Rust code that searching them finds everything.
COMMON_NAMES = frozenset(
    set(keyword.kwlist)
    | set(dir(builtins))
    | {
        "self",
        "cls",
        "args",
        "kwargs",
        "np",
        "pd",
        "os",
        "sys",
        "re",
        "json",
        "main",
        "fn",
        "mut",
        "pub",
        "impl",
        "let",
        "use",
        "crate",
        "super",
        "test",
        "tests",
        "foo",
        "bar",
        "baz",
        "x",
        "y",
        "z",
        "i",
        "j",
        "k",
        "a",
        "b",
        "c",
        "df",
        "data",
        "obj",
        "value",
        "name",
        "result",
        "results",
        "item",
        "items",
        "key",
        "val",
        "e",
        "err",
        "ex",
        "exc",
        "Traceback",
        "File",
        "line",
        "python",
        "pip",
        "stdout",
        "stderr",
        "numpy",
        "pandas",
        "print",
        "assert",
        "None",
        "True",
        "False",
        "str",
        "int",
        "float",
        "dict",
        "list",
        "tuple",
        "set",
        "bytes",
        "type",
        "object",
        "len",
        "range",
        "open",
        "Ok",
        "Err",
        "Some",
        "Vec",
        "String",
        "Option",
        "Result",
        "Self",
        "unwrap",
        "clone",
        "new",
    }
)


def extract_mentions(text: str) -> Mentions:
    """Every explicit code reference in ``text``, deduplicated, in order of appearance.

    Linear in the length of ``text``: no pattern here rescans a run of characters from each
    of its positions (``bench/studies/rewrite_hostile.py`` times every shape of 100 KB and 1 MB).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks, prose = _split_fences(text)
    frames = _frames(text)
    paths: list[str] = []
    frame_functions = [f for _, f in frames if f and _keep(f)]
    code_text = "\n".join(blocks)
    code_names: list[str] = []
    for module, names in _FROM_IMPORT.findall(text):
        paths.append(module.replace(".", "/") + ".py")
        code_names += _WORDS.findall(names)
    for module in _IMPORT.findall(text):
        paths.append(module.replace(".", "/") + ".py")
    code_names += _NAME.findall(_without_frames(code_text))
    paths += _PATH.findall(prose)
    paths += _LINK.findall(text)  # after the paths the prose writes, as a reader meets them
    paths += [
        path
        for name in (*_NAME.findall(code_text), *_TICKS.findall(prose), *prose.split())
        if "." in name
        for path in _module_paths(name)
    ]
    prose_names = [n for tick in _TICKS.findall(prose) for n in _NAME.findall(tick)]
    unticked = _TICKS.sub(" ", prose)  # the prose without its inline code
    prose_names += [_NAME.findall(t)[0] for t in unticked.split() if is_code_like(t)]
    messages = [piece for _, m in _ERROR_LINE.findall(text) for piece in _message_pieces(m)]
    # a message quoted in the prose ('"Dropped elements in sequence matching" when ...'): what
    # the program printed, as the reporter copied it, as often as an error line is
    messages += [
        p for m in _QUOTED_PHRASE.finditer(unticked) for p in _message_pieces(m[1] or m[2])
    ]
    return Mentions(
        frame_functions=_unique(frame_functions),
        frame_paths=tuple(dict.fromkeys(reversed([p for p, _ in frames])))[::-1],
        paths=_unique(paths),
        code_names=_unique(n for n in code_names if _keep(n)),
        prose_names=_unique(n for n in prose_names if _keep(n)),
        messages=_unique(messages),
        frame_lines=_unique(_frame_lines(text)),
        prose=unticked,
    )


def _split_fences(text: str) -> tuple[list[str], str]:
    """Fenced code blocks (from a line holding ``` to the next ```, or the end) and the text
    around them, one space where each block was.

    A scan with ``str.find``: the regex it replaces retried every ``` of a last line that has
    no newline after it against the rest of that line (quadratic in a line of backticks).
    """
    blocks: list[str] = []
    prose: list[str] = []
    pos = 0
    while (start := text.find("```", pos)) != -1:
        newline = text.find("\n", start + 3)
        if newline == -1:
            break
        close = text.find("```", newline + 1)
        blocks.append(text[newline + 1 : close if close != -1 else len(text)])
        prose += [text[pos:start], " "]
        pos = close + 3 if close != -1 else len(text)
    prose.append(text[pos:])
    return blocks, "".join(prose)


def _module_paths(name: str) -> list[str]:
    """``pkg.mod.func`` names a module file: ``pkg/mod.py`` and ``pkg/mod/func.py``."""
    parts = split_dotted(name.strip("`'\",;:()[]"))[:_MAX_MODULE_PARTS]
    out: list[str] = []
    for k in range(2, len(parts) + 1):
        if not (parts[0].isidentifier() and parts[k - 1].isidentifier()):
            break
        out.append("/".join(parts[:k]) + ".py")
    return out


def _message_pieces(message: str) -> list[str]:
    """The constant text of an exception message: the runs between quoted or numeric values.

    Messages are usually formatted (``f"... {value!r} ..."``), so the whole message rarely
    occurs in the source, but its longest constant run often does.
    """
    runs = [r.strip(" :,.") for r in _constant_runs(message)]
    best = max(runs, key=len, default="")
    return [best] if 12 <= len(best) <= 120 and " " in best else []


def _constant_runs(message: str) -> list[str]:
    """``message`` split at quoted values and at tokens holding a digit, left to right.

    What splitting at ``_QUOTED`` or a token with a digit (``\\S*\\d\\S*``) returns, in one
    pass: that regex rescanned a token without digits from each of its characters.
    """
    runs: list[str] = []
    start = pos = 0
    token_end = last_digit = -1
    while pos < len(message):
        quoted = _QUOTED.match(message, pos)
        if quoted:
            end = quoted.end()
        else:
            if pos >= token_end:  # entering a token (or a blank): find its end, its last digit
                token = _TOKEN.match(message, pos)
                if token is None:
                    pos += 1
                    continue
                token_end = token.end()
                digits = [d.start() for d in _DIGIT.finditer(message, pos, token_end)]
                last_digit = digits[-1] if digits else -1
            if last_digit < pos:  # no digit in the rest of this token
                pos += 1
                continue
            end = token_end
        runs.append(message[start:pos])
        start = pos = end
    runs.append(message[start:])
    return runs


def split_dotted(name: str) -> list[str]:
    """``a.b.C.meth`` -> ``["a", "b", "C", "meth"]`` (``::`` too)."""
    return [part for part in _DOTTED.split(name) if part]


def _frames(text: str) -> list[tuple[str, str]]:
    """(path, function) of traceback frames and printed locations, in order of appearance."""
    matches = [*_FRAME.finditer(text), *_OTHER_FRAME.finditer(text), *_locations(text)]
    found = [(m.start(), m.group("path"), m.group("function") or "") for m in matches]
    return [(path, function) for _, path, function in sorted(found)]


def _locations(text: str) -> Iterator[re.Match[str]]:
    """The printed locations in ``text``: ``_LOCATION``'s matches of its first branch."""
    return (m for m in _LOCATION.finditer(text) if m.group("path"))


def _frame_lines(text: str) -> list[tuple[str, str]]:
    """The source line a traceback or a warning prints under a frame: verbatim repo code."""
    lines = text.splitlines()
    out: list[tuple[str, str]] = []
    for here, after in pairwise(lines):
        frame = _FRAME.search(here) or next(_locations(here), None)
        code = after.strip()
        if not frame or not after[:1].isspace() or _FRAME.search(after):
            continue
        if next(_locations(after), None) or not 12 <= len(code) <= 120 or code[0] in "^~":
            continue
        if any(split_dotted(n)[-1] not in COMMON_NAMES for n in _NAME.findall(code)):
            out.append((frame.group("path"), code))
    return out


def _without_frames(code: str) -> str:
    """Traceback lines and printed locations inside a code block carry paths, not names."""
    code = _OTHER_FRAME.sub(" ", _FRAME.sub(" ", code))
    code = _LOCATION.sub(lambda m: " " if m.group("path") else m.group(0), code)
    return _TRACEBACK_HEAD.sub(" ", code)


def _keep(name: str) -> bool:
    """A name worth looking for: its last part, or for a qualified name whose last part says
    little (``Arg::new``, ``Model.__init__``) the part before it, the owner."""
    parts = split_dotted(name) if name else []
    if not parts:
        return False
    if _telling(parts[-1]):
        return True
    # not a file name's owner (``CODE_OF_CONDUCT.md``): its extension is short, not common
    said_little = parts[-1] in COMMON_NAMES or is_special(parts[-1])
    return said_little and len(parts) > 1 and _telling(parts[-2])


def _telling(part: str) -> bool:
    return (
        len(part) >= 3 and part not in COMMON_NAMES and not part.isdigit() and not is_special(part)
    )


def is_special(name: str) -> bool:
    """A special method's name (``__init__``, ``__call__``): every class may have one, and it
    is reached through the class or an operator, not by its name."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
