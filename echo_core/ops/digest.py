"""Rendering and trimming of the ``load`` digest (SPEC §4.1). Pure functions: no I/O.

``load`` reads the vault into a ``VaultSnapshot``; ``render_digest`` turns it into the
ordered sections and the digest text, within a character budget.

Brief digest, in order: the marker line; ``## Scope``; ``## Fact / Pattern`` (the
preferences note's section in full, then one line per semantic memory note, most recently
updated first: ``ops.semantic_lines``); ``## Observations (last 10 of N)``;
``## Always loaded`` (notes with ``always_load: true``: ``ops.always_load``; at most
1/``ALWAYS_LOAD_SHARE`` of the budget, the first note past it cut to the room left, the
others counted as not shown);
``## Last session: <stem>`` (its Goal / Decisions Made / Open Threads / Suggested Next
Step); ``## Agent Log (<today>)`` (capture's own created / updated lines summed up in one
line, the other lines as written); ``## Inbox`` (count and oldest age only, never the
items). Sections are separated by one blank line.

Over budget (the steps are ``digest_fit.fit``), first the scope text and the Fact /
Pattern section's own text are each cut to their share of the budget (1/``SCOPE_SHARE``,
1/``FACTS_SHARE``; a text within its share is left whole), ending with
``(truncated) the rest not shown (N chars; see <path of the note>)``. Then the semantic
memory lines past 1/``SEMANTIC_SHARE`` of the budget go (least recently updated first,
only as many as it takes to fit), so a long semantic list cannot push the observations,
the last session or the always-loaded notes out of the brief. Then the
trimmable sections lose items in this order until the text fits: observations (oldest
first), agent log (oldest first), last-session summary (from its end), always-loaded notes
(from the last), the semantic memory lines left (least recently updated first). Each trimmed
section ends with a ``(truncated) N ... not shown`` line, N counting every item of the
source left out (so the shown and the not shown add up; a section trimmed to nothing has
no "last 0" title). If that is not enough, the scope and Fact / Pattern texts are cut
further, down to ``(truncated) not shown (N chars; see <path>)``; so every section keeps
at least its heading. Only if the text still does not fit (a budget too small for the
headings) is it cut at the budget, ending with ``(truncated)``.
The result never exceeds the budget.

The full digest is the brief digest (within the brief budget) followed by the full texts
of the current-context note, the operator preferences and the last session log, which
share the rest of the full budget; they are trimmed from their ends in reverse order
(session log first), with the same markers and the same hard cut as the last resort.
"""

from __future__ import annotations

import datetime as _dt
import re

import attrs

from echo_core.agent_log_lines import capture_record
from echo_core.frontmatter import split_frontmatter
from echo_core.notes import parse_note, section_body
from echo_core.ops.always_load import always_load_item
from echo_core.ops.digest_fit import TRUNCATED, Block, Section, cap_texts, fit, join, sections_text
from echo_core.ops.inbox_marks import EXPIRE_AFTER_DAYS
from echo_core.ops.links import link_target
from echo_core.ops.scope import (
    PLACEHOLDER,
    count_phrase,
    shown_stamp,
    tally_sessions,
)
from echo_core.ops.semantic_lines import NO_FACTS, semantic_line
from echo_core.ops.triage import parse_inbox, unread_lines

__all__ = ["ALWAYS_LOAD_MIN_CHARS", "ALWAYS_LOAD_NOTE_CHARS", "ALWAYS_LOAD_SHARE",
           "CAPTURES_NAMED", "FACTS_SHARE", "FULL_TRIM_ORDER", "LOG_HEADING",
           "OBSERVATIONS_SHOWN", "SCOPE_SHARE", "SEMANTIC_SHARE", "SUMMARY_HEADINGS",
           "TRIM_ORDER", "TRUNCATED", "Read", "Section", "SemanticMemory", "VaultSnapshot",
           "render_digest", "sections_text"]

