"""JSON for the hook recorder without the ``json`` package.

``import json`` imports ``re`` and ``enum``: ~4 ms of a cold ``python -S`` that records
one hook event. ``loads`` and ``dumps`` drive the C accelerator (``_json``) that ``json``
itself uses, with ``json``'s defaults, so they give what ``json.loads(text)`` and
``json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)`` give; on an
interpreter without it they are those calls. Standard library only (see ``hook_record``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar

__all__ = ["dumps", "loads"]


class _Decoding:
    """What ``_json.make_scanner`` reads of ``json.JSONDecoder`` (its defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"NaN": float("nan"), "Infinity": float("inf"),
                      "-Infinity": float("-inf")}.__getitem__
    memo: ClassVar[dict[str, str]] = {}


_scan: Any = None
_encode: Any = None
try:
    from _json import encode_basestring as _c_string
    from _json import make_encoder as _c_encoder
    from _json import make_scanner as _c_scanner

    _decoding: Any = _Decoding()
    _scan = _c_scanner(_decoding)
    _encode = _c_encoder(None, str, _c_string, None, ":", ",", False, False, True)
except (ImportError, TypeError):  # not CPython: the json package
    _scan = _encode = None


def loads(text: str) -> Any:
    """``json.loads(text)``."""
    if _scan is None:
        import json

        return json.loads(text)
    text = text.strip(" \t\n\r")
    try:
        value, end = _scan(text, 0)
    except StopIteration as stop:
        raise ValueError(f"not JSON (at {stop.value})") from None
    if end != len(text):
        raise ValueError(f"not JSON: extra data at {end}")
    return value


def dumps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)``."""
    if _encode is None:
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return "".join(_encode(value, 0))
