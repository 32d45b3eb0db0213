"""A persistent, per-machine name index of the vault's entities: SQLite in the state dir.

``EntityStore.load()`` builds the whole in-memory ``EntityIndex`` (every entity, every
name key and token), which a one-shot process pays in full: about a second and 150 MB at
70k entities. ``EntityNames`` answers the lookups of the hot paths from a SQLite file
instead, so a fresh process pays a few indexed queries: recall's alias expansion and
link resolution, and capture itself (resolve, the duplicate gate, auto-linking and the
replay check ``has_op``), which syncs it under the vault lock before its first lookup:
as current as a fresh load, through the same ``EntityLookup`` protocol ``EntityIndex``
answers. Writers append to the store's journal (``EntityStore.record``) and never build
the index either.

The cache mirrors the vault's entity store (snapshot ``_agent/index/entities.json`` +
journal ``entities.journal.ndjson``) and is checked against it on every lookup by the
size and mtime of both files:

* unchanged: nothing to do (two ``stat`` calls);
* only the journal grew (a capture appended lines, here or in another process): just
  the new lines are replayed, after checking the part already replayed is unchanged;
* anything else (the snapshot changed: compaction or a sweep; the journal shrank or was
  rewritten; the cache is new, of another schema or unreadable): rebuilt from both files.

Syncing is a write transaction (``BEGIN IMMEDIATE``), so concurrent processes serialise
and the second finds the work done; readers never see a half-applied sync (WAL). A
corrupt cache file is deleted and rebuilt; when the state dir cannot hold it (read-only,
locked for too long) the process falls back to a private in-memory copy. Lookups have
exactly the semantics of ``EntityIndex`` (the scoring code is shared).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, TypeVar

from echo_core import digests
from echo_core.entities import (
    JOURNAL_PATH,
    SNAPSHOT_PATH,
    EntityStore,
    Match,
    answering_to,
    candidate_tokens,
    entity_from_json,
    entity_name_tokens,
    file_signature,
    journal_record,
    read_store_texts,
    shared_name_tokens,
    store_unreadable,
)
from echo_core.entity_cache_rows import (
    CACHE_SCHEMA,
    ENTITY_COLUMNS,
    SCHEMA,
    TABLES,
    add_ops,
    best_rows,
    chunks,
    entity_row,
    insert_entities,
    remove_entity,
    row_entity,
)
from echo_core.errors import EchoError, ExitCode
from echo_core.lazy_log import lazy_logger
from echo_core.models import Entity
from echo_core.name_matching import matching_tokens
from echo_core.names import name_key
from echo_core.protocols import Storage
from echo_core.sqlite_wal import settle_wal

log = lazy_logger("echo_memory")

FILE_NAME = "entity-names.sqlite3"
#: Seconds a sync waits for another process's sync before giving up (then: in memory).
BUSY_TIMEOUT = 30.0
#: Fuzzy lookups keep this many tokens' frequencies and answers (then start again).
MEMO_ENTRIES = 20_000

Stat = tuple[int, float] | None
_T = TypeVar("_T")


def _is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    """A file that is not (or no longer) a usable database, as opposed to a busy one."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
    return not isinstance(exc, sqlite3.OperationalError)