OBSERVATIONS_SHOWN = 10
#: Notes named per verb in the brief's one line about today's captures.
CAPTURES_NAMED = 8
SUMMARY_HEADINGS = ("Goal", "Decisions Made", "Open Threads", "Suggested Next Step")
LOG_HEADING = "Log"  # where session-end puts a log body without summary sections
#: Brief sections trimmed when over budget, first to last.
TRIM_ORDER = ("observations", "agent-log", "last-session", "always-load", "preferences")
#: The always-load block's cap: this fraction (1/N) of the brief budget.
ALWAYS_LOAD_SHARE = 4
#: Each always-loaded note's text is cut at this many characters.
ALWAYS_LOAD_NOTE_CHARS = 1200
#: A note that does not fit the always-load share whole is shown cut when at least this
#: many characters of it fit; else it is counted as not shown.
ALWAYS_LOAD_MIN_CHARS = 160
#: Over budget, the scope text is first cut to this fraction (1/N) of the brief budget.
SCOPE_SHARE = 8
#: Over budget, the Fact / Pattern section's own text is first cut to 1/N of the budget.
FACTS_SHARE = 4
#: Over budget, the semantic memory lines past 1/N of the budget are trimmed before the
#: other sections (the lines within it are trimmed last: ``TRIM_ORDER``).
SEMANTIC_SHARE = 4
#: Full-text sections trimmed when over the full budget, first to last.
FULL_TRIM_ORDER = ("session-note", "preferences-note", "context-note")
_ITEM_START = re.compile(r"(?:[-*+]|\d+[.)])\s")
_FENCE_RUN = re.compile(r"^[ \t]*`{3,}", re.MULTILINE)


@attrs.frozen
class Read:
    """One vault file as ``load`` read it: ``status`` is ok | absent | error."""

    path: str
    status: str
    text: str = ""
    error: str = ""


@attrs.frozen
class SemanticMemory:
    """The semantic memory notes ``load`` read (``folder``; ``unread`` more were not)."""

    folder: str = "_agent/memory/semantic"
    notes: tuple[Read, ...] = ()
    error: str = ""  # the folder could not be listed
    unread: int = 0


@attrs.frozen
class VaultSnapshot:
    """Everything the digest is made from (read by ``load``, in parallel)."""

    today: _dt.date
    expected_schema: str
    marker: Read
    preferences: Read
    context: Read
    heartbeat: Read
    daily: Read
    inbox: Read
    sessions: tuple[str, ...] = ()
    sessions_error: str = ""
    session_log: Read | None = None  # None: the heartbeat points at no session
    heartbeat_time: str | None = None
    outbox_note: str = ""
    semantic: SemanticMemory = SemanticMemory()
    always_load: tuple[Read, ...] = ()  # the notes with ``always_load: true``


def _fixed(name: str, status: str, text: str) -> Block:
    head, _, rest = text.partition("\n")
    return Block(name, status, lambda _n: head, fixed=rest)


def _items(body: str) -> list[str]:
    """Top-level list items of ``body`` (continuation lines stay with their item)."""
    items: list[str] = []
    for line in body.splitlines():
        if not line.strip():
            continue
        if _ITEM_START.match(line) or not items:
            items.append(line.rstrip())
        else:
            items[-1] += "\n" + line.rstrip()
    return items


_count = count_phrase


def _problem(read: Read, what: str) -> str:
    if read.status == "absent":
        return f"({what} is absent: {read.path})"
    return f"(could not read {read.path}: {read.error})"


# -- brief sections -------------------------------------------------------------------


def _marker_block(snap: VaultSnapshot, logged: int) -> Block:
    if snap.marker.status != "ok":
        return _fixed("marker", snap.marker.status, "echo-memory vault: " + _problem(
            snap.marker, "the marker"))
    schema = str(parse_note(snap.marker.path, snap.marker.text).frontmatter.get(
        "schema_version", "?"))
    line = f"echo-memory vault: schema {schema}"
    if schema != snap.expected_schema:
        line += (f" (this echo-memory expects {snap.expected_schema}; "
                 "run `echo-memory doctor`)")
    if snap.session_log is not None:
        line += (f", bootstrapped: {_count(logged, 'session')} logged, last committed "
                 f"{snap.heartbeat_time}")
    else:
        line += (", not bootstrapped yet: no session committed "
                 "(end this session with `echo-memory session-end`)")
    if snap.outbox_note:
        line += f"\n{snap.outbox_note}"
    return _fixed("marker", "ok", line)


def _scope_updated(read: Read) -> str:
    """The current context's ``scope_updated`` ("" when unread or unset)."""
    if read.status != "ok":
        return ""
    return str(parse_note(read.path, read.text).frontmatter.get("scope_updated") or "")


