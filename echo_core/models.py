"""Core data objects (attrs). Everything that crosses a module boundary is one of these.

Transports render them: ``to_dict()`` gives plain JSON-ready data, never live objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

import attrs

from echo_core.actions import Action
from echo_core.lazy_pattern import LazyPattern

#: Every character ``str.splitlines`` ends a line at.
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAK_RE = LazyPattern(f"[{_LINE_BREAKS}]")
_PLAIN = frozenset({str, int, float, bool, type(None)})


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}


def _field_names(cls: type) -> tuple[str, ...] | None:
    """The attribute names of an attrs class or a named tuple (the records kept off the
    start-up path, issue 15), None for any other class; memoised."""
    try:
        return _FIELD_NAMES[cls]
    except KeyError:
        tuple_fields = getattr(cls, "_fields", None) if issubclass(cls, tuple) else None
        if attrs.has(cls):
            names: tuple[str, ...] | None = tuple(f.name for f in attrs.fields(cls))
        elif isinstance(tuple_fields, tuple):
            names = tuple_fields
        else:
            names = None
        _FIELD_NAMES[cls] = names
        return names


def to_jsonable(value: Any) -> Any:
    """Convert attrs instances and named tuples (objects by field), mappings, sequences
    and dates into JSON-ready data."""
    cls = type(value)
    if cls in _PLAIN:
        return value
    if isinstance(value, str):  # a StrEnum member (``Action``) or another str subclass
        return str(value)
    names = _field_names(cls)
    if names is not None:
        return {k: to_jsonable(getattr(value, k)) for k in names}
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


@attrs.frozen
class FileStat:
    """What a backend knows about one file without reading it."""

    path: str
    size: int
    mtime: float


@attrs.frozen
class Note:
    """A markdown note: vault path, raw text, and its parsed frontmatter and body.

    ``text`` is the exact file content (line endings preserved); ``frontmatter`` keeps the
    file's key order; ``frontmatter_error`` says why a present block could not be parsed
    (the note stays readable, with an empty ``frontmatter``).
    """

    path: str
    text: str
    frontmatter: dict[str, Any] = attrs.field(factory=dict)
    body: str = ""
    frontmatter_error: str | None = None

    @property
    def title(self) -> str:
        """``note_title`` of the note's path and body."""
        return note_title(self.path, self.body)


@attrs.frozen
class Entity:
    """One entry of the entity index: the routing authority for a named thing."""

    slug: str
    path: str
    kind: str
    title: str
    aliases: tuple[str, ...] = ()
    h: str = ""


def note_title(path: str, body: str) -> str:
    """The first ``# `` heading of ``body`` (a line, as ``str.splitlines`` cuts lines,
    starting with ``# ``), else the file stem of ``path``."""
    at = body.find("# ")
    while at >= 0:  # the first "# " at a line's start: no split of the whole body
        if at == 0 or body[at - 1] in _LINE_BREAKS:
            end = _LINE_BREAK_RE.search(body, at)
            return body[at + 2:end.start() if end else len(body)].strip()
        at = body.find("# ", at + 1)
    stem = path.rsplit("/", 1)[-1]
    return stem.removesuffix(".md")


@attrs.frozen
class Hit:
    """One recall result."""

    path: str
    score: float
    type: str = ""
    updated: str = ""
    status: str = ""
    excerpt: str = ""
    via: str | None = None
    truncated: bool = False
    #: as-of recall only (SPEC §3.3): ``current`` or ``superseded`` on that date, and
    #: the note that superseded it
    validity: str | None = None
    superseded_by: str | None = None
    #: ``recall --explain`` only: why it was recalled (``echo_core.ops.recall_explain``)
    explain: Mapping[str, Any] | None = None


@attrs.frozen
class CaptureRequest:
    """Everything a capture was asked to do (SPEC §2.1)."""

    title: str
    kind: str | None = None
    body: str = ""
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    status: str | None = None
    date: str | None = None
    domain: str | None = None
    merge_into: str | None = None
    force: bool = False
    dry_run: bool = False
    #: the note this one replaces (a slug, title or alias), or a line of the operator
    #: preferences (SPEC §2.6)
    supersedes: str | None = None
    #: days until a working note expires, or the date it expires (SPEC §2.7)
    ttl_days: int | None = None
    expires: str | None = None
    #: False: write the text as given, secrets and ``<private>`` blocks included (the
    #: operator's ``--no-redact``, logged); True: redacted first (SPEC §2.1)
    redact: bool = True
    #: the redaction rules validation applied (``echo_core.redaction``); set by
    #: ``validate_request``, reported in the result
    redacted: tuple[str, ...] = ()


@attrs.frozen
class GateStop:
    """A gate's refusal of a capture, with the candidates that caused it."""

    reason: str
    candidates: tuple[Mapping[str, Any], ...] = ()


#: The type of an envelope's ``data``.
D_co = TypeVar("D_co", covariant=True)


@attrs.frozen
class Envelope(Generic[D_co]):
    """The result of every operation: ``ok``, ``action``, a one-line ``message``, and data.

    Special outcomes (``duplicate-gate``, ``queued``, ``dry-run``) are envelopes, not
    exceptions. ``data`` is an attrs instance or a mapping of JSON-ready values; an
    operation names its type (``Envelope[CaptureResult]``). ``action`` is an ``Action``
    for the core's operations (a plain string from a third party's is accepted too).
    """

    ok: bool
    action: Action | str
    message: str = ""
    data: D_co = None  # type: ignore[assignment]  # an envelope may carry no data
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"ok", "action", "message", "warnings", **data}`` (plain
        strings and JSON values only)."""
        out: dict[str, Any] = {"ok": self.ok, "action": str(self.action), "message": self.message}
        data = to_jsonable(self.data)
        if isinstance(data, dict):
            out.update(data)
        elif data is not None:
            out["data"] = data
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out


@attrs.frozen
class TreeScan:
    """One listing of a vault folder tree with what ``stat`` says, without reading files.

    ``files``: path -> ``(size, mtime_ns)`` of every file (hidden entries skipped, as
    ``Storage.list``). ``folders``: folder path (``""`` for the root) -> its
    ``mtime_ns``, which changes when an entry is added, removed or renamed in it; empty
    when the backend has no such stamp (then only a file's own stat shows a change).
    """

    files: dict[str, tuple[int, int]]
    folders: dict[str, int] = attrs.field(factory=dict)
