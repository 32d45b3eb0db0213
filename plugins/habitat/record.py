"""One record of the habitat's loom (SPEC §7): what an agent did, as it happened.

A record is one JSON object on one line of a day file (``loom.Loom``)::

    {"id", "parent_id", "agent_id", "session_id", "kind", "text", "result",
     "is_error", "duration_ms", "ts"}

``id`` is unique and sorts by time (``new_id``); ``parent_id`` makes the records a tree
(a session's first record has none, a tool call's parent is the prompt it answers, a
fork is a new branch from any record); ``ts`` is the ISO-8601 time it was recorded.
Records are never edited: a correction, a flag, a fold is a new record pointing at
the old ones (``refs``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Mapping
from typing import Any

import attrs

__all__ = ["ID_RANDOM_BYTES", "KINDS", "MAX_NAME", "MAX_TEXT", "Record", "clean_text",
           "new_id"]

#: What a record says happened. ``session`` marks a session's start or end (``text``:
#: start | end, plus the reason); ``prompt`` a user's turn; ``reply`` the agent's
#: answer; ``tool`` one tool call (``result``, ``is_error``, ``duration_ms``); ``flag`` an
#: operator's flag of a turn; ``event`` something the habitat itself did (a learning
#: stored, a pattern found); ``fold`` a summary of a span of records (``refs``: the
#: records it summarises, never deleted); ``note`` anything an agent chose to record.
KINDS = frozenset({"session", "prompt", "reply", "tool", "flag", "event", "fold", "note"})
#: Longest ``text`` or ``result`` kept (characters); longer ones are cut, and the record
#: says so (``truncated``).
MAX_TEXT = 8000


#: Random bytes at the end of a record id (``new_id``; the hook recorder's ids alike).
ID_RANDOM_BYTES = 8


def new_id(ts: _dt.datetime) -> str:
    """A record id: its time to the microsecond, then ``ID_RANDOM_BYTES`` random bytes as
    hex (sorts by time; two records of the same instant differ). Records often share
    an instant (a pinned clock, a batch stamped once), so the random part alone must
    keep them apart: 64 bits make a clash among a billion such records unlikely (about
    3%), where 32 bits clashed once in a hundred 9,000-record runs."""
    return f"{ts.strftime('%Y%m%dT%H%M%S%f')}-{os.urandom(ID_RANDOM_BYTES).hex()}"


#: Longest ``agent_id``, ``session_id``, ``parent_id``, ref or tag (characters).
MAX_NAME = 200


def clean_text(text: str) -> str:
    """``text`` as UTF-8 can hold it: a lone surrogate (from JSON's ``\\ud800`` or a
    file name's undecodable bytes) becomes U+FFFD instead of failing the write."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def _cut(text: str) -> tuple[str, bool]:
    text = clean_text(text)
    return (text, False) if len(text) <= MAX_TEXT else (text[:MAX_TEXT], True)


def _name(value: str, what: str) -> str:
    value = clean_text(value)
    if len(value) > MAX_NAME:
        raise ValueError(f"{what} is longer than {MAX_NAME} characters")
    return value


@attrs.frozen(kw_only=True)
class Record:
    """One loom record (see the module docstring). ``refs``: the records a ``flag`` or a
    ``fold`` is about; ``tags``: free labels; ``truncated``: ``text`` or ``result`` was cut
    to ``MAX_TEXT``."""

    id: str
    ts: str
    kind: str
    agent_id: str
    session_id: str
    text: str = ""
    parent_id: str | None = None
    result: str = ""
    is_error: bool = False
    duration_ms: int | None = None
    refs: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    truncated: bool = False

    @classmethod
    def new(cls, *, ts: _dt.datetime, kind: str, agent_id: str, session_id: str,
            text: str = "", parent_id: str | None = None, result: str = "",
            is_error: bool = False, duration_ms: int | None = None,
            refs: tuple[str, ...] = (), tags: tuple[str, ...] = ()) -> Record:
        """A new record stamped ``ts`` with a fresh id; raises ``ValueError`` for an
        unknown kind, an empty agent / session id, or a name (agent, session, parent,
        ref, tag) over ``MAX_NAME`` characters. ``text`` and ``result`` are cut to
        ``MAX_TEXT`` (``truncated``); text UTF-8 cannot hold is mended (``clean_text``)."""
        if kind not in KINDS:
            raise ValueError(f"unknown record kind {kind!r}; one of {', '.join(sorted(KINDS))}")
        if not agent_id.strip() or not session_id.strip():
            raise ValueError("a record needs an agent_id and a session_id")
        text, cut_text = _cut(text)
        result, cut_result = _cut(result)
        return cls(id=new_id(ts), ts=ts.isoformat(timespec="microseconds"), kind=kind,
                   agent_id=_name(agent_id, "agent_id"),
                   session_id=_name(session_id, "session_id"), text=text,
                   parent_id=None if parent_id is None else _name(parent_id, "parent_id"),
                   result=result, is_error=is_error, duration_ms=duration_ms,
                   refs=tuple(_name(r, "a ref") for r in refs),
                   tags=tuple(_name(t, "a tag") for t in tags),
                   truncated=cut_text or cut_result)

    @property
    def day(self) -> str:
        """The day file it belongs to (``YYYY-MM-DD`` of ``ts``)."""
        return self.ts[:10]

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object (empty optional fields left out)."""
        out: dict[str, Any] = {"id": self.id, "parent_id": self.parent_id,
                               "agent_id": self.agent_id, "session_id": self.session_id,
                               "kind": self.kind, "text": self.text, "result": self.result,
                               "is_error": self.is_error, "duration_ms": self.duration_ms,
                               "ts": self.ts}
        if self.refs:
            out["refs"] = list(self.refs)
        if self.tags:
            out["tags"] = list(self.tags)
        if self.truncated:
            out["truncated"] = True
        return out

    def to_line(self) -> bytes:
        """One line of a day file (UTF-8, ``\\n``-terminated, no other newline)."""
        return (json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":"))
                + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Record:
        """The record a line held; raises ``ValueError`` (or ``KeyError`` /
        ``TypeError``) for one that is not a record."""
        kind = str(data["kind"])
        if kind not in KINDS:
            raise ValueError(f"unknown record kind {kind!r}")
        duration = data.get("duration_ms")
        return cls(id=str(data["id"]), ts=str(data["ts"]), kind=kind,
                   agent_id=str(data["agent_id"]), session_id=str(data["session_id"]),
                   text=str(data.get("text") or ""),
                   parent_id=None if data.get("parent_id") is None else str(data["parent_id"]),
                   result=str(data.get("result") or ""), is_error=bool(data.get("is_error")),
                   duration_ms=None if duration is None else int(duration),
                   refs=tuple(str(r) for r in data.get("refs") or ()),
                   tags=tuple(str(t) for t in data.get("tags") or ()),
                   truncated=bool(data.get("truncated")))
