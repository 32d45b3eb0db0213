"""The entity index: slug -> {path, kind, title, aliases, h}, the routing authority.

``EntityIndex`` is the in-memory view with the lookups capture, resolve and the gate need
(exact names, name tokens, document frequency). ``EntityStore`` persists it in the vault
as a schema-versioned snapshot (``_agent/index/entities.json``) plus an append-only
journal (``entities.journal.ndjson``): an update costs one appended line, not a rewrite of
every entry; the journal is folded into the snapshot once it has ``COMPACT_AFTER`` lines
and is 1/``JOURNAL_SHARE`` of the snapshot's size. Callers hold the vault lock around
``load`` + ``apply`` (a fresh re-read under the lock)."""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from echo_core import digests
from echo_core.bulk_work import collector_paused

# the stored forms, re-exported: callers import them from here
from echo_core.entity_records import SCHEMA_VERSION as SCHEMA_VERSION  # noqa: PLC0414
from echo_core.entity_records import _journal_json
from echo_core.entity_records import entity_from_json as entity_from_json  # noqa: PLC0414
from echo_core.entity_records import entity_to_json as entity_to_json  # noqa: PLC0414
from echo_core.entity_records import journal_op_id as journal_op_id  # noqa: PLC0414
from echo_core.entity_records import journal_record as journal_record  # noqa: PLC0414
from echo_core.entity_records import snapshot_text as snapshot_text  # noqa: PLC0414
from echo_core.errors import EchoError, ExitCode, NotConfiguredError, not_found
from echo_core.models import Entity
from echo_core.name_matching import Match as Match  # noqa: PLC0414
from echo_core.name_matching import NameTokens as NameTokens  # noqa: PLC0414
from echo_core.name_matching import answering_to as answering_to  # noqa: PLC0414
from echo_core.name_matching import candidate_tokens as candidate_tokens  # noqa: PLC0414
from echo_core.name_matching import entity_keys as entity_keys  # noqa: PLC0414
from echo_core.name_matching import entity_name_tokens as entity_name_tokens  # noqa: PLC0414
from echo_core.name_matching import entity_names as entity_names  # noqa: PLC0414
from echo_core.name_matching import entity_terms as entity_terms  # noqa: PLC0414
from echo_core.name_matching import matching_tokens
from echo_core.name_matching import name_score as name_score  # noqa: PLC0414
from echo_core.name_matching import rank_matches as rank_matches  # noqa: PLC0414
from echo_core.name_matching import shared_name_tokens as shared_name_tokens  # noqa: PLC0414
from echo_core.names import name_key
from echo_core.protocols import Storage

SNAPSHOT_PATH = "_agent/index/entities.json"
JOURNAL_PATH = "_agent/index/entities.journal.ndjson"
COMPACT_AFTER = 400
#: ... and once the journal is at least this fraction (1/n) of the snapshot's size.
JOURNAL_SHARE = 8
#: Operation ids a snapshot keeps (newest last) so that a queued replay of an operation
#: that already landed is recognised after the journal was folded (``EntityStore.has_op``).
KEPT_OP_IDS = 2000


def content_hash(text: str) -> str:
    """An entry's ``h``: a short sha256 of the note's final text."""
    return digests.sha256(text.encode("utf-8")).hexdigest()[:16]


def file_signature(storage: Storage, path: str) -> tuple[int, float] | None:
    """``(size, mtime)`` of a vault file, None when absent: how index readers notice that
    another process changed the snapshot or journal without reading them."""
    try:
        st = storage.stat(path)
    except EchoError as exc:
        if exc.code == ExitCode.NOT_FOUND:
            return None
        raise
    return (st.size, st.mtime)


