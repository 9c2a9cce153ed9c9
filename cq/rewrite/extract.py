"""Code-like evidence in a text: traceback frames, names in code, dotted paths, file names.

Pure functions. ``extract_mentions`` returns what the text says explicitly; the offline
rewriter adds the repository's vocabulary for the remaining words.
"""

from __future__ import annotations

import builtins
import keyword
import re

import msgspec

from cq.rewrite.words import is_code_like

_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)
_TICKS = re.compile(r"`([^`\n]{1,200})`")
_FRAME = re.compile(r'File "([^"\n]+)", line \d+(?:, in (\w+))?')
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:py|pyi|rs))\b")
_NAME = re.compile(r"[A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)*")
_FROM_IMPORT = re.compile(r"^\s*from\s+([\w.]+)\s+import\s+([\w\s,()]+)", re.M)
_IMPORT = re.compile(r"^\s*import\s+([\w.]+)", re.M)
_TRACEBACK_HEAD = re.compile(r"Traceback \(most recent call last\):")
_ERROR_LINE = re.compile(r"^(\w+(?:Error|Exception|Warning)): (.+)$", re.M)

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
    paths: tuple[str, ...] = ()  # file paths from frames, imports and prose
    code_names: tuple[str, ...] = ()  # names from code blocks and backticks
    prose_names: tuple[str, ...] = ()  # code-like tokens written in the prose
    messages: tuple[str, ...] = ()  # exception messages (searched as literals)
    prose: str = ""  # the text without code blocks, for word mapping


def extract_mentions(text: str) -> Mentions:
    """Every explicit code reference in ``text``, deduplicated, in order of appearance."""
    blocks = _FENCE.findall(text)
    prose = _FENCE.sub(" ", text)
    frames = _FRAME.findall(text)
    paths = [p for p, _ in frames]
    frame_functions = [f for _, f in frames if f and _keep(f)]
    code_text = "\n".join(blocks)
    code_names: list[str] = []
    for module, names in _FROM_IMPORT.findall(text):
        paths.append(module.replace(".", "/") + ".py")
        code_names += re.findall(r"\w+", names)
    for module in _IMPORT.findall(text):
        paths.append(module.replace(".", "/") + ".py")
    code_names += [n for tick in _TICKS.findall(prose) for n in _NAME.findall(tick)]
    code_names += _NAME.findall(_without_frames(code_text))
    paths += _PATH.findall(prose)
    prose_names = [_NAME.findall(t)[0] for t in _TICKS.sub(" ", prose).split() if is_code_like(t)]
    messages = [m.strip() for _, m in _ERROR_LINE.findall(text) if 8 <= len(m.strip()) <= 120]
    return Mentions(
        frame_functions=_unique(frame_functions),
        paths=_unique(paths),
        code_names=_unique(n for n in code_names if _keep(n)),
        prose_names=_unique(n for n in prose_names if _keep(n)),
        messages=_unique(messages),
        prose=_TICKS.sub(" ", prose),
    )


def split_dotted(name: str) -> list[str]:
    """``a.b.C.meth`` -> ``["a", "b", "C", "meth"]`` (``::`` too)."""
    return [part for part in re.split(r"\.|::", name) if part]


def _without_frames(code: str) -> str:
    """Traceback lines inside a code block carry paths, not names to search."""
    return _TRACEBACK_HEAD.sub(" ", _FRAME.sub(" ", code))


def _keep(name: str) -> bool:
    last = split_dotted(name)[-1] if name else ""
    dunder = last.startswith("__") and last.endswith("__")
    return len(last) >= 3 and last not in COMMON_NAMES and not last.isdigit() and not dunder


def _unique(items) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    return tuple(dict.fromkeys(items))
