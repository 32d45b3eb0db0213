"""Cross-agent connections: records of different agents, within ``WINDOW_S`` of each
other, that name the same vault entity or carry the same tag.

Only what agents and the operator *said* is read: records of ``SPOKEN_KINDS`` (prompts,
replies, notes, flags), not tool calls (every agent runs ``Bash``; that connects
nothing). A record names an entity when a run of 1 to ``MAX_NAME_WORDS`` of its words
(in its first ``TEXT_READ`` characters) is the name key (``echo_core.name_key``) of an
entity's slug, title or alias, at least 4 characters long and not only stopwords —
looked up in one batch in the vault's entity name cache (``ctx.entity_names``).

A connection is one entity or tag (``key``: ``entity:<slug>`` / ``tag:<tag>``) with the
records that take part (each record that came within ``WINDOW_S`` after another
agent's, with that agent's latest record before it; at most ``MAX_RECORDS`` kept),
their agents and sessions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from plugins.habitat.distil_model import record_time
from plugins.habitat.record import Record

__all__ = ["SPOKEN_KINDS", "WINDOW_S", "Connection", "EntityFinder", "connections",
           "entity_finder"]

WINDOW_S = 24 * 3600.0
SPOKEN_KINDS = frozenset({"prompt", "reply", "note", "flag"})
MAX_NAME_WORDS = 3
TEXT_READ = 1000
MAX_RECORDS = 20
#: texts -> per text, the slugs of the entities it names.
EntityFinder = Callable[[Sequence[str]], list[set[str]]]


@attrs.frozen(kw_only=True)
class Connection:
    """One shared entity or tag across agents (see the module docstring)."""

    key: str
    via: str
    name: str
    agents: tuple[str, ...]
    sessions: tuple[str, ...]
    record_ids: tuple[str, ...]
    first_ts: str
    last_ts: str


def _spans(text: str) -> list[str]:
    from echo_core import name_key, name_tokens

    words = name_key(text[:TEXT_READ]).split()
    keys = {" ".join(words[i:i + w]) for i in range(len(words))
            for w in range(1, MAX_NAME_WORDS + 1) if i + w <= len(words)}
    return [k for k in keys if len(k) >= 4 and name_tokens(k)]


def entity_finder(ctx: Any, problems: list[str]) -> EntityFinder:
    """An ``EntityFinder`` over ``ctx``'s entity name cache; when the cache cannot be
    read (no vault yet), it finds nothing and says why in ``problems``."""

    def find(texts: Sequence[str]) -> list[set[str]]:
        spans = [_spans(t) for t in texts]
        import sqlite3

        from echo_core import EchoError

        try:
            by_key = ctx.entity_names.slugs_by_keys({k for ks in spans for k in ks})
        except (EchoError, OSError, sqlite3.Error) as exc:  # the digest goes on without
            problems.append(f"entities not read ({exc}); connections by tag only")
            return [set() for _ in texts]
        return [{slug for k in ks for slug in by_key.get(k, ())} for ks in spans]

    return find


def connections(records: Iterable[Record], find: EntityFinder | None = None) -> list[Connection]:
    """The cross-agent connections among ``records`` (see the module docstring), the
    most widely shared first (agents, then records), then by key."""
    spoken = [r for r in records if r.kind in SPOKEN_KINDS]
    named = find([r.text for r in spoken]) if find is not None else [set() for _ in spoken]
    mentions: dict[str, list[Record]] = {}
    for record, slugs in zip(spoken, named, strict=True):
        for slug in slugs:
            mentions.setdefault(f"entity:{slug}", []).append(record)
        for tag in dict.fromkeys(t.strip().lower() for t in record.tags if t.strip()):
            mentions.setdefault(f"tag:{tag}", []).append(record)
    found = [c for key, rs in mentions.items() if (c := _connect(key, rs)) is not None]
    return sorted(found, key=lambda c: (-len(c.agents), -len(c.record_ids), c.key))


def _connect(key: str, records: list[Record]) -> Connection | None:
    """The connection of ``key``, when two of its records by different agents are
    within ``WINDOW_S``."""
    timed = sorted(((record_time(r), r) for r in records), key=lambda tr: (tr[0], tr[1].id))
    joined: dict[str, Record] = {}
    latest: dict[str, tuple[float, Record]] = {}  # agent -> its latest record so far
    for t, record in timed:
        for agent, (t0, earlier) in latest.items():
            if agent != record.agent_id and t - t0 <= WINDOW_S:
                joined[earlier.id] = earlier
                joined[record.id] = record
        latest[record.agent_id] = (t, record)
    if not joined:
        return None
    kept = sorted(joined.values(), key=lambda r: (r.ts, r.id))
    via, _, name = key.partition(":")
    return Connection(key=key, via=via, name=name,
                      agents=tuple(sorted({r.agent_id for r in kept})),
                      sessions=tuple(sorted({r.session_id for r in kept})),
                      record_ids=tuple(r.id for r in kept[:MAX_RECORDS]),
                      first_ts=kept[0].ts, last_ts=kept[-1].ts)
