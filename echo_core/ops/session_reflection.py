"""Reflection on one session's transcript as it goes (issue 17 item 4): the part of a
Claude Code transcript not mined yet becomes inbox lines (``transcript_mining``, no LLM).
The Claude Code Stop and SessionEnd hooks call it (``plugins.hooks_claude.auto_reflect``).

* What: every proposal the rules find (preferences, corrections, error-then-fix pairs,
  ideas) becomes an inbox capture (no kind): ``- <today>: <title> — <category>, from
  Claude Code session <session8>: "<excerpt>"``, left for triage. With
  ``ECHO_REFLECT_HIGH=capture`` (or ``[reflect] high = "capture"`` in the config file)
  a HIGH proposal with a kind (an explicit preference) is written as that kind's note
  instead, through ``reflect`` (its duplicate gate, its content-derived operation id:
  a note that already holds the text is left alone); a stopped one goes to the inbox.
  ``ECHO_AUTO_REFLECT=off`` (or ``[reflect] auto = false``) turns it all off.
* Once per session, incrementally: ``<state dir>/session-reflection/<session>.json``
  keeps how far the transcript was read (``offset``, just after the last whole line) and
  the keys of what it gave. Each call reads from a little before the offset
  (``OVERLAP_BYTES``, so a correction or an error-then-fix pair across the boundary is
  still seen) to the end, writes only proposals whose key is new to the session, and
  moves the offset. Mining the same transcript again writes nothing; a session that grew
  gives only what is new. A title already in the inbox is not added again (another
  session said it too).
* Bounded: at most ``MAX_BYTES`` (``ECHO_REFLECT_MAX_BYTES``) of new transcript per call,
  and reading stops at ``deadline``; the result says so (``capped``) and the next call
  goes on from there. A truncated last line (still being written) is left for later.
* Nothing written on error: everything is read, mined and validated before the first
  write; errors propagate. The mark is written after the captures (atomically): a kill
  between the two repeats writes that are the same inbox line (capture appends it once)
  or an unchanged note (reflect's operation id).
* One vault lock hold (waiting at most ``lock_wait`` seconds for it) from the check of
  what the inbox already has to the last write and the mark, so two sessions ending at
  once write a line both stated once. The lock held longer by another process: nothing
  written, the mark where it was (the next call mines it), the result says ``locked``.
* Undecodable text (a lone surrogate such as the JSON escape ``\\ud83d``, half an
  emoji) in a transcript line or the session id becomes U+FFFD: the rest is kept.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from echo_core.errors import EchoError, ExitCode
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.capture_request import validate_request
from echo_core.ops.proposals import HIGH_FROM, Proposal, validate_proposal
from echo_core.protocols import BackendUnavailable
from echo_core.tempfiles import temp_name
from echo_core.user_json import SURROGATE_ESCAPE, with_valid_text
from echo_core.vault import INBOX_PATH, MARKER_PATH

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.ops.transcript_mining import MinedProposal

__all__ = ["SessionMark", "SessionReflection", "read_mark", "reflect_session_transcript"]

OVERLAP_BYTES = 64 * 1024
MAX_BYTES = 8 * 1024 * 1024
MAX_BYTES_ENV = "ECHO_REFLECT_MAX_BYTES"
HIGH_ENV = "ECHO_REFLECT_HIGH"
AUTO_ENV = "ECHO_AUTO_REFLECT"
MARKS_FOLDER = "session-reflection"
MAX_LINE_BYTES = 8 * 1024 * 1024
#: Seconds a call waits for the vault lock by default (``storage.lock``'s own default).
LOCK_WAIT = 10.0
_EXCERPT_CHARS = 160
#: reflect's outcomes for a note that did not write it: the proposal goes to the inbox.
_STOPPED = ("gated", "contradiction", "error")


@attrs.frozen
class SessionMark:
    """How far a session's transcript was mined and the keys it gave."""

    offset: int = 0
    keys: tuple[str, ...] = ()


@attrs.frozen
class SessionReflection:
    """What one call did: the transcript read from ``start`` to ``offset`` (of ``size``
    bytes), whether it stopped early (``capped``: the size cap or the deadline; the rest
    is read next time), ``written``: ``"<outcome>: <title>"`` per proposal, and
    ``locked``: the vault lock was held by another process longer than the call waits
    for it (nothing written, ``offset`` the mark as it was)."""

    start: int
    offset: int
    size: int
    capped: bool
    written: tuple[str, ...] = ()
    locked: bool = False


