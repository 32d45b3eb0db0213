"""The learn verbs' work: store a learning, list, approve, reject (``learn_verbs``).

* ``store_learning``: validate (``MAX_CONTENT`` characters of UTF-8, a known type, tags
  as words), redact secrets and drop ``<private>`` text (SPEC §2.1, as every write
  path) in every field the caller gives (content, rationale, tags — before they are
  lower-cased —, agent and session ids, project; ``reject``: its reason), then
  ``LearningStore.store``. Writes nothing to the vault. ``project``: the project it was
  learned in, as the caller names it ("": every project); None takes the current
  folder's (``learned_in``: ``habitat learn``'s default).
* ``learned_in``: the project of a folder as ``project_names.project_of`` names it (the
  repository holding it, else the folder's own name), none for the home folder and the
  folders above it (no project: what is learned there is for every project).
* ``list_learnings``: due decays, the sync of the insight notes, then the learnings.
* ``approve`` / ``reject``: the decision in the store and in the insight note (a new
  note on a first approval, scoped to the learning's project: where it was learned, not
  where it is approved; its ``status`` line otherwise). The note is written first,
  the store after: killed between the two, the next sync reads the note's status back.

Errors: 2 for invalid input (naming the field), 44 for an unknown learning id, 78 when
the store file is damaged (it is never replaced: move it aside to start afresh).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import attrs

from plugins.habitat.learnings import STATES, TYPES, Learning, LearningStore, Provenance
from plugins.habitat.paths import LEARNINGS_FILE

__all__ = ["MAX_CONTENT", "DecisionResult", "LearningsResult", "StoreResult", "approve",
           "learned_in", "list_learnings", "open_store", "reject", "store_learning"]

MAX_CONTENT = 4000
MAX_RATIONALE = 2000
MAX_TAGS = 20
MAX_TAG = 50
MAX_ID = 200
MAX_REASON = 500
STORE_FILE = LEARNINGS_FILE
_TAG_RE = re.compile(r"[^\w./-]+", re.UNICODE)
#: Control characters no text of a learning may hold (tabs and line breaks may).
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@attrs.frozen
class StoreResult:
    """The learning stored or reinforced, how (``stored`` / ``reinforced`` /
    ``revived``), its similarity to what it reinforced, and the secret rules that fired."""

    learning: Learning
    outcome: str
    similarity: float = 0.0
    redacted: tuple[str, ...] = ()


@attrs.frozen
class LearningsResult:
    """The learnings listed (oldest first), the demotions and sync changes made first,
    and the insight notes that could not be used."""

    learnings: tuple[Learning, ...]
    total: int
    demoted: tuple[str, ...] = ()
    synced: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()


@attrs.frozen
class DecisionResult:
    """The learning after a decision, its insight note (None when it has none) and
    whether that note's write waits in the outbox (the vault was unreachable)."""

    learning: Learning
    insight_path: str | None = None
    queued: bool = False


def open_store(ctx: Any) -> LearningStore:
    """The learnings store of ``ctx``'s vault (``<habitat_dir>/learnings.sqlite``; for a
    PostgreSQL vault, its tables there: ``learnings_pg``)."""
    from plugins.habitat.paths import habitat_dir
    from plugins.habitat.pg_sql import pg_storage

    folder = habitat_dir(ctx)
    storage = pg_storage(ctx)
    if storage is None:
        return LearningStore(folder / STORE_FILE)
    from plugins.habitat.learnings_pg import learnings_db

    return LearningStore(folder / STORE_FILE, db=learnings_db(storage, folder))


def _damaged(ctx: Any, exc: Exception) -> Exception:
    from echo_core import EchoError, ExitCode

    return EchoError(f"the learnings store is not readable ({exc}); move "
                     f"{open_store(ctx).where()} aside to start a new one (nothing is deleted "
                     "for you)", ExitCode.NOT_CONFIGURED)


def _one_line(value: str, field: str, limit: int) -> str:
    from echo_core import usage_error

    clean = " ".join(value.split())
    if _CONTROL_RE.search(clean):
        raise usage_error(f"{field}: control characters are not allowed")
    if len(clean) > limit:
        raise usage_error(f"{field}: {len(clean)} characters; at most {limit}")
    return clean


def _utf8(value: str, field: str) -> None:
    from echo_core import usage_error

    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise usage_error(f"{field}: not valid UTF-8 text (a lone surrogate or undecodable "
                          "bytes); pass the text as UTF-8") from None