class EntityIndex:
    """In-memory entity index with exact-name and token lookups.

    The name lookups' tables are built on the first name lookup, not on ``put``: an
    index read only by slug and path (a sweep's old index) never folds a name."""

    def __init__(self, entities: Iterable[Entity] = ()) -> None:
        self.entities: dict[str, Entity] = {}
        self._by_key: dict[str, set[str]] = defaultdict(set)
        self._by_token: dict[str, set[str]] = defaultdict(set)
        self._by_path: dict[str, str] = {}
        self._name_tokens: dict[str, NameTokens] = {}
        self._unnamed: dict[str, Entity] = {}  # put, not yet in the name tables
        self._naming = threading.Lock()
        for entity in entities:
            self.put(entity)

    def __len__(self) -> int:
        return len(self.entities)

    def put(self, entity: Entity) -> None:
        """Add or replace the entry for ``entity.slug``."""
        if entity.slug in self.entities:
            self.remove(entity.slug)
        slug = entity.slug
        with self._naming:  # never between the naming of the others and its reset
            self.entities[slug] = entity
            self._by_path[entity.path] = slug
            self._unnamed[slug] = entity

    def _named(self) -> None:
        """Enter every entity put since the last name lookup into the name tables (one
        thread at a time; the others wait until the tables are whole)."""
        if not self._unnamed:
            return
        with self._naming:
            unnamed = self._unnamed
            by_key, by_token, name_tokens = self._by_key, self._by_token, self._name_tokens
            for slug, entity in unnamed.items():
                keys, names = entity_terms(entity)
                for key in keys:
                    by_key[key].add(slug)
                name_tokens[slug] = names
                for token in frozenset().union(*names):
                    by_token[token].add(slug)
            self._unnamed = {}  # emptied last: a lookup meanwhile waits on the lock

    def remove(self, slug: str) -> None:
        """Forget ``slug`` (no-op when unknown)."""
        with self._naming:
            entity = self.entities.pop(slug, None)
            if entity is None:
                return
            if self._by_path.get(entity.path) == slug:
                del self._by_path[entity.path]
            if self._unnamed.pop(slug, None) is not None:
                return  # never entered into the name tables
            tokens = frozenset().union(*self._name_tokens.pop(slug))
            for index, names in ((self._by_key, entity_keys(entity)), (self._by_token, tokens)):
                for name in names:
                    slugs = index.get(name)
                    if slugs is not None:
                        slugs.discard(slug)
                        if not slugs:
                            del index[name]

    def get(self, slug: str) -> Entity | None:
        """The entry for ``slug``."""
        return self.entities.get(slug)

    def by_path(self, path: str) -> Entity | None:
        """The entry whose note is at ``path``."""
        slug = self._by_path.get(path)
        return self.entities.get(slug) if slug else None

    def exact(self, mention: str, kind: str | None = None) -> list[Entity]:
        """Entities whose slug, title or alias equals ``mention`` up to case, hyphens,
        spaces and punctuation; restricted to ``kind`` when given. Sorted by slug."""
        self._named()
        slugs = self._by_key.get(name_key(mention), set())
        found = [self.entities[s] for s in sorted(slugs)]
        return [e for e in found if kind is None or e.kind == kind]

    def named(self, mention: str, kind: str | None = None) -> list[Entity]:
        """The ``exact`` matches whose title or an alias (not only the slug) equals
        ``mention`` up to case and punctuation: who answers to that name
        (``answering_to``)."""
        return answering_to(mention, self.exact(mention, kind))

    def document_frequency(self, token: str) -> int:
        """How many entities have ``token`` among their name tokens."""
        self._named()
        return len(self._by_token.get(token, ()))

    def fuzzy(self, mention: str, *, kind: str | None = None, min_score: float = 0.5,
              limit: int = 5, max_df: int | None = None) -> list[Match]:
        """Entities whose names share tokens (``matching_tokens``) with ``mention``, best
        first. Score = best ``token_set_similarity`` over the entity's names. Only entities
        sharing at least one token are scored (work bounded by those tokens' frequency);
        with ``max_df``, tokens naming more than ``max_df`` entities do not collect
        candidates (see ``candidate_tokens``; exact callers leave it None).
        """
        return self.fuzzy_tokens(matching_tokens(mention), kind=kind, min_score=min_score,
                                 limit=limit, max_df=max_df)

    def fuzzy_tokens(self, tokens: frozenset[str], *, kind: str | None = None,
                     min_score: float = 0.5, limit: int = 5,
                     max_df: int | None = None) -> list[Match]:
        """``fuzzy`` for a mention already split into its ``name_tokens``."""
        self._named()
        seen: set[str] = set()
        for token in candidate_tokens(tokens, self.document_frequency, max_df):
            seen |= self._by_token.get(token, set())
        candidates = ((self.entities[s], self._name_tokens[s]) for s in seen)
        return rank_matches(tokens, candidates, kind=kind, min_score=min_score, limit=limit)

    def name_tokens_of(self, slug: str) -> NameTokens:
        """The ``name_tokens`` of each name of the entry ``slug`` (title first; () when
        unknown), as the index holds them."""
        self._named()
        return self._name_tokens.get(slug, ())

    def shared_tokens(self, mention: str, entity: Entity) -> frozenset[str]:
        """Tokens ``mention`` shares with any name of ``entity``."""
        self._named()
        tokens = matching_tokens(mention)
        stored = self._name_tokens.get(entity.slug)
        names = stored if stored is not None and self.entities.get(entity.slug) == entity \
            else entity_name_tokens(entity)
        return shared_name_tokens(tokens, names)

    def names_by_key(self) -> dict[str, set[str]]:
        """name key -> slugs (read-only use: lint scans it whole)."""
        self._named()
        return self._by_key

    def slugs_by_keys(self, keys: Iterable[str]) -> dict[str, set[str]]:
        """name key -> slugs answering to it, for those of ``keys`` that name something
        (copies: the caller may keep them)."""
        self._named()
        by_key = self._by_key
        return {key: set(by_key[key]) for key in keys if by_key.get(key)}

    def name_keys_sized(self, shortest: int, longest: int, *, spaces: int | None = None,
                        squashed: str | None = None) -> list[str]:
        """Every distinct name key of ``shortest`` to ``longest`` characters, sorted; with
        ``spaces``, only those holding that many spaces or (``squashed``) whose characters
        other than spaces are ``squashed`` (``EntityLookup.name_keys_sized``)."""
        self._named()
        return sorted(k for k, slugs in self._by_key.items()
                      if slugs and shortest <= len(k) <= longest
                      and (spaces is None or k.count(" ") == spaces
                           or (squashed is not None and k.replace(" ", "") == squashed)))