def _scope_block(snap: VaultSnapshot, updated: str, sessions_since: int) -> Block:
    read = snap.context
    if read.status != "ok":
        return _fixed("scope", read.status, "## Scope\n" + _problem(read, "the current context"))
    scope = section_body(read.text, "Scope") or ""
    if snap.sessions_error:
        since = "sessions since unknown"
    else:
        since = f"{_count(sessions_since, 'session')} logged since"
    if not scope or scope == PLACEHOLDER:
        scope = '(no scope set yet; set one with `echo-memory scope set "..."`)'
    title = f"## Scope (updated {shown_stamp(updated) or 'never'}; {since})"
    return Block("scope", "ok", lambda _n: title, fixed=scope, cap_share=SCOPE_SHARE,
                 source=read.path)


def _semantic_items(memory: SemanticMemory) -> tuple[list[str], list[str]]:
    """The brief's lines for the semantic memory notes, most recently updated first, and
    notes about what could not be read."""
    dated: list[tuple[str, str]] = []
    problems: list[str] = []
    for read in memory.notes:
        if read.status != "ok":
            problems.append(_problem(read, "a semantic memory note"))
        elif (entry := semantic_line(read.path, read.text)) is not None:
            dated.append(entry)
    dated.sort(key=lambda entry: entry[0], reverse=True)  # stable: names order ties
    if memory.error:
        problems.append(f"(could not list {memory.folder}: {memory.error})")
    if memory.unread:
        problems.append(f"({_count(memory.unread, 'more semantic note')} not read; see "
                        f"{memory.folder})")
    return [line for _, line in dated], problems


def _preference_blocks(snap: VaultSnapshot) -> list[Block]:
    """Fact / Pattern: the preferences note's own section in full, then one line per
    semantic memory note (trimmed last, from the least recently updated); then the
    preferences note's Observations."""
    read = snap.preferences
    semantic, problems = _semantic_items(snap.semantic)
    if read.status != "ok":
        problem = _problem(read, "the operator-preferences note")
        facts = problem
        obs = _fixed("observations", read.status, "## Observations\n" + problem)
    else:
        facts = section_body(read.text, "Fact / Pattern") or ""
        observations = _items(section_body(read.text, "Observations") or "")
        total = len(observations)
        recent = observations[-OBSERVATIONS_SHOWN:]
        if not recent:
            obs = _fixed("observations", "ok", "## Observations\n(none yet)")
        else:
            obs = Block("observations", "ok", lambda n: (
                             f"## Observations (last {n} of {total})" if n
                             else "## Observations"),
                         items=recent, noun="observations", hint=read.path, total=total)
    fixed = "\n".join(part for part in (facts, *problems) if part)
    if not fixed and not semantic:
        fixed = NO_FACTS
    prefs = Block("preferences", read.status, lambda _n: "## Fact / Pattern", fixed=fixed,
                   items=semantic, keep_last=False, noun="semantic notes",
                   hint=snap.semantic.folder, cap_share=FACTS_SHARE, source=read.path)
    return [prefs, obs]


def _summary_lines(text: str) -> list[str]:
    lines: list[str] = []
    for heading in SUMMARY_HEADINGS:
        body = section_body(text, heading)
        if body:
            lines.append(f"### {heading}")
            lines += [line.rstrip() for line in body.splitlines()]
    if lines:
        return lines
    log = section_body(text, LOG_HEADING)  # no summary sections: fall back to the log
    if log is None:
        log = "\n".join(line for line in split_frontmatter(text)[1].splitlines()
                        if not line.startswith("#"))
    kept = [line.rstrip() for line in log.splitlines() if line.strip()]
    return [f"### {LOG_HEADING}", *kept] if kept else []


def _session_block(snap: VaultSnapshot) -> Block:
    read = snap.session_log
    if read is None:
        status = snap.heartbeat.status if snap.heartbeat.status != "ok" else "absent"
        detail = ("(no session committed yet)" if snap.heartbeat.status in ("ok", "absent")
                  else _problem(snap.heartbeat, "the heartbeat"))
        return _fixed("last-session", status, f"## Last session\n{detail}")
    if read.status != "ok":
        return _fixed("last-session", "error",
                      f"## Last session\n(the heartbeat points at {read.path}, which "
                      + ("is missing)" if read.status == "absent" else f"failed: {read.error})"))
    title = f"## Last session: [[{link_target(read.path)}]] (committed {snap.heartbeat_time})"
    lines = _summary_lines(read.text)
    if not lines:
        return _fixed("last-session", "ok", f"{title}\n(the log is empty)")
    return Block("last-session", "ok", lambda _n: title, items=lines, keep_last=False,
                  noun="summary lines", hint=read.path)