def clean_tags(tags: Sequence[str]) -> list[str]:
    """Tags as words: lowercase, ``#`` dropped, other separators one ``-``; blanks and
    repeats dropped. Raises ``usage_error`` past ``MAX_TAGS`` or ``MAX_TAG``."""
    from echo_core import usage_error

    out: list[str] = []
    for raw in tags:
        _utf8(raw, "tags")
        tag = _TAG_RE.sub("-", raw.strip().lstrip("#").casefold()).strip("-./")
        if len(tag) > MAX_TAG:
            raise usage_error(f"tags: {tag[:20]!r}… is longer than {MAX_TAG} characters")
        if tag and tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise usage_error(f"tags: {len(out)} tags; at most {MAX_TAGS}")
    return out


def learned_in(cwd: str, home: str) -> str:
    """The project of folder ``cwd`` (module docstring): "" when it is ``home`` or a
    folder above it (``/`` too), else ``project_names.project_of(cwd)``."""
    from plugins.habitat.project_names import project_of

    if not cwd or "\x00" in cwd:
        return ""
    here = os.path.realpath(cwd)
    if home and "\x00" not in home:
        top = os.path.realpath(home)
        if here == top or top.startswith(here.rstrip(os.sep) + os.sep):
            return ""
    return project_of(here)


def store_learning(ctx: Any, content: str, *, type: str = "learning",
                   tags: Sequence[str] = (), agent_id: str = "", session_id: str = "",
                   rationale: str = "", project: str | None = "") -> Any:
    """Store ``content`` as a learning of ``type`` (module docstring). ``agent_id``
    defaults to ``ECHO_AGENT_ID``, else the surface (cli / mcp / core); ``session_id`` to
    ``ECHO_SESSION_ID``, else ""; ``project`` None: the current folder's
    (``learned_in``)."""
    from echo_core import Envelope, current_surface, redact, strip_private, usage_error

    if project is None:
        project = learned_in(os.getcwd(), ctx.env.get("HOME") or os.path.expanduser("~"))
    for value, field in ((content, "content"), (rationale, "rationale"),
                         (agent_id, "agent_id"), (session_id, "session_id"),
                         (project, "project")):
        _utf8(value, field)
    if type not in TYPES:
        raise usage_error(f"type: {type!r} is not one of {', '.join(TYPES)}")
    visible = strip_private(content)
    if _CONTROL_RE.search(visible):
        raise usage_error("content: control characters are not allowed (tabs and line "
                          "breaks are)")
    if not visible.strip():
        raise usage_error("content: say what was learned (the text is empty)")
    if len(visible) > MAX_CONTENT:
        raise usage_error(f"content: {len(visible)} characters; a learning is one idea, at "
                          f"most {MAX_CONTENT} characters (put the details in a note)")
    fired: list[str] = []

    def scrubbed(text: str) -> str:  # before tags are lower-cased: `AKIA...` is a key
        done = redact(text)
        fired.extend(done.found)
        return done.text

    cleaned = scrubbed(visible.strip())
    rationale_text = _one_line(scrubbed(strip_private(rationale)), "rationale", MAX_RATIONALE)
    agent = _one_line(scrubbed(agent_id or ctx.env.get("ECHO_AGENT_ID", "")
                               or current_surface()), "agent_id", MAX_ID)
    session = _one_line(scrubbed(session_id or ctx.env.get("ECHO_SESSION_ID", "")),
                        "session_id", MAX_ID)
    tag_list = clean_tags([scrubbed(t) for t in tags])
    scope = _one_line(scrubbed(project), "project", MAX_ID)
    store = open_store(ctx)
    try:
        store.decay(ctx.today(), ctx.now())
        outcome = store.store(cleaned, type=type, tags=tag_list, agent_id=agent,
                              session_id=session, rationale=rationale_text, now=ctx.now(),
                              project=scope)
    except Exception as exc:
        _reraise_damaged(ctx, exc)
        raise
    learning = outcome.learning
    where = (f" for project {learning.project}" if learning.project else
             " for every project" if scope else "")
    message = {"stored": f"stored learning {learning.id}{where} (pending review)",
               "reinforced": f"reinforced learning {learning.id}{where} (recurrence "
                             f"{learning.recurrence}, {learning.state})",
               "revived": f"learning {learning.id} is back in review: learned "
                          f"{learning.recurrence}x, rejected before ({learning.reason})"}
    return Envelope(True, outcome.action, message[outcome.action],
                    StoreResult(learning, outcome.action, outcome.score,
                                tuple(dict.fromkeys(fired))))