def read_store_texts(storage: Storage) -> dict[str, str | None]:
    """The snapshot's and the journal's texts (None: absent). A file that cannot be read
    (not UTF-8, say) is an ``EchoError`` telling to run ``sweep --apply``, which sets the
    damaged file aside and rebuilds the index from the notes; an absent vault, a held lock
    or an outage raise as they are."""
    try:
        return dict(storage.read_many([SNAPSHOT_PATH, JOURNAL_PATH]))
    except EchoError as exc:
        if exc.code != ExitCode.FAILURE:
            raise
        raise store_unreadable(exc) from exc


def store_unreadable(exc: EchoError) -> EchoError:
    """The error for an entity-store file that cannot be read: what to run about it."""
    return EchoError(f"the entity index cannot be read ({exc.message}); run "
                     "`echo-memory sweep --apply`: it sets the damaged file aside "
                     "and rebuilds the index from the notes")


def apply_journal_record(index: EntityIndex, record: tuple[str, str, Entity | None]) -> None:
    """Apply one parsed journal line (``journal_record``) to ``index``: put or remove."""
    _op, slug, entity = record
    if entity is not None:
        index.put(entity)
    else:
        index.remove(slug)


def _records(puts: Sequence[Entity], deletes: Sequence[str],
             op_id: str | None) -> list[dict[str, Any]]:
    """The journal records of a change: a put per entity, a del per slug, and ``op_id`` on
    the last one (all lines landed before it; a change of nothing gets a "mark" line)."""
    records: list[dict[str, Any]] = [
        {"op": "put", "slug": e.slug, "e": entity_to_json(e)} for e in puts]
    records += [{"op": "del", "slug": slug} for slug in deletes]
    if op_id is not None:
        if not records:
            records.append({"op": "mark"})
        records[-1]["op_id"] = op_id
    return records


@attrs.frozen
class _Signature:
    snapshot: tuple[int, float] | None
    journal: tuple[int, float] | None


