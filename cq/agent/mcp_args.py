"""The ``search`` tool's input: its JSON Schema, and the checks a call's arguments pass first.

Both come from ``cq.model.options`` (``tool_arguments``: each option the tool takes, with its
request type and default). A call's arguments are checked here before anything uses them,
and every refusal is one line in the tool's own words, naming the argument:

- an unknown name is refused with the closest valid one and the list of valid ones (a typo
  such as ``limt`` was silently ignored, so the call ran without it);
- every whole number is range-checked against the bounds the schema publishes (a number over
  2**64 once reached the frames to the search processes, which cannot carry it, and wedged
  the server);
- a value of the wrong type says what was expected (the choices, for one outside them),
  never a validation library's message with its documentation URL;
- null for an optional argument is its default.

Imports no MCP SDK: the schema is built with msgspec, and ``check_arguments`` returns the
``SearchArgs`` the search processes receive.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
import typing
from typing import Annotated, Any

import msgspec

from cq.agent.budget import call_budget
from cq.agent.worker_protocol import SearchArgs
from cq.model.options import SEARCH_OPTIONS, SearchOption, tool_arguments

# Not tuned: a protocol bound on every whole-number argument. Far above any useful limit or
# token budget (the server caps the budget at its own), far below what the frames between the
# server and its search processes carry (msgpack: 2**64 - 1).
MAX_WHOLE = 2**31 - 1
_SHOWN_CHARS = 24  # a refused value longer than this is not echoed back
_NAMED = 5  # unknown names quoted in one error (a client may send hundreds)


class ArgumentError(Exception):
    """A call's arguments cannot be used; the message is the tool's one-line error."""


class _Argument(msgspec.Struct, frozen=True):
    name: str
    kind: Any  # the request field's type (``T | None`` where the server decides)
    default: Any  # ``msgspec.NODEFAULT``: required
    option: SearchOption
    bounds: tuple[int, int] | None  # a whole number's least and greatest value


@functools.cache
def _arguments() -> dict[str, _Argument]:
    options = {o.mcp_name or o.name: o for o in SEARCH_OPTIONS}
    out = {}
    for name, kind, default in tool_arguments():
        option = options[name]
        bounds = None
        if _whole(kind):
            least = option.mcp_minimum if option.mcp_minimum is not None else option.minimum
            bounds = (least if least is not None else 0, MAX_WHOLE)
        out[name] = _Argument(name, kind, default, option, bounds)
    return out


def in_tool_words(message: str) -> str:
    """A refusal the search path words for the command line (``--in 'x' leads outside the
    root``) in the tool's argument names (``in_dir 'x' ...``), which are what the client sent."""
    for arg in _arguments().values():
        for flag in arg.option.flags:
            if flag.startswith("--"):
                message = re.sub(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", arg.name, message)
    return message


def _whole(kind: Any) -> bool:
    """``int`` or ``int | None``."""
    return kind is int or int in typing.get_args(kind)


def input_schema() -> dict[str, Any]:
    """The tool's ``inputSchema``: each argument's type, description, default and bounds;
    any other name is refused (``additionalProperties: false``)."""
    properties: dict[str, Any] = {}
    required = []
    for arg in _arguments().values():
        meta = msgspec.Meta(description=arg.option.mcp_help or arg.option.help)
        kind = arg.kind
        if arg.bounds is not None:
            least, most = arg.bounds
            kind = _replace_int(kind, Annotated[int, msgspec.Meta(ge=least, le=most)])
        schema = msgspec.json.schema(Annotated[kind, meta])
        if arg.name == "query":
            schema["minLength"] = 1
        if arg.default is msgspec.NODEFAULT:
            required.append(arg.name)
        else:
            schema["default"] = msgspec.to_builtins(arg.default)
        properties[arg.name] = schema
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _replace_int(kind: Any, bounded: Any) -> Any:
    if kind is int:
        return bounded
    return bounded | None  # ``int | None``


def check_arguments(raw: dict[str, Any], cap: int) -> SearchArgs:
    """The call's arguments as ``SearchArgs`` (its budget capped at the server's ``cap``),
    or ``ArgumentError`` naming what is wrong."""
    arguments = _arguments()
    unknown = sorted(set(raw) - set(arguments))
    if unknown:
        raise ArgumentError(_unknown(unknown, tuple(arguments)))
    missing = [a.name for a in arguments.values() if a.default is msgspec.NODEFAULT]
    missing = [name for name in missing if name not in raw]
    if missing:
        raise ArgumentError(f"missing argument `{missing[0]}`")
    # null for an optional argument is its default: clients that send every argument (strict
    # function calling) send null for the ones they leave unset.
    given = {name: value for name, value in raw.items() if not _unset(arguments[name], value)}
    fields = {name: _checked(arguments[name], value) for name, value in given.items()}
    fields["budget"] = call_budget(fields.get("max_tokens"), cap)
    return msgspec.convert(fields, SearchArgs)


def _unset(arg: _Argument, value: Any) -> bool:
    return value is None and arg.default is not msgspec.NODEFAULT


def _unknown(unknown: list[str], valid: tuple[str, ...]) -> str:
    """Each unknown name, with the valid one it is closest to (a typo), then every valid one."""
    named = []
    for name in unknown[:_NAMED]:
        close = difflib.get_close_matches(name, valid, n=1)
        named.append(f"`{name}`" + (f" (did you mean `{close[0]}`?)" if close else ""))
    what = "unknown argument" if len(unknown) == 1 else "unknown arguments"
    more = f" and {len(unknown) - _NAMED} more" if len(unknown) > _NAMED else ""
    return f"{what} {', '.join(named)}{more}; the search tool takes: {', '.join(valid)}"


def _checked(arg: _Argument, value: Any) -> Any:
    if arg.bounds is not None and value is not None:
        return _whole_number(arg, value)
    if isinstance(value, str) and typing.get_origin(arg.kind) is tuple:
        value = _json_list(value)  # some clients send a list as its JSON text
    try:
        checked = msgspec.convert(value, arg.kind, strict=False)
    except msgspec.ValidationError as exc:
        # msgspec's own words ("Expected `str`, got `int`"), which carry no URL; its words
        # for a value outside a choice name none of the choices.
        choices = _choices(arg.kind)
        listed = f"; one of: {', '.join(choices)}" if choices and isinstance(value, str) else ""
        raise ArgumentError(f"argument `{arg.name}`: {exc}{listed}") from None
    if arg.name == "query" and not checked:
        raise ArgumentError("argument `query`: must not be empty")
    # an unfilled value, as the CLI's ``--in ""``: the whole root searched, or (an empty
    # exclude glob) every file left out and a report that nothing holds the query
    if arg.name == "in_dir" and checked == "":
        raise ArgumentError("argument `in_dir`: must not be empty (leave it out for the root)")
    if arg.name == "exclude" and "" in checked:
        raise ArgumentError("argument `exclude`: an empty glob would leave every file out")
    return checked


def _choices(kind: Any) -> tuple[str, ...]:
    """The values of a ``Literal`` (or ``Literal | None``) argument; () for any other."""
    if typing.get_origin(kind) is typing.Literal:
        return tuple(str(choice) for choice in typing.get_args(kind))
    for member in typing.get_args(kind):
        if typing.get_origin(member) is typing.Literal:
            return _choices(member)
    return ()


def _whole_number(arg: _Argument, value: Any) -> int:
    """A whole number inside the argument's bounds (a numeral or an integral float too, as
    JSON clients send them); anything else is refused with the range."""
    assert arg.bounds is not None
    least, most = arg.bounds
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        number = int(value) if len(value.strip()) <= _SHOWN_CHARS else None
    if number is not None and least <= number <= most:
        return number
    return _out_of_range(arg, value, least, most)


def _out_of_range(arg: _Argument, value: Any, least: int, most: int) -> typing.NoReturn:
    shown = _shown(value)
    got = f", got {shown}" if shown is not None else ""
    range_ = f"a whole number from {least} to {most}"
    raise ArgumentError(f"argument `{arg.name}`: must be {range_}{got}")


def _shown(value: Any) -> str | None:
    """``value`` as JSON text when it is short enough to echo back."""
    if isinstance(value, int) and value.bit_length() > 64:  # str() of a huge one may raise
        return None
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        return None
    return text if len(text) <= _SHOWN_CHARS else None


def _json_list(text: str) -> Any:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return value if isinstance(value, list) else text
