"""Suggested next searches: only ``cq search`` command lines that run as written.

Each names cq as the shell that ran it can run it again (``cq.tools.cq_argv``: ``cq`` when
PATH finds this install, else its absolute path), the words ``cq agent install`` lets an agent
run without asking. Every suggestion repeats the original search's scope (root, language,
globs, ``--in``, profile, ...) so it searches the same tree, and takes only identifiers as new
queries.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex

from cq.model import Echo, Finding, FollowUp, FollowUps
from cq.model.options import request_default
from cq.rewrite import is_special
from cq.terminal import visible
from cq.tools import cq_argv

_IDENTIFIER = re.compile(r"[^\W\d]\w*")


def follow_ups(
    echo: Echo,
    shown: tuple[Finding, ...],
    primary: int | None,
    omitted_by_limit: int,
    *,
    rewritten: bool = False,
    tests_exist: bool = False,
    most: int = 4,
) -> FollowUps:
    """At most ``most`` useful next commands, most useful first, no duplicates; ``echo``:
    what they repeat of the search's request (``Settings.echo``).

    After a rewrite, the first suggestion is a plain search for the answer's name (not for
    a special method's: its class's, which the next suggestion is).
    """
    query = echo.query.strip()
    again = len(query) <= 100 and "\n" not in query  # worth repeating on a command line
    found: list[FollowUp | None] = []
    if primary is not None:
        definition = shown[primary]
        name = re.split(r"\.|::", definition.text)[-1]
        # a search for ``__init__`` finds the tree's constructors, not the answer's uses
        if rewritten and _IDENTIFIER.fullmatch(name) and not is_special(name):
            owned = _owned(definition, name)  # a bare method name lands on its namesakes
            found.append(_make(echo, owned, f"every use of `{owned}`, the answer"))
        outer = _outer_name(definition.containing_scope)
        if outer and outer not in (query, name):
            found.append(_make(echo, outer, f"where `{outer}`, which defines it, is used"))
        folder = posixpath.dirname(definition.file)
        if again and folder and folder != echo.in_dir and _spans_dirs(shown):
            found.append(_make(echo, query, "only the defining package", in_dir=folder))
    caller = _best_caller(shown, query)
    if caller:
        asked = f"who calls {caller}?"  # a callers question: its calls, not its namesakes
        found.append(_make(echo, asked, f"who calls `{caller}`, the best-ranked caller"))
    if again and echo.focus != "tests" and tests_exist:
        found.append(_make(echo, query, "tests first", focus="tests"))
    if again and omitted_by_limit:
        total = omitted_by_limit + len(shown)
        more = len(shown) * 2 if total > len(shown) * 2 > 0 else 0
        why = f"the top {more} of {total} findings" if more else f"all {total} findings"
        found.append(_make(echo, query, why, limit=more))
    unique: dict[str, FollowUp] = {}
    for item in found:
        if item is not None:
            unique.setdefault(item.command, item)
    return FollowUps(follow_ups=tuple(unique.values())[:most])


def _outer_name(scope: str | None) -> str | None:
    """The outermost name of a containing scope (``impl Foo::bar`` -> ``Foo``).

    A one-letter name is a generic parameter (``impl<P> Parser for P``, ``T = TypeVar("T")``):
    a search for it finds every ``P`` of the tree, not the type, so none is suggested."""
    if not scope:
        return None
    head = re.split(r"\.|::", scope)[0].removeprefix("impl ").split(" for ")[-1].strip()
    head = head.split("<")[0]
    return head if len(head) > 1 and _IDENTIFIER.fullmatch(head) else None


def _owned(f: Finding, name: str) -> str:
    """``name`` with the class (Rust: type) it is defined in, as a dotted query searches it
    (``FakeBucket.create_from_cloudformation_json``, ``Utc::now``); the name alone when it
    is no member (a module's function) or its owner cannot be spelt as a name."""
    parts = [p.strip() for p in re.split(r"\.|::", f.containing_scope or "")]
    if len(parts) < 2 or parts[-1] != name:
        return name
    owner = parts[-2].removeprefix("impl ").split(" for ")[-1].split("<")[0].strip()
    if not owner[:1].isupper() or not _IDENTIFIER.fullmatch(owner):
        return name  # a nested function's enclosing function is no owner to search by
    return f"{owner}::{name}" if f.language == "rust" else f"{owner}.{name}"


def _best_caller(shown: tuple[Finding, ...], query: str) -> str | None:
    """The innermost scope of the best-ranked callsite that sits inside a function (not a
    test, nor a Rust program's ``main``: nothing in the tree calls them), with its owner
    (``_owned``)."""
    for f in shown:
        if f.category == "callsite" and f.containing_scope and f.role != "test":
            name = re.split(r"\.|::", f.containing_scope)[-1].strip()
            entry = f.language == "rust" and f.containing_scope == "main"
            if _IDENTIFIER.fullmatch(name) and name != query and not entry:
                return _owned(f, name)
    return None


def _spans_dirs(shown: tuple[Finding, ...]) -> bool:
    return len({posixpath.dirname(f.file) for f in shown}) > 1


def _make(
    echo: Echo,
    query: str,
    why: str,
    *,
    in_dir: str | None = None,
    focus: str | None = None,
    limit: int | None = None,
) -> FollowUp | None:
    argv = [*cq_argv(), "search", *_scope_args(echo, query, in_dir or echo.in_dir)]
    focus = focus or echo.focus
    if focus and focus != "all":
        argv += ["--focus", focus]
    if limit is not None:
        argv += ["--limit", str(limit)]
    elif echo.limit != request_default("limit"):
        argv += ["--limit", str(echo.limit)]
    argv += ["--", query] if query.startswith("-") else [query]
    words = [_shell_word(word) for word in argv]
    spelt = [word for word in words if word is not None]
    if len(spelt) < len(words):
        return None  # a command that would not run as printed is not suggested
    arguments = _tool_arguments(echo, query, in_dir or echo.in_dir, focus, limit)
    return FollowUp(why=why, argv=tuple(argv), command=" ".join(spelt), arguments=arguments)


def _tool_arguments(
    echo: Echo, query: str, in_dir: str | None, focus: str, limit: int | None
) -> str:
    """The follow-up as the MCP tool's arguments, the same search as its command line (the
    root left out: a tool call searches its server's root)."""
    args: dict[str, str | int | bool | list[str]] = {"query": query}
    if in_dir:
        args["in_dir"] = in_dir
    if echo.lang != request_default("lang"):
        args["lang"] = echo.lang
    if echo.include:
        args["include"] = list(echo.include)
    if echo.exclude:
        args["exclude"] = list(echo.exclude)
    for name in ("hidden", "no_ignore", "ignore_case"):
        if getattr(echo, name):
            args[name] = True
    if echo.profile != request_default("profile"):
        args["profile"] = echo.profile
    if echo.mode and query == echo.query.strip():
        args["mode"] = echo.mode
    if focus and focus != "all":
        args["focus"] = focus
    if limit is not None or echo.limit != request_default("limit"):
        args["limit"] = echo.limit if limit is None else limit
    return json.dumps(args, ensure_ascii=False)


def _scope_args(echo: Echo, query: str, in_dir: str | None) -> list[str]:
    """Flags that keep the follow-up on the same tree, with the same filters and mode."""
    args = ["--root", echo.root]
    if in_dir:
        args += _option("--in", in_dir)
    if echo.lang != request_default("lang"):
        args += ["--lang", echo.lang]
    for glob in echo.include:
        args += _option("--include", glob)
    for glob in echo.exclude:
        args += _option("--exclude", glob)
    if echo.hidden:
        args.append("--hidden")
    if echo.no_ignore:
        args.append("--no-ignore")
    if echo.ignore_case:
        args.append("-i")
    if echo.profile != request_default("profile"):
        args += ["--profile", echo.profile]
    if echo.mode and query == echo.query.strip():
        args.append(f"--{echo.mode}")
    return args


def _option(flag: str, value: str) -> list[str]:
    """``--flag value``, or ``--flag=value`` for a value starting with '-' (a part named
    ``-dash``), which an argument parser would take for a flag of its own."""
    return [f"{flag}={value}"] if value.startswith("-") else [flag, value]


def _shell_word(word: str) -> str | None:
    """``word`` as a POSIX shell reads it back. A word a report would print escaped (a
    newline, a byte that is not UTF-8: ``cq.terminal.visible``) is spelt by printf's octal
    escapes, which give back its bytes; one ending in a newline cannot be (command
    substitution drops it): None."""
    if visible(word) is word:
        return shlex.quote(word)
    raw = os.fsencode(word)
    if raw.endswith(b"\n"):
        return None
    plain = [0x20 <= b < 0x7F and b not in b"'\\%" for b in raw]
    plain[0] = plain[0] and raw[0] != ord("-")  # a format starting with '-' is an option
    body = "".join(chr(b) if ok else f"\\{b:03o}" for b, ok in zip(raw, plain, strict=True))
    return f"\"$(printf '{body}')\""
