"""Turning a mapping of arguments into an operation's parameter object: the one place
every surface's input is checked (types, bounds, choices, unknown and missing names).

``parse_params(cls, arguments, surface=...)`` returns an instance of ``cls`` or raises
``ParamsInvalid`` (exit 2) naming every offending field (``limit``,
``reflect[2].confidence``) and never echoing a value. Nested objects come back as plain
dicts holding only the keys that were given (so "absent" and "null" stay distinct for
the operation), their lists as lists; top-level lists come back as tuples.

Every string given (a ``str`` parameter, a list item, an object field, any string inside
a JSON value, keys included) must be valid UTF-8 text: a lone surrogate (a JSON
``"\\ud800"`` escape, undecodable argv bytes) is a problem of its field here, before any
operation could try to store, index or send it. A name the caller made up (an unknown
parameter or field) is shown with such characters escaped, so the message itself is
always valid UTF-8.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from echo_core.errors import EchoError, ExitCode
from echo_core.operations.params import (
    Bounds,
    CliParam,
    FieldInfo,
    Kind,
    ParamType,
    fields_of,
)
from echo_core.write_scope import text_problem

T = TypeVar("T")
MAX_SHOWN = 8


class ParamsInvalid(EchoError):
    """Invalid arguments (exit 2). ``fields`` lists the offending names, in order."""

    def __init__(self, message: str, fields: Sequence[str]) -> None:
        super().__init__(message, ExitCode.USAGE)
        self.fields = tuple(fields)


@attrs.define
class _Problems:
    items: list[tuple[str, str]] = attrs.field(factory=list)

    def add(self, where: str, problem: str) -> None:
        self.items.append((where, problem))


def _name(key: object) -> str:
    """A caller's key as shown in a message: lone surrogates escaped (``\\ud800``)."""
    text = str(key)
    return text if text_problem(text) is None else text.encode(
        "utf-8", "backslashreplace").decode("utf-8")


def _check_json(value: Any, where: str, problems: _Problems) -> None:
    """A problem for each string in JSON value ``value`` that is not UTF-8 text."""
    if isinstance(value, str):
        problem = text_problem(value)
        if problem is not None:
            problems.add(where, problem)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and text_problem(key) is not None:
                problems.add(where, "a key is not valid UTF-8 text; give UTF-8 text")
            _check_json(item, f"{where}.{_name(key)}", problems)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_json(item, f"{where}[{i}]", problems)


def _type_name(kind: Kind) -> str:
    return {Kind.STR: "a string", Kind.INT: "an integer", Kind.FLOAT: "a number",
            Kind.BOOL: "true or false", Kind.LIST: "a list", Kind.OBJECT: "an object",
            Kind.JSON: "a JSON value"}[kind]


def _check_bounds(value: Any, bounds: Bounds, where: str, problems: _Problems) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if bounds.ge is not None and value < bounds.ge:
            problems.add(where, f"must be at least {bounds.ge:g}")
            return False
        if bounds.le is not None and value > bounds.le:
            problems.add(where, f"must be at most {bounds.le:g}")
            return False
    elif isinstance(value, (str, tuple)):
        unit = "character" if isinstance(value, str) else "item"
        if bounds.min_length is not None and len(value) < bounds.min_length:
            problems.add(where, "must not be empty" if bounds.min_length == 1 else
                         f"must have at least {bounds.min_length} {unit}s")
            return False
        if bounds.max_length is not None and len(value) > bounds.max_length:
            problems.add(where, f"must have at most {bounds.max_length} {unit}s")
            return False
    return True


def _value(ptype: ParamType, value: Any, where: str, bounds: Bounds,
           choices: tuple[str, ...], problems: _Problems) -> Any:
    if value is None:
        if not ptype.optional and ptype.kind is not Kind.JSON:
            problems.add(where, f"must be {_type_name(ptype.kind)}, not null")
        return None
    kind = ptype.kind
    out: Any = value
    if kind is Kind.STR:
        if not isinstance(value, str):
            problems.add(where, "must be a string")
            return None
        problem = text_problem(value)
        if problem is not None:
            problems.add(where, problem)
            return None
        if choices and value not in choices:
            problems.add(where, f"must be one of: {', '.join(choices)}")
            return None
    elif kind is Kind.BOOL:
        if not isinstance(value, bool):
            problems.add(where, "must be true or false")
            return None
    elif kind in (Kind.INT, Kind.FLOAT):
        ok = isinstance(value, int) or (kind is Kind.FLOAT and isinstance(value, float))
        if isinstance(value, bool) or not ok or (isinstance(value, float)
                                                 and not math.isfinite(value)):
            problems.add(where, f"must be {_type_name(kind)}")
            return None
        out = float(value) if kind is Kind.FLOAT else value
    elif kind is Kind.LIST:
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
            problems.add(where, "must be a list")
            return None
        assert ptype.item is not None
        out = tuple(_value(ptype.item, item, f"{where}[{i}]", Bounds(), choices, problems)
                    for i, item in enumerate(value))
    elif kind is Kind.OBJECT:
        assert ptype.model is not None
        if not isinstance(value, Mapping):
            problems.add(where, "must be an object")
            return None
        out = _object(ptype.model, value, where, problems)
    elif kind is Kind.JSON:
        _check_json(value, where, problems)
    if not _check_bounds(out, bounds, where, problems):
        return None
    return out