def _setting(ctx: EchoContext, env: str, key: str) -> object:
    raw = str(ctx.env.get(env, "")).strip().lower()
    if raw:
        return raw
    section = ctx.config.raw.get("reflect")
    return section.get(key) if isinstance(section, dict) else None


def enabled(ctx: EchoContext) -> bool:
    """Whether reflection on sessions is on (the default)."""
    value = _setting(ctx, AUTO_ENV, "auto")
    return value not in ("0", "off", "false", "no", False)


def high_captured(ctx: EchoContext) -> bool:
    """Whether HIGH proposals are written as notes (``capture``) rather than inboxed."""
    return _setting(ctx, HIGH_ENV, "high") == "capture"


def _max_bytes(ctx: EchoContext) -> int:
    try:
        value = int(str(ctx.env.get(MAX_BYTES_ENV, "")).strip() or MAX_BYTES)
    except ValueError:
        return MAX_BYTES
    return value if value > 0 else MAX_BYTES


def mark_name(session_id: object) -> str | None:
    """A safe file name for ``session_id`` (None when there is no usable id)."""
    if not isinstance(session_id, str):
        return None
    name = re.sub(r"[^A-Za-z0-9._-]", "_", session_id.strip())[:128].strip(".")
    return name or None


def _mark_path(ctx: EchoContext, name: str) -> Path:
    return Path(ctx.state_dir) / MARKS_FOLDER / f"{name}.json"


def read_mark(ctx: EchoContext, session_id: str) -> SessionMark:
    """The session's mark (an empty one when absent or unreadable)."""
    name = mark_name(session_id)
    if name is None:
        return SessionMark()
    try:
        raw = json.loads(_mark_path(ctx, name).read_text(encoding="utf-8"))
        offset, keys = raw["offset"], raw["keys"]
        if isinstance(offset, int) and offset >= 0 and isinstance(keys, list) \
                and all(isinstance(k, str) for k in keys):
            return SessionMark(offset, tuple(keys))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return SessionMark()


def _write_mark(ctx: EchoContext, name: str, mark: SessionMark) -> None:
    target = _mark_path(ctx, name)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(temp_name(target.name))
    tmp.write_text(json.dumps({"offset": mark.offset, "keys": list(mark.keys)}),
                   encoding="utf-8")
    os.replace(tmp, target)


def _window(path: str, start: int, limit: int, deadline: float,
            out: dict[str, int]) -> Iterator[bytes]:
    """Whole lines of ``path`` from byte ``start`` (a partial first line skipped when
    ``start`` is not a line start) while fewer than ``limit`` bytes were read and before
    ``deadline`` (else ``out["capped"]`` is 1); ``out["end"]`` is the offset just after
    the last whole line given. An over-long line is skipped."""
    with open(path, "rb") as stream:
        if start > 0:
            stream.seek(start - 1)
            if stream.read(1) != b"\n":
                stream.readline(MAX_LINE_BYTES)  # the rest of a line read before
        out["end"] = stream.tell()
        read = 0
        while True:
            if read >= limit or time.monotonic() >= deadline:
                out["capped"] = 1
                return
            line = stream.readline(MAX_LINE_BYTES)
            if not line.endswith(b"\n"):
                if len(line) < MAX_LINE_BYTES:
                    return  # the end, or a last line still being written
                while line and not line.endswith(b"\n"):  # an over-long line: dropped
                    line = stream.readline(MAX_LINE_BYTES)
                out["end"] = stream.tell()
                continue
            read += len(line)
            out["end"] = stream.tell()
            yield _without_lone_surrogates(line)


def _without_lone_surrogates(line: bytes) -> bytes:
    """``line`` with every lone surrogate its JSON strings hold (a ``\\ud83d`` escape
    without its pair, which no capture can write) replaced by U+FFFD; a line without a
    surrogate escape, or that is not JSON, as it is (the parser skips the latter)."""
    if SURROGATE_ESCAPE.search(line) is None:
        return line
    try:
        record = with_valid_text(json.loads(line.decode("utf-8", errors="replace")))
    except (ValueError, RecursionError):
        return line
    return json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n"


def _session8(session_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "", session_id)[:8].lower() or "session"


def _excerpt(proposal: MinedProposal) -> str:
    text = proposal.excerpts[0] if proposal.excerpts else proposal.body.split("\n", 1)[0]
    text = " ".join(text.split())
    return text if len(text) <= _EXCERPT_CHARS else text[: _EXCERPT_CHARS - 1] + "…"


