"""Code-like evidence in a text: traceback frames, names in code, dotted paths, file names.

Pure functions. ``extract_mentions`` returns what the text says explicitly; the offline
rewriter adds the repository's vocabulary for the remaining words.
"""

from __future__ import annotations

import builtins
import keyword
import re
from itertools import pairwise

import msgspec

from cq.rewrite.words import is_code_like

_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)
_TICKS = re.compile(r"`([^`\n]{1,200})`")
_FRAME = re.compile(r'File "([^"\n]+)", line \d+(?:, in (\w+))?')
# ``path.py:12`` as warnings, pytest (``path.py:12: in func``) and linters print locations.
_LOCATION = re.compile(
    r"(?<![\w.])((?:[A-Za-z]:)?[\w./\\-]*?[\w-]+\.(?:py|pyi|rs)):\d+(?::\d+)?(?::\s+in\s+(\w+))?"
)
_PATH = re.compile(r"(?<![\w/\\.-])((?:[A-Za-z]:)?[/\\]?(?:[\w.-]+[/\\])*[\w-]+\.(?:py|pyi|rs))\b")
_NAME = re.compile(r"[A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)*")
_FROM_IMPORT = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+([\w\s,()]+)", re.M)
_IMPORT = re.compile(r"^\s*import\s+([\w.]+)", re.M)
_TRACEBACK_HEAD = re.compile(r"Traceback \(most recent call last\):")
_ERROR_LINE = re.compile(
    r"^(?:\S+\.(?:py|pyi|rs):\d+:\s*)?(\w+(?:Error|Exception|Warning)): (.+)$", re.M
)

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


class Mentions(msgspec.Struct, frozen=True, kw_only=True):
    """What a text names explicitly, strongest evidence first within each field."""

    frame_functions: tuple[str, ...] = ()  # function names of traceback frames, innermost last
    frame_paths: tuple[str, ...] = ()  # file paths of traceback frames, innermost last
    paths: tuple[str, ...] = ()  # file paths from imports, dotted names and prose
    code_names: tuple[str, ...] = ()  # names from code blocks and imports
    prose_names: tuple[str, ...] = ()  # names in backticks and code-like tokens in the prose
    messages: tuple[str, ...] = ()  # exception messages (searched as literals)
    frame_lines: tuple[tuple[str, str], ...] = ()  # (path, source line) of frames, innermost last
    prose: str = ""  # the text without code blocks, for word mapping


def extract_mentions(text: str) -> Mentions:
    """Every explicit code reference in ``text``, deduplicated, in order of appearance."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks = _FENCE.findall(text)
    prose = _FENCE.sub(" ", text)
    frames = _frames(text)
    paths: list[str] = []
    frame_functions = [f for _, f in frames if f and _keep(f)]
    code_text = "\n".join(blocks)
    code_names: list[str] = []
    for module, names in _FROM_IMPORT.findall(text):
        paths.append(module.replace(".", "/") + ".py")
        code_names += re.findall(r"\w+", names)
    for module in _IMPORT.findall(text):
        paths.append(module.replace(".", "/") + ".py")
    code_names += _NAME.findall(_without_frames(code_text))
    paths += _PATH.findall(prose)
    paths += [
        "/".join(parts[:k]) + ".py"
        for name in (*_NAME.findall(code_text), *_TICKS.findall(prose), *prose.split())
        if "." in name and (parts := split_dotted(name.strip("`'\",;:()[]")))
        for k in range(2, len(parts) + 1)
        if all(p.isidentifier() for p in parts[:k])
    ]  # pkg.mod.func names a module file: pkg/mod.py
    prose_names = [n for tick in _TICKS.findall(prose) for n in _NAME.findall(tick)]
    prose_names += [_NAME.findall(t)[0] for t in _TICKS.sub(" ", prose).split() if is_code_like(t)]
    messages = [piece for _, m in _ERROR_LINE.findall(text) for piece in _message_pieces(m)]
    return Mentions(
        frame_functions=_unique(frame_functions),
        frame_paths=tuple(dict.fromkeys(reversed([p for p, _ in frames])))[::-1],
        paths=_unique(paths),
        code_names=_unique(n for n in code_names if _keep(n)),
        prose_names=_unique(n for n in prose_names if _keep(n)),
        messages=_unique(messages),
        frame_lines=_unique(_frame_lines(text)),
        prose=_TICKS.sub(" ", prose),
    )


def _message_pieces(message: str) -> list[str]:
    """The constant text of an exception message: the runs between quoted or numeric values.

    Messages are usually formatted (``f"... {value!r} ..."``), so the whole message rarely
    occurs in the source, but its longest constant run often does.
    """
    runs = [r.strip(" :,.") for r in re.split(r"'[^']*'|\"[^\"]*\"|\S*\d\S*", message)]
    best = max(runs, key=len, default="")
    return [best] if 12 <= len(best) <= 120 and " " in best else []


def split_dotted(name: str) -> list[str]:
    """``a.b.C.meth`` -> ``["a", "b", "C", "meth"]`` (``::`` too)."""
    return [part for part in re.split(r"\.|::", name) if part]


def _frames(text: str) -> list[tuple[str, str]]:
    """(path, function) of traceback frames and printed locations, in order of appearance."""
    found = [(m.start(), m.group(1), m.group(2) or "") for m in _FRAME.finditer(text)]
    found += [(m.start(), m.group(1), m.group(2) or "") for m in _LOCATION.finditer(text)]
    return [(path, function) for _, path, function in sorted(found)]


def _frame_lines(text: str) -> list[tuple[str, str]]:
    """The source line a traceback or a warning prints under a frame: verbatim repo code."""
    lines = text.splitlines()
    out: list[tuple[str, str]] = []
    for here, after in pairwise(lines):
        frame = _FRAME.search(here) or _LOCATION.search(here)
        code = after.strip()
        if not frame or not after[:1].isspace() or _FRAME.search(after) or _LOCATION.search(after):
            continue
        names = [n for n in _NAME.findall(code) if split_dotted(n)[-1] not in COMMON_NAMES]
        if 12 <= len(code) <= 120 and code[0] not in "^~" and names:
            out.append((frame.group(1), code))
    return out


def _without_frames(code: str) -> str:
    """Traceback lines and printed locations inside a code block carry paths, not names."""
    return _TRACEBACK_HEAD.sub(" ", _LOCATION.sub(" ", _FRAME.sub(" ", code)))


def _keep(name: str) -> bool:
    last = split_dotted(name)[-1] if name else ""
    dunder = last.startswith("__") and last.endswith("__")
    return len(last) >= 3 and last not in COMMON_NAMES and not last.isdigit() and not dunder


def _unique(items) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    return tuple(dict.fromkeys(items))