class EntityStore:
    """Loads and updates the vault's entity index (snapshot + journal).

    ``load()`` re-reads only when the files changed since this store last read or wrote
    them (checked by size and mtime), so a long-lived process pays per change, not per call.
    """

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self._index: EntityIndex | None = None
        self._signature: _Signature | None = None
        self._journal_lines = 0
        self._op_ids: dict[str, None] = {}  # insertion-ordered set, oldest first

    def _stat(self, path: str) -> tuple[int, float] | None:
        return file_signature(self.storage, path)

    def _current_signature(self) -> _Signature:
        return _Signature(self._stat(SNAPSHOT_PATH), self._stat(JOURNAL_PATH))

    def load(self) -> EntityIndex:
        """The index as stored now (cached while the files are unchanged)."""
        signature = self._current_signature()
        if self._index is not None and signature == self._signature:
            return self._index
        index = EntityIndex()
        texts = read_store_texts(self.storage)
        with collector_paused():
            return self._build(index, texts, signature)

    def _build(self, index: EntityIndex, texts: dict[str, str | None],
               signature: _Signature) -> EntityIndex:
        """Fill ``index`` from the snapshot and journal texts and keep it as loaded."""
        snapshot = texts.get(SNAPSHOT_PATH)
        op_ids: dict[str, None] = {}
        if snapshot:
            entities, kept = self._parse_snapshot(snapshot)
            for slug, raw in entities.items():
                index.put(entity_from_json(slug, raw))
            op_ids = dict.fromkeys(kept)
        self._journal_lines = 0
        for line in (texts.get(JOURNAL_PATH) or "").splitlines():
            if line.strip():
                self._replay(index, line)
                if (op_id := journal_op_id(line)) is not None:
                    op_ids[op_id] = None
                self._journal_lines += 1
        self._index, self._signature, self._op_ids = index, signature, op_ids
        return index

    def has_op(self, op_id: str) -> bool:
        """Whether the operation ``op_id`` was committed to this index (see ``apply``).
        Reads the store when it changed; the caller holds the vault lock for an answer
        that stays true."""
        self.load()
        return op_id in self._op_ids

    @classmethod
    def parse_snapshot(cls, text: str) -> dict[str, Any]:
        """The ``entities`` mapping of a snapshot's text (``EchoError`` when unreadable)."""
        return cls._parse_snapshot(text)[0]

    @classmethod
    def parse_snapshot_and_ops(cls, text: str) -> tuple[dict[str, Any], list[str]]:
        """``(entities mapping, the operation ids it keeps)`` of a snapshot's text."""
        return cls._parse_snapshot(text)

    @staticmethod
    def _parse_snapshot(text: str) -> tuple[dict[str, Any], list[str]]:
        """``(entities mapping, kept op ids)`` of a snapshot's text."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise EchoError(f"{SNAPSHOT_PATH} is not valid JSON ({exc}); run "
                            "`echo-memory sweep --apply`: it sets the damaged file aside and "
                            "rebuilds the index from the notes") from exc
        version = data.get("schema_version") if isinstance(data, dict) else None
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            raise NotConfiguredError(f"{SNAPSHOT_PATH} has schema_version {version!r}; this "
                                     f"echo-memory reads {SCHEMA_VERSION}. Upgrade echo-memory.")
        entities = data.get("entities", {})
        kept = data.get("op_ids", [])
        return (entities if isinstance(entities, dict) else {},
                [str(k) for k in kept] if isinstance(kept, list) else [])

    @staticmethod
    def _replay(index: EntityIndex, line: str) -> None:
        record = journal_record(line)
        if record is not None:
            apply_journal_record(index, record)

    def apply(self, puts: Sequence[Entity] = (), deletes: Sequence[str] = (), *,
              op_id: str | None = None) -> EntityIndex:
        """Record changes (caller holds the vault lock, after a fresh ``load``).

        ``op_id`` names the operation these changes complete: it is written on the journal
        line of the last change (each line is one atomic append), so ``has_op(op_id)`` is
        true only once every change is recorded. With no changes, a line holding only the
        op id is appended."""
        index = self.load()
        for entity in puts:
            index.put(entity)
        for slug in deletes:
            if index.get(slug) is None:
                raise not_found(f"no entity {slug!r} in the index")
            index.remove(slug)
        records = _records(puts, deletes, op_id)
        if len(records) > 1:
            self._append_all(records)
        else:
            for record in records:
                self._append(record)
        if op_id is not None:
            self._op_ids[op_id] = None
        if self._compaction_due():
            self.compact(index)
        self._signature = self._current_signature()
        return index

    def record(self, puts: Sequence[Entity] = (), deletes: Sequence[str] = (), *,
               op_id: str | None = None) -> None:
        """``apply`` without reading the index: the same journal lines and commit point
        (``op_id`` on the last line), for a caller that holds the vault lock and checked
        the changes against a current view (the name cache, synced under that lock).

        When this store holds the index as stored it is updated in memory too (``apply``:
        a server's next ``load`` re-reads nothing); else only the journal is read and
        rewritten, so a capture's cost does not grow with the number of entities. Folds
        the journal when due, from the stored texts (``compact_raw``)."""
        if self._index is not None and self._current_signature() == self._signature:
            self.apply(puts, deletes, op_id=op_id)
            return
        self._append_all(_records(puts, deletes, op_id))
        self._index = None
        if self._compaction_due():
            self.compact_raw()

    def _append(self, record: dict[str, Any]) -> None:
        # seq keeps every line distinct (append_line skips identical lines)
        record["seq"] = self._journal_lines + 1
        self.storage.append_line(JOURNAL_PATH, json.dumps(record, ensure_ascii=False, sort_keys=True))
        self._journal_lines += 1

    def _compaction_due(self) -> bool:
        """Fold once the journal has ``COMPACT_AFTER`` lines and is at least
        1/``JOURNAL_SHARE`` of the snapshot's size: a large index is rewritten after as many
        changes as it is large, not every few hundred (each fold rewrites every entry)."""
        if self._journal_lines < COMPACT_AFTER:
            return False
        snapshot = self._stat(SNAPSHOT_PATH)
        journal = self._stat(JOURNAL_PATH)
        if snapshot is None or journal is None:
            return True
        return journal[0] * JOURNAL_SHARE >= snapshot[0]

    def _append_all(self, records: list[dict[str, Any]]) -> None:
        """Append several records in one atomic rewrite of the journal (a bulk change
        costs one write, not one per line; a crash leaves all of them or none)."""
        try:
            current = self.storage.read(JOURNAL_PATH)
        except EchoError as exc:
            if exc.code != ExitCode.NOT_FOUND:
                raise
            current = ""
        if current and not current.endswith("\n"):
            current = current[:current.rfind("\n") + 1]  # a torn last line never landed
        self._journal_lines = sum(1 for line in current.splitlines() if line.strip())
        lines = []
        for record in records:
            self._journal_lines += 1
            record["seq"] = self._journal_lines
            lines.append(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        self.storage.write(JOURNAL_PATH, current + "".join(lines))

    def compact(self, index: EntityIndex) -> None:
        """Fold the journal into the snapshot (snapshot first: a crash between the two
        writes only replays puts and deletes that are already in it)."""
        kept = list(self._op_ids)[-KEPT_OP_IDS:]
        self._write_snapshot({s: entity_to_json(e) for s, e in index.entities.items()}, kept)
        self._signature = self._current_signature()

    def _write_snapshot(self, entities: dict[str, Any], kept: Sequence[str]) -> None:
        """Write the snapshot (one entry per line, sorted: readable and diffable, and
        encoded by the C encoder) and empty the journal."""
        self.storage.write(SNAPSHOT_PATH, snapshot_text(entities, kept))
        self.storage.write(JOURNAL_PATH, "")
        self._journal_lines = 0

    def append(self, puts: Sequence[Entity] = (), deletes: Sequence[str] = ()) -> None:
        """Record changes without building the index in memory (caller holds the vault
        lock and checked the changes against a current view, e.g. the name cache): the
        way a sweep records many changes to a large index. Folds the journal once it is
        long (``compact_raw``)."""
        records = _records(puts, deletes, None)
        if not records:
            return
        self._append_all(records)
        self._index = None
        if self._compaction_due():
            self.compact_raw()

    def compact_raw(self) -> None:
        """``compact`` from the stored texts, entries kept as parsed JSON (no index built:
        a fraction of the cost on a large index)."""
        texts = self.storage.read_many([SNAPSHOT_PATH, JOURNAL_PATH])
        entities: dict[str, Any] = {}
        kept: list[str] = []
        if texts.get(SNAPSHOT_PATH):
            entities, kept = self._parse_snapshot(texts[SNAPSHOT_PATH] or "")
        for line in (texts.get(JOURNAL_PATH) or "").splitlines():
            record = _journal_json(line)
            if record is None:
                continue
            if record.get("op") == "put" and isinstance(record.get("e"), dict):
                entities[str(record["slug"])] = record["e"]
            elif record.get("op") == "del":
                entities.pop(str(record.get("slug")), None)
            if isinstance(record.get("op_id"), str):
                kept.append(record["op_id"])
        self._write_snapshot(entities, kept[-KEPT_OP_IDS:])
        self._index = None