def _agent_log_block(snap: VaultSnapshot) -> Block:
    day = snap.today.isoformat()
    read = snap.daily
    if read.status == "absent":
        return _fixed("agent-log", "absent", f"## Agent Log ({day})\n(no daily note yet today)")
    if read.status != "ok":
        return _fixed("agent-log", "error",
                      f"## Agent Log ({day})\n" + _problem(read, "the daily note"))
    logged = _items(section_body(read.text, "Agent Log") or "")
    items = [item for item in logged if capture_record(item) is None]
    summary = _captures_line(logged)
    if not items:
        return _fixed("agent-log", "ok", f"## Agent Log ({day})\n"
                      + (summary or "(nothing logged yet today)"))
    return Block("agent-log", "ok", lambda _n: f"## Agent Log ({day})", fixed=summary,
                  items=items, noun="agent-log lines", hint=read.path)


def _captures_line(logged: list[str]) -> str:
    """capture's own "created/updated <kind> [[note]]" lines summed up in one line
    ("captured today: created 2 notes ([[a]], [[b]]); updated 1 note ([[c]])"), at most
    ``CAPTURES_NAMED`` links per verb; "" when there are none."""
    by_verb: dict[str, list[str]] = {}
    for item in logged:
        record = capture_record(item)
        if record is not None and record[1] not in by_verb.setdefault(record[0], []):
            by_verb[record[0]].append(record[1])
    parts = []
    for verb, targets in sorted(by_verb.items()):
        named = ", ".join(f"[[{t}]]" for t in targets[:CAPTURES_NAMED])
        more = len(targets) - CAPTURES_NAMED
        named += f" and {more} more" if more > 0 else ""
        parts.append(f"{verb} {_count(len(targets), 'note')} ({named})")
    return f"captured today: {'; '.join(parts)}" if parts else ""


def _inbox_block(snap: VaultSnapshot) -> Block:
    read = snap.inbox
    if read.status == "absent":
        return _fixed("inbox", "absent", "## Inbox\n(no inbox file yet)")
    if read.status != "ok":
        return _fixed("inbox", "error", "## Inbox\n" + _problem(read, "the inbox"))
    items = parse_inbox(read.text, snap.today)
    unread = unread_lines(read.text, snap.today)
    other = (f"; {_count(len(unread), 'line')} not in the item form `- YYYY-MM-DD: text` "
             "(`echo-memory triage list` shows them)") if unread else ""
    if not items:
        return _fixed("inbox", "ok", f"## Inbox\nempty{other}")
    oldest = max(item.age_days for item in items)  # struck (processed) lines never count
    hint = ("review them all with `echo-memory inbox review`" if oldest > EXPIRE_AFTER_DAYS
            else "triage with `echo-memory triage list`")
    return _fixed("inbox", "ok", f"## Inbox\n{_count(len(items), 'item')} waiting, oldest "
                                 f"{_count(oldest, 'day')} old; {hint}{other}")


def _always_load_block(snap: VaultSnapshot, budget: int) -> Block | None:
    """The always-loaded notes within 1/``ALWAYS_LOAD_SHARE`` of ``budget``: the first
    note that does not fit whole is cut to the room left (when that keeps at least
    ``ALWAYS_LOAD_MIN_CHARS`` of it); notes past that are counted in a closing line. None
    when there are none."""
    reads = [r for r in snap.always_load if r.status == "ok"]
    items = [always_load_item(r.path, r.text, ALWAYS_LOAD_NOTE_CHARS, TRUNCATED) for r in reads]
    if not items:
        return None
    share = budget // ALWAYS_LOAD_SHARE
    block = Block("always-load", "ok", lambda n: f"## Always loaded ({n} of {len(items)})"
                   if n < len(items) else "## Always loaded", items=items, keep_last=False,
                   noun="always-loaded notes")
    shown = len(items)
    while shown and len(block.render(shown)) > share:
        shown -= 1
    if shown < len(items) and (cut := _cut_to_fit(block, shown, reads[shown], share)):
        items[shown] = cut
        shown += 1
        block.status = "truncated"
    if shown < len(items):
        hidden = len(items) - shown
        block.items, block.status = items[:shown], "truncated"
        block.closing = (f"{TRUNCATED} {_count(hidden, 'always-loaded note')} not shown "
                         f"(over 1/{ALWAYS_LOAD_SHARE} of the brief budget)")
    return block


