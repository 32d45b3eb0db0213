"""The stored forms of the entity index: one entry as JSON, a journal line, the snapshot
file's text (``echo_core.entities.EntityStore`` reads and writes them)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from echo_core.errors import EchoError
from echo_core.models import Entity

SCHEMA_VERSION = 1


def entity_to_json(entity: Entity) -> dict[str, Any]:
    """The stored form of one entry (the slug is the key)."""
    return {"path": entity.path, "kind": entity.kind, "title": entity.title,
            "aliases": list(entity.aliases), "h": entity.h}


def entity_from_json(slug: str, raw: Any) -> Entity:
    """Parse one stored entry; a malformed one is an ``EchoError`` naming the slug."""
    try:
        return Entity(slug=slug, path=str(raw["path"]), kind=str(raw["kind"]),
                      title=str(raw["title"]), aliases=tuple(str(a) for a in raw.get("aliases", ())),
                      h=str(raw.get("h", "")))
    except (KeyError, TypeError) as exc:
        raise EchoError(f"entity index entry {slug!r} is malformed ({exc}); run "
                        "`echo-memory sweep --apply`: it sets the damaged file aside and "
                        "rebuilds the index from the notes") from exc


def journal_record(line: str) -> tuple[str, str, Entity | None] | None:
    """One journal line as ``("put", slug, entity)`` or ``("del", slug, None)``; None for
    a blank line, a torn last line from a crash (the write it described never completed)
    or an unknown op (an ``op_id``-only line is read by ``journal_op_id``)."""
    record = _journal_json(line)
    op = record.get("op") if record is not None else None
    if record is None:
        return None
    if op == "put":
        return "put", str(record["slug"]), entity_from_json(record["slug"], record["e"])
    if op == "del":
        return "del", str(record["slug"]), None
    return None


def _journal_json(line: str) -> dict[str, Any] | None:
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


def journal_op_id(line: str) -> str | None:
    """The operation id a journal line commits (``"op_id"``), if any."""
    record = _journal_json(line)
    op_id = record.get("op_id") if record is not None else None
    return op_id if isinstance(op_id, str) else None


def snapshot_text(entities: dict[str, Any], kept: Sequence[str]) -> str:
    """The snapshot file's text for those entries (slug -> stored form) and kept op ids."""
    rows = ",\n".join(f"  {json.dumps(slug, ensure_ascii=False)}: "
                      f"{json.dumps(entities[slug], ensure_ascii=False, sort_keys=True)}"
                      for slug in sorted(entities))
    text = f'{{\n "schema_version": {SCHEMA_VERSION},\n "entities": {{\n{rows}\n }}'
    if kept:
        text += f',\n "op_ids": {json.dumps(list(kept), ensure_ascii=False)}'
    return text + "\n}\n"