class EntityNames:
    """Read-only name lookups over the vault's entity store, cached in SQLite at ``path``
    (``None``: in memory, rebuilt per process). Thread-safe; see the module docstring."""

    def __init__(self, storage: Storage, path: Path | None) -> None:
        self.storage = storage
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._seen: tuple[Stat, Stat] | None = None  # signature last found in sync
        self._lock = threading.RLock()
        self._pins = threading.local()  # one_snapshot(): depth, connection synced on
        #: fuzzy's memo: token -> document frequency, question -> answer
        self._memo: dict[Any, Any] = {}
        self._memo_state: tuple[Stat, Stat] | None = None  # the _seen it holds for

    # -- lookups (same semantics as EntityIndex) ---------------------------------------

    def get(self, slug: str) -> Entity | None:
        """The entry for ``slug``."""
        return self.get_many([slug]).get(slug)

    def get_many(self, slugs: Iterable[str]) -> dict[str, Entity]:
        """The entries of those ``slugs`` that exist (one sync, one query per 500)."""
        return {row[0]: row_entity(row) for row in self._rows_where("slug", slugs)}

    def by_paths(self, paths: Iterable[str]) -> dict[str, Entity]:
        """The entity of each of those note paths that has one."""
        return {row[1]: row_entity(row) for row in self._rows_where("path", paths)}

    def _rows_where(self, column: str, values: Iterable[str],
                    columns: str = ENTITY_COLUMNS) -> list[Any]:
        """Rows whose ``column`` is one of ``values``: one query per 500 of them, or one
        pass over the table when there are thousands (cheaper than as many probes)."""
        wanted = sorted(set(values))
        if not wanted:
            return []
        if len(wanted) > 2000:
            keep = set(wanted)
            index = columns.split(", ").index(column)
            return self._query(lambda db: [
                row for row in db.execute(f"SELECT {columns} FROM entities")
                if row[index] in keep])
        return self._query(lambda db: [
            row for chunk in chunks(wanted)
            for row in db.execute(
                f"SELECT {columns} FROM entities WHERE {column} IN "
                f"({','.join('?' * len(chunk))})", chunk)])

    def all_paths(self) -> set[str]:
        """The note path of every entity (what a sweep compares with the vault)."""
        return set(self._query(lambda db: [row[0] for row in db.execute(
            "SELECT path FROM entities")]))

    def paths_of(self, slugs: Iterable[str]) -> dict[str, str]:
        """The note path of each of those ``slugs`` that exists (``get_many`` without
        building entities: what link resolution needs)."""
        return dict(self._rows_where("slug", slugs, "slug, path"))

    def exact(self, mention: str, kind: str | None = None) -> list[Entity]:
        """Entities whose slug, title or alias equals ``mention`` up to case, hyphens,
        spaces and punctuation; restricted to ``kind`` when given. Sorted by slug."""
        key = name_key(mention)
        rows = self._query(lambda db: db.execute(
            f"SELECT {', '.join('e.' + c for c in ENTITY_COLUMNS.split(', '))} "
            "FROM name_keys k JOIN entities e ON e.id = k.id WHERE k.key = ? "
            "ORDER BY e.slug", (key,)).fetchall())
        found = [row_entity(row) for row in rows]
        return [e for e in found if kind is None or e.kind == kind]

    def named(self, mention: str, kind: str | None = None) -> list[Entity]:
        """The ``exact`` matches whose title or an alias (not only the slug) has
        ``mention``'s name key (``EntityIndex.named``)."""
        return answering_to(mention, self.exact(mention, kind))

    def by_path(self, path: str) -> Entity | None:
        """The entry whose note is at ``path``."""
        return self.by_paths([path]).get(path)

    def shared_tokens(self, mention: str, entity: Entity) -> frozenset[str]:
        """Tokens ``mention`` shares with any name of ``entity``."""
        return shared_name_tokens(matching_tokens(mention), entity_name_tokens(entity))

    def slugs_by_keys(self, keys: Iterable[str]) -> dict[str, set[str]]:
        """name key -> slugs answering to it, for those of ``keys`` that name something
        (one query per 500 keys)."""
        wanted = sorted(set(keys))
        found: dict[str, set[str]] = {}
        if not wanted:
            return found
        rows = self._query(lambda db: [
            row for chunk in chunks(wanted) for row in db.execute(
                "SELECT k.key, e.slug FROM name_keys k JOIN entities e ON e.id = k.id "
                f"WHERE k.key IN ({','.join('?' * len(chunk))})", chunk)])
        for key, slug in rows:
            found.setdefault(key, set()).add(slug)
        return found

    def name_keys_sized(self, shortest: int, longest: int, *, spaces: int | None = None,
                        squashed: str | None = None) -> list[str]:
        """Every distinct name key of ``shortest`` to ``longest`` characters, sorted (one
        range of an index, not every key); ``spaces`` and ``squashed`` filter them in
        SQLite (``EntityLookup.name_keys_sized``)."""
        if spaces is None:
            sql = "SELECT DISTINCT key FROM name_keys WHERE klen BETWEEN ? AND ? ORDER BY key"
            params: tuple[object, ...] = (shortest, longest)
        else:  # two index ranges: the sizes with that many spaces, and those letters
            sql = ("SELECT key FROM name_keys WHERE kspaces = ? AND klen BETWEEN ? AND ? "
                   "UNION SELECT key FROM name_keys WHERE kletters = ? AND klen BETWEEN ? "
                   "AND ? ORDER BY key")
            params = (spaces, shortest, longest,
                      squashed if squashed is not None else "\t", shortest, longest)
        return self._query(lambda db: [row[0] for row in db.execute(sql, params)])

    def has_op(self, op_id: str) -> bool:
        """Whether the operation ``op_id`` was committed to the entity store (its id on a
        journal line, or among the ids the snapshot keeps): ``EntityStore.has_op`` without
        loading the store. The caller holds the vault lock for an answer that stays true."""
        return self._query(lambda db: db.execute(
            "SELECT 1 FROM ops WHERE op_id = ?", (op_id,)).fetchone() is not None)

    def document_frequency(self, token: str) -> int:
        """How many entities have ``token`` among their name tokens."""
        return int(self._query(lambda db: self._df(db, [token])).get(token, 0))

    def fuzzy(self, mention: str, *, kind: str | None = None, min_score: float = 0.5,
              limit: int = 5, max_df: int | None = None) -> list[Match]:
        """Entities whose names share tokens with ``mention``, best first (exactly
        ``EntityIndex.fuzzy``, ``max_df`` included). The candidates come from SQLite in
        slug order and scoring stops at the ``limit``-th perfect score (no later one can
        rank above it: scores are at most 1, ties go to the smaller slug). Each token's
        document frequency and each answer are kept for as long as the store is
        unchanged (``_memo``): a warm process asks each question once."""
        tokens = matching_tokens(mention)
        if not tokens:
            return []
        key = (tokens, kind, min_score, limit, max_df)

        def run(db: sqlite3.Connection) -> list[tuple[float, Any]]:
            if self._memo_state != self._seen or len(self._memo) > MEMO_ENTRIES:
                self._memo, self._memo_state = {}, self._seen
            memo = self._memo
            found = memo.get(key)
            if found is None:
                missing = [t for t in tokens if t not in memo]
                if missing:
                    dfs = self._df(db, missing)
                    memo.update((t, dfs.get(t, 0)) for t in missing)
                chosen = candidate_tokens(tokens, memo.__getitem__, max_df)
                found = memo[key] = best_rows(db, tokens, chosen, kind, min_score,
                                               limit) if chosen else []
            return found

        return [Match(row_entity(row), score) for score, row in self._query(run)]

    def __len__(self) -> int:
        return int(self._query(lambda db: db.execute("SELECT COUNT(*) FROM entities").fetchone()[0]))

    def close(self) -> None:
        """Close the database connection (reopened on the next lookup)."""
        with self._lock:
            if self._db is not None:
                with suppress(sqlite3.Error):
                    self._db.close()
            self._db, self._seen = None, None

    @staticmethod
    def _df(db: sqlite3.Connection, tokens: Sequence[str]) -> dict[str, int]:
        return {t: n for chunk in chunks(tokens) for t, n in db.execute(
            f"SELECT token, n FROM token_df WHERE token IN ({','.join('?' * len(chunk))})", chunk)}

    @contextmanager
    def one_snapshot(self) -> Iterator[None]:
        """Within the block, this thread's lookups check the entity store for changes
        once (at the first lookup) and answer from that state after: one operation sees
        one consistent set of entities and pays the two ``stat`` calls once. Nests."""
        depth = getattr(self._pins, "depth", 0)
        self._pins.depth = depth + 1
        if not depth:
            self._pins.synced = None
        try:
            yield
        finally:
            self._pins.depth = depth

    # -- database ----------------------------------------------------------------------

    def _query(self, run: Callable[[sqlite3.Connection], _T]) -> _T:
        """Sync (once per ``one_snapshot`` block), then ``run(db)``; a corrupt file is
        rebuilt once, other database failures fall back to memory."""
        with self._lock:
            for attempt in range(3):
                try:
                    db = self._connection()
                    pinned = getattr(self._pins, "depth", 0) > 0
                    if not pinned or self._pins.synced is not db:
                        self._sync(db)
                        if pinned:
                            self._pins.synced = db
                    return run(db)
                except sqlite3.DatabaseError as exc:
                    if attempt == 2 or self.path is None:
                        raise
                    self._recover(exc)
            raise AssertionError("unreachable")

    def _recover(self, exc: sqlite3.DatabaseError) -> None:
        self.close()
        assert self.path is not None
        if _is_corrupt(exc):
            log.warning("entity name cache %s is unreadable (%s); rebuilding it", self.path, exc)
            for suffix in ("", "-wal", "-shm", "-journal"):
                with suppress(FileNotFoundError):
                    Path(f"{self.path}{suffix}").unlink()
        else:
            log.warning("entity name cache %s unusable (%s); using memory", self.path, exc)
            self.path = None

    def _connection(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        if self.path is None:
            db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise sqlite3.OperationalError(f"cannot create {self.path.parent}: {exc}") from exc
            db = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT, check_same_thread=False,
                                 isolation_level=None)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if self.path is not None and version == CACHE_SCHEMA:
                # a corrupt file can open fine and fail only here
                db.execute("SELECT v FROM meta WHERE k = 'sync'").fetchall()
            elif version != CACHE_SCHEMA:
                db.execute("BEGIN IMMEDIATE")
                if db.execute("PRAGMA user_version").fetchone()[0] != CACHE_SCHEMA:
                    for table in TABLES:
                        db.execute(f"DROP TABLE IF EXISTS {table}")
                    for statement in SCHEMA.split(";"):
                        if statement.strip():
                            db.execute(statement)
                    db.execute(f"PRAGMA user_version = {CACHE_SCHEMA}")
                db.execute("COMMIT")
            if self.path is not None:
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            with suppress(sqlite3.Error):
                db.close()
            raise
        self._db = db
        return db

    # -- sync --------------------------------------------------------------------------

    def _stat(self, path: str) -> Stat:
        return file_signature(self.storage, path)

    def _sync(self, db: sqlite3.Connection) -> None:
        """Bring the cache up to the store's current state (see the module docstring)."""
        signature = (self._stat(SNAPSHOT_PATH), self._stat(JOURNAL_PATH))
        if signature == self._seen:
            return
        if self._stored(db).get("signature") == _plain(signature):
            self._seen = signature
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            stored = self._stored(db)  # another process may have synced meanwhile
            if stored.get("signature") != _plain(signature) and not self._replay_journal(
                    db, stored, signature):
                self._rebuild(db, signature)
            db.execute("COMMIT")
        except BaseException:
            with suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise
        self._seen = signature
        if self.path is not None:
            settle_wal(db, self.path)  # a rebuild leaves ~36 MB of log at 100k notes

    @staticmethod
    def _stored(db: sqlite3.Connection) -> dict[str, Any]:
        row = db.execute("SELECT v FROM meta WHERE k = 'sync'").fetchone()
        if row is None:
            return {}
        data = json.loads(row[0])
        return data if isinstance(data, dict) else {}

    @staticmethod
    def _save(db: sqlite3.Connection, signature: tuple[Stat, Stat], journal: str) -> None:
        done = journal[:journal.rfind("\n") + 1]  # complete lines only
        state = {"signature": _plain(signature), "offset": len(done),
                 "prefix": digests.sha256(done.encode("utf-8")).hexdigest()}
        db.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('sync', ?)", (json.dumps(state),))

    def _replay_journal(self, db: sqlite3.Connection, stored: dict[str, Any],
                        signature: tuple[Stat, Stat]) -> bool:
        """Apply only the journal lines added since the last sync; False when that is not
        possible (the snapshot changed, or the replayed part of the journal did)."""
        if not stored or stored.get("signature", [None])[0] != _plain(signature)[0]:
            return False
        offset = stored.get("offset")
        if not isinstance(offset, int):
            return False
        journal = self._read(JOURNAL_PATH)
        if len(journal) < offset or digests.sha256(
                journal[:offset].encode("utf-8")).hexdigest() != stored.get("prefix"):
            return False
        end = journal.rfind("\n") + 1
        lines = journal[offset:end].splitlines()
        for line in lines:
            record = journal_record(line)
            if record is None:
                continue
            _op, slug, entity = record
            remove_entity(db, slug)
            if entity is not None:
                insert_entities(db, [entity])
        add_ops(db, lines)
        self._save(db, signature, journal)
        return True

    def _read(self, path: str) -> str:
        try:
            return self.storage.read(path)
        except EchoError as exc:
            if exc.code == ExitCode.NOT_FOUND:
                return ""
            if exc.code == ExitCode.FAILURE:
                raise store_unreadable(exc) from exc
            raise

    def _rebuild(self, db: sqlite3.Connection, signature: tuple[Stat, Stat]) -> None:
        """Re-read both files and make the cache equal to them. Only entries that differ
        are rewritten: after a compaction (same entities, new snapshot) that is none."""
        texts = read_store_texts(self.storage)
        entities: dict[str, Entity] = {}
        snapshot = texts.get(SNAPSHOT_PATH)
        kept: list[str] = []
        if snapshot:
            raw_entities, kept = EntityStore.parse_snapshot_and_ops(snapshot)
            for slug, raw in raw_entities.items():
                entities[slug] = entity_from_json(slug, raw)
        journal = texts.get(JOURNAL_PATH) or ""
        db.execute("DELETE FROM ops")
        db.executemany("INSERT OR IGNORE INTO ops VALUES (?)", [(k,) for k in kept])
        add_ops(db, journal[:journal.rfind("\n") + 1].splitlines())
        for line in journal.splitlines():
            record = journal_record(line)
            if record is None:
                continue
            _op, slug, entity = record
            entities.pop(slug, None)
            if entity is not None:
                entities[slug] = entity
        cached = {row[0]: row for row in db.execute(
            "SELECT slug, path, kind, title, aliases, h FROM entities")}
        if not cached:
            insert_entities(db, [entities[s] for s in sorted(entities)])
        else:
            stale = [slug for slug, row in cached.items()
                     if slug not in entities or entity_row(entities[slug])[:6] != row]
            for slug in stale:
                remove_entity(db, slug)
            fresh = set(stale) | (entities.keys() - cached.keys())
            insert_entities(db, [entities[s] for s in sorted(fresh) if s in entities])
        self._save(db, signature, journal)



def _plain(signature: tuple[Stat, Stat]) -> list[list[float] | None]:
    """The signature as JSON reads it back (lists, not tuples)."""
    return [list(part) if part is not None else None for part in signature]