def inbox_request(proposal: MinedProposal, session_id: str) -> CaptureRequest:
    """The inbox capture of ``proposal`` mined from session ``session_id``."""
    body = (f"{proposal.category}, from Claude Code session {_session8(session_id)}: "
            f"\"{_excerpt(proposal)}\"")
    return CaptureRequest(title=proposal.title, body=body,
                          sources=(f"transcript:{session_id}",))


def _inbox_text(ctx: EchoContext) -> str:
    storage = ctx.vault.storage
    return storage.read(INBOX_PATH) if storage.exists(INBOX_PATH) else ""


_Planned = tuple["MinedProposal", Proposal | None, CaptureRequest]


def _plan(ctx: EchoContext, proposals: Sequence[MinedProposal],
          session_id: str) -> list[_Planned]:
    """(proposal, its validated note proposal or None, its inbox request) for each, all
    validated before anything is written."""
    high = high_captured(ctx)
    plan: list[_Planned] = []
    for index, proposal in enumerate(proposals):
        inbox = validate_request(inbox_request(proposal, session_id), ctx.manifest)
        note = None
        if high and proposal.kind and proposal.confidence >= HIGH_FROM:
            note = validate_proposal(index, proposal.to_proposal(), ctx.manifest,
                                     list_name="mined")
        plan.append((proposal, note, inbox))
    return plan


def _write(ctx: EchoContext, note: Proposal | None, inbox: CaptureRequest) -> str:
    """Write one planned proposal: as a note through ``reflect`` (idempotent, gate-aware)
    when planned so and not stopped, else as its inbox line; the outcome."""
    from echo_core.ops.reflect import reflect

    if note is not None:
        item = reflect(ctx, [note], apply=True).data.items[0]
        if item.classification not in _STOPPED:
            return str(item.classification)
    return str(capture(ctx, inbox).action)


def reflect_session_transcript(ctx: EchoContext, session_id: object, transcript_path: object,
                               *, deadline: float,
                               lock_wait: float = LOCK_WAIT) -> SessionReflection | None:
    """Mine the part of the session's transcript not mined yet and write what it gives
    (module docstring). None when there is nothing to do: no usable session id or
    transcript file, reflection turned off, or no vault (its marker missing). The vault
    lock not had within ``lock_wait`` seconds: a ``locked`` result, nothing written.
    Errors (an unreadable inbox, a capture that fails) propagate; before the first
    write, nothing has been written, and the mark moves only after the writes."""
    name = mark_name(session_id)
    if name is None or not isinstance(session_id, str) or not isinstance(transcript_path, str) \
            or not transcript_path or not enabled(ctx):
        return None
    if not os.path.isfile(transcript_path) or not ctx.vault.storage.exists(MARKER_PATH):
        return None
    from echo_core.ops.transcript_mining import mine_transcript

    mark = read_mark(ctx, session_id)
    session_id = str(with_valid_text(session_id))
    size = os.path.getsize(transcript_path)
    if size < mark.offset:  # rewritten from scratch: start over
        mark = SessionMark()
    if size == mark.offset:
        return SessionReflection(mark.offset, mark.offset, size, False)
    start = max(0, mark.offset - OVERLAP_BYTES)
    out = {"end": start, "capped": 0}
    limit = _max_bytes(ctx) + (mark.offset - start)
    found = mine_transcript(_window(transcript_path, start, limit, deadline, out),
                            source=session_id)
    offset = max(out["end"], mark.offset)
    seen = set(mark.keys)
    with contextlib.ExitStack() as held:
        try:  # the inbox check and the writes in one hold: parallel ends write a line once
            if any(p.key() not in seen for p in found):  # else only the mark moves
                held.enter_context(ctx.vault.storage.lock(timeout=lock_wait))
        except BackendUnavailable:
            pass  # the vault is away: capture queues each line in the outbox
        except EchoError as error:  # a backend may raise plain 75, not LockHeldError
            if error.code != ExitCode.LOCK_HELD:
                raise
            return SessionReflection(mark.offset, mark.offset, size, False, locked=True)
        inbox_text = _inbox_text(ctx)
        fresh = [p for p in found
                 if p.key() not in seen and f": {p.title} — " not in inbox_text]
        plan = _plan(ctx, fresh, session_id)
        written = tuple(f"{_write(ctx, note, inbox)}: {p.title}" for p, note, inbox in plan)
        keys = mark.keys + tuple(p.key() for p in found if p.key() not in seen)
        _write_mark(ctx, name, SessionMark(offset, tuple(dict.fromkeys(keys))))
    return SessionReflection(start, offset, size, bool(out["capped"]) and offset < size,
                             written)