def _cut_to_fit(block: Block, shown: int, read: Read, share: int) -> str | None:
    """Note ``read`` cut to the most characters (at least ``ALWAYS_LOAD_MIN_CHARS``) with
    which ``block`` shows it after its first ``shown`` notes within ``share``; None when
    not even that fits."""
    def size(chars: int) -> int:
        item = always_load_item(read.path, read.text, chars, TRUNCATED)
        return len(attrs.evolve(block, items=[*block.items[:shown], item,
                                              *block.items[shown + 1:]]).render(shown + 1))

    lo, hi = ALWAYS_LOAD_MIN_CHARS, ALWAYS_LOAD_NOTE_CHARS
    if size(lo) > share:
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if size(mid) <= share:
            lo = mid
        else:
            hi = mid - 1
    return always_load_item(read.path, read.text, lo, TRUNCATED)


def _trim_semantic_overflow(blocks: list[Block], budget: int) -> None:
    """Over ``budget`` once the capped texts are cut to their shares (``fit``'s first
    step), leave out the semantic memory lines past 1/``SEMANTIC_SHARE`` of the budget,
    from the least recently updated, only as many as it takes to fit. Mutates the
    Fact / Pattern block (``shown``); ``fit`` trims the rest in ``TRIM_ORDER``."""
    total = cap_texts(blocks, budget, len(join(blocks)), to_share=True)
    prefs = next((b for b in blocks if b.name == "preferences" and b.items), None)
    if prefs is None or total <= budget:
        return
    room, floor = budget // SEMANTIC_SHARE, 0
    for item in prefs.items:  # the lines that fit in the share are never dropped here
        room -= len(item) + 1
        if room < 0:
            break
        floor += 1
    if floor >= len(prefs.items):
        return
    others = total - len(prefs.render())
    lo, hi = floor, len(prefs.items) - 1  # the most lines that fit, else the floor
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if others + len(prefs.render(mid)) <= budget:
            lo = mid
        else:
            hi = mid - 1
    prefs.shown, prefs.status = lo, "truncated"


def _full_block(name: str, label: str, read: Read | None) -> Block:
    if read is None:
        return _fixed(name, "absent", f"## Full text: {label}\n(none)")
    if read.status != "ok":
        return _fixed(name, read.status, f"## Full text: {label}\n" + _problem(read, label))
    lines = read.text.rstrip("\n").splitlines()
    fence = "`" * max(3, 1 + max((len(m.group()) for m in _FENCE_RUN.finditer(read.text)),
                                 default=0))
    return Block(name, "ok", lambda _n: f"## Full text: {label} ({read.path})",
                 fixed=fence + "markdown", items=lines, keep_last=False, noun="lines",
                 closing=fence, hint=read.path)


def render_digest(snap: VaultSnapshot, *, brief: bool, budget: int,
                  full_budget: int) -> tuple[Section, ...]:
    """The digest sections in order (see module docstring); their joined text is at most
    ``budget`` (brief) or ``full_budget`` (full) characters."""
    updated = _scope_updated(snap.context)
    logged, since = tally_sessions(snap.sessions, updated)  # one pass over the logs
    always = _always_load_block(snap, budget)
    blocks = [_marker_block(snap, logged), _scope_block(snap, updated, since),
              *_preference_blocks(snap), *([always] if always is not None else []),
              _session_block(snap), _agent_log_block(snap), _inbox_block(snap)]
    _trim_semantic_overflow(blocks, budget)
    sections = fit(blocks, budget, TRIM_ORDER)
    if brief:
        return tuple(sections)
    room = full_budget - len(sections_text(sections)) - len("\n\n")
    full = [_full_block("context-note", "current context", snap.context),
            _full_block("preferences-note", "operator preferences", snap.preferences),
            _full_block("session-note", "last session log", snap.session_log)]
    if room <= len(TRUNCATED):  # no room left at all: listed, empty, truncated
        return tuple(sections + [Section(b.name, "", "truncated") for b in full])
    return tuple(sections + fit(full, room, FULL_TRIM_ORDER))