def _object(model: type, value: Mapping[str, Any], where: str,
            problems: _Problems) -> dict[str, Any]:
    fields = {f.name: f for f in fields_of(model)}
    out: dict[str, Any] = {}
    for key in value:
        if key not in fields:
            problems.add(f"{where}.{_name(key)}",
                         f"unknown field (allowed: {', '.join(fields)})")
    for name, info in fields.items():
        if name in value:
            item = _value(info.type, value[name], f"{where}.{name}", info.spec.bounds,
                          info.choices(), problems)
            out[name] = list(item) if isinstance(item, tuple) else item  # JSON-shaped
        elif info.required:
            problems.add(f"{where}.{name}", "required")
    return out


def _surface_fields(cls: type, surface: str, prepared: Collection[str]) -> list[FieldInfo]:
    return [f for f in fields_of(cls)
            if surface == "core" or f.surface(surface) is not None or f.name in prepared]


def _preparable(info: FieldInfo, surface: str) -> bool:
    """Whether a surface's ``prepare`` (not an option of its own) gives ``info``."""
    override = info.surface(surface)
    return override is None or (isinstance(override, CliParam) and override.from_prepare)


def _allowed(cls: type, key: str, known: Collection[str], surface: str,
             prepared: Collection[str]) -> str:
    """The names ``key`` could have been: for a key the surface's ``prepare`` gave (one a
    user wrote in a file, e.g. a session-end bundle) the parameters a ``prepare`` gives,
    not the surface's options; otherwise every name the surface takes."""
    names: Collection[str] = known
    if key in prepared:
        names = [f.name for f in fields_of(cls) if _preparable(f, surface)] or known
    return ", ".join(sorted(names)) or "none"


def parse_params(cls: type[T], arguments: Mapping[str, Any], *, surface: str = "core",
                 operation: str = "", prepared: Collection[str] = ()) -> T:
    """``cls`` built from ``arguments`` as given on ``surface`` (``"cli"``, ``"mcp"`` or
    ``"core"``: that surface's bounds and defaults). A parameter left out of the surface
    takes its declared default and may not be given, unless it is in ``prepared`` (the
    surface's own ``prepare`` produced it); one without a default that ``prepare`` did not
    give is ``required``, like any missing parameter.

    Errors: ``ParamsInvalid`` (exit 2) listing every problem as ``name: what is wrong``."""
    problems = _Problems()
    fields = _surface_fields(cls, surface, prepared)
    known = {f.name for f in fields}
    for key in arguments:
        if key not in known:
            allowed = _allowed(cls, str(key), known, surface, prepared)
            problems.add(_name(key), f"unknown parameter (allowed: {allowed})")
    values: dict[str, Any] = {}
    for info in fields_of(cls):
        if info.name not in known:  # left out of the surface: its declared default
            if info.required:
                problems.add(info.name, "required")
            continue
        if info.name in arguments:
            values[info.name] = _value(info.type, arguments[info.name], info.name,
                                       info.bounds_for(surface), info.choices(), problems)
            continue
        default = info.default_for(surface)
        if default is attrs.NOTHING:
            problems.add(info.name, "required")
        elif default is not info.default:
            values[info.name] = default
    if problems.items:
        shown = "; ".join(f"{w}: {p}" for w, p in problems.items[:MAX_SHOWN])
        more = len(problems.items) - MAX_SHOWN
        if more > 0:
            shown += f"; ... {more} more"
        subject = f" for {operation}" if operation else ""
        names = list(dict.fromkeys(w for w, _ in problems.items))
        raise ParamsInvalid(f"invalid arguments{subject}: {shown}", names)
    return cls(**values)