def _reraise_damaged(ctx: Any, exc: Exception) -> None:
    from plugins.habitat.learnings import StoreUnreadable

    if isinstance(exc, StoreUnreadable):
        raise _damaged(ctx, exc) from None


def _prepared(ctx: Any) -> tuple[LearningStore, tuple[str, ...], Any]:
    """The store after due decays and the sync of the insight notes."""
    from plugins.habitat.insight_sync import sync_insights

    store = open_store(ctx)
    try:
        demoted = store.decay(ctx.today(), ctx.now())
    except Exception as exc:
        _reraise_damaged(ctx, exc)
        raise
    lines = tuple(f"{d.id}: {d.before} -> {d.after}" for d in demoted)
    return store, lines, sync_insights(ctx, store)


def list_learnings(ctx: Any, *, state: str | None = None, type: str | None = None,
                   limit: int = 50) -> Any:
    """The learnings (of ``state`` / ``type``), newest ``limit`` of them, oldest first."""
    from echo_core import Envelope, usage_error

    if state is not None and state not in STATES:
        raise usage_error(f"state: {state!r} is not one of {', '.join(STATES)}")
    if type is not None and type not in TYPES:
        raise usage_error(f"type: {type!r} is not one of {', '.join(TYPES)}")
    store, demoted, report = _prepared(ctx)
    found = store.list(state, type=type)
    shown = tuple(found[-limit:])
    what = "learning" if len(found) == 1 else "learnings"
    message = f"{len(found)} {state + ' ' if state else ''}{what}" + (
        f", the newest {len(shown)} shown"
                                        if len(shown) < len(found) else "")
    return Envelope(True, "listed", message,
                    LearningsResult(shown, len(found), demoted, report.changed,
                                    report.problems))


def find_learning(store: LearningStore, key: str) -> Learning:
    """The learning ``key`` names: its id, or a prefix of 4+ characters naming one.
    Raises 44 when none, 2 when the prefix names several."""
    from echo_core import not_found, usage_error

    key = key.strip().lower()
    found = store.get(key)
    if found is not None:
        return found
    if len(key) >= 4 and re.fullmatch(r"[0-9a-f]+", key):
        matches = store.matching(key)
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise usage_error(f"{key!r} names {len(matches)} learnings "
                              f"({', '.join(m.id for m in matches)}); give more of the id")
    raise not_found(f"no learning {key!r}; `echo-memory habitat learnings` lists them")


def approve(ctx: Any, key: str) -> Any:
    """Approve a learning: its insight note in the vault (module docstring)."""
    from echo_core import Envelope
    from plugins.habitat.insight_notes import write_insight

    store, _, _ = _prepared(ctx)
    learning = find_learning(store, key)
    provenance: list[Provenance] = store.provenance(learning.id)
    path, queued = write_insight(ctx, learning, provenance, "approved",
                                 project=learning.project)
    decided = store.decide(learning.id, "approved", now=ctx.now(), why="approved",
                           insight_path=path, note_status="approved")
    message = (f"approved learning {decided.id}; its insight is {path}"
               + (" (queued: the vault is unreachable)" if queued else ""))
    return Envelope(True, "approved", message, DecisionResult(decided, path, queued))


def reject(ctx: Any, key: str, reason: str) -> Any:
    """Reject a learning, keeping ``reason``; an insight note it had says rejected."""
    from echo_core import Envelope, redact, usage_error
    from plugins.habitat.insight_notes import write_insight

    _utf8(reason, "reason")
    why = _one_line(redact(reason).text, "reason", MAX_REASON)
    if not why:
        raise usage_error("reason: say why it is rejected (kept with the learning)")
    store, _, _ = _prepared(ctx)
    learning = find_learning(store, key)
    path, queued = None, False
    if learning.insight_path and ctx.vault.storage.exists(learning.insight_path):
        path, queued = write_insight(ctx, learning, (), "rejected", why)
    decided = store.decide(learning.id, "rejected", now=ctx.now(), why="rejected",
                           reason=why, note_status="rejected" if path else None)
    message = f"rejected learning {decided.id}: {why}" + (
        f"; its insight {path} says so" if path else "")
    return Envelope(True, "rejected", message, DecisionResult(decided, path, queued))
