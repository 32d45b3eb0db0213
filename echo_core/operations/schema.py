"""JSON Schemas derived from declarations: an operation's input (per surface) and its
result envelope.

Written here rather than through pydantic so the CLI (which never loads pydantic) and
any transport get the same schema at no start-up cost. Input schemas are closed
(``additionalProperties: false``); the output schema describes the envelope keys and the
result class's fields, none of them required beyond ``ok``/``action``/``message`` (a
``queued`` or ``dry-run`` envelope carries other data) and stays open to extra keys.
"""

from __future__ import annotations

import datetime as _dt
import enum
import functools
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs

from echo_core.operations.declaration import Operation
from echo_core.operations.params import Bounds, FieldInfo, Kind, ParamType, fields_of

_JSON_TYPES = {Kind.STR: "string", Kind.INT: "integer", Kind.FLOAT: "number",
               Kind.BOOL: "boolean", Kind.LIST: "array", Kind.OBJECT: "object"}


def _bounded(schema: dict[str, Any], kind: Kind, bounds: Bounds) -> None:
    if kind in (Kind.INT, Kind.FLOAT):
        if bounds.ge is not None:
            schema["minimum"] = int(bounds.ge) if kind is Kind.INT else bounds.ge
        if bounds.le is not None:
            schema["maximum"] = int(bounds.le) if kind is Kind.INT else bounds.le
    prefix = "Length" if kind is Kind.STR else "Items"
    if kind in (Kind.STR, Kind.LIST):
        if bounds.min_length is not None:
            schema[f"min{prefix}"] = bounds.min_length
        if bounds.max_length is not None:
            schema[f"max{prefix}"] = bounds.max_length


def _type_schema(ptype: ParamType, bounds: Bounds, choices: tuple[str, ...]) -> dict[str, Any]:
    if ptype.kind is Kind.JSON:
        return {}
    schema: dict[str, Any] = {"type": _JSON_TYPES[ptype.kind]}
    if ptype.kind is Kind.STR and choices:
        schema["enum"] = list(choices)
    if ptype.kind is Kind.LIST:
        assert ptype.item is not None
        schema["items"] = _type_schema(ptype.item, Bounds(), choices)
    if ptype.kind is Kind.OBJECT:
        assert ptype.model is not None
        schema.update(_object_schema(fields_of(ptype.model), "core"))
    _bounded(schema, ptype.kind, bounds)
    if ptype.optional:
        schema = {"anyOf": [schema, {"type": "null"}]}
    return schema


def _field_schema(info: FieldInfo, surface: str) -> dict[str, Any]:
    schema = _type_schema(info.type, info.bounds_for(surface), info.choices())
    schema["description"] = info.spec.help_text
    default = info.default_for(surface)
    if default is not attrs.NOTHING:
        schema["default"] = list(default) if isinstance(default, tuple) else default
    return schema


def _object_schema(fields: Sequence[FieldInfo], surface: str) -> dict[str, Any]:
    shown = [f for f in fields if surface == "core" or f.surface(surface) is not None]
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {f.name: _field_schema(f, surface) for f in shown},
        "additionalProperties": False,
    }
    required = [f.name for f in shown if f.default_for(surface) is attrs.NOTHING]
    if required:
        schema["required"] = required
    return schema


def input_schema(op: Operation[Any], surface: str = "mcp") -> dict[str, Any]:
    """The closed JSON Schema of ``op``'s parameters as ``surface`` takes them."""
    return _object_schema(fields_of(op.params), surface)


# -- results ----------------------------------------------------------------------------


def _hint_schema(hint: Any, seen: frozenset[type]) -> dict[str, Any]:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_hint_schema(a, seen) for a in args]}
    if hint is type(None):
        return {"type": "null"}
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (tuple, list, Sequence, set, frozenset):
        items = args[0] if args and args[-1] is Ellipsis or len(args) == 1 else Any
        return {"type": "array", "items": _hint_schema(items, seen)}
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        return {"type": "object"}
    if isinstance(hint, type):
        if issubclass(hint, bool):
            return {"type": "boolean"}
        if issubclass(hint, enum.Enum):
            return {"enum": [m.value for m in hint]}
        simple = {str: "string", int: "integer", float: "number"}
        for cls, name in simple.items():
            if issubclass(hint, cls):
                return {"type": name}
        if issubclass(hint, (_dt.date, _dt.datetime)):
            return {"type": "string"}
        if attrs.has(hint) and hint not in seen:
            return _class_schema(hint, seen | {hint})
    return {}


def _class_schema(cls: type, seen: frozenset[type] = frozenset()) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    props = {f.name: _hint_schema(hints.get(f.name, Any), seen) for f in attrs.fields(cls)}
    return {"type": "object", "properties": props}


@functools.cache
def _result_schema(result: type | None) -> dict[str, Any]:
    envelope: dict[str, Any] = {
        "ok": {"type": "boolean", "description": "False for a gate stop or a failed check."},
        "action": {"type": "string", "description": "What happened (created, queued, ...)."},
        "message": {"type": "string", "description": "One line saying what happened."},
        "warnings": {"type": "array", "items": {"type": "string"}},
    }
    props = dict(_class_schema(result)["properties"]) if result is not None else {}
    for key in envelope:
        props.pop(key, None)
    return {"type": "object", "properties": {**envelope, **props},
            "required": ["ok", "action", "message"]}


def output_schema(op: Operation[Any]) -> dict[str, Any]:
    """The JSON Schema of ``op``'s result envelope (``Envelope.to_dict()``)."""
    return _result_schema(op.result_type())
