"""The tables of the entity name cache (``entity_cache``): its schema, how an entity is
stored as a row (names encoded as text), and adding or removing one entity with its name
keys, name tokens and token counts, and the operation ids journal lines carry."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from echo_core.entities import NameTokens, entity_keys, entity_terms, journal_op_id
from echo_core.models import Entity
from echo_core.name_matching import name_score

#: Bumped when the tables change; a cache of another version is rebuilt.
CACHE_SCHEMA = 6  # 2: name keys keep the marks of non-Latin letters; 3: path index;
#                  4: key lengths and operation ids (capture answers from the cache);
#                  5: key spaces and letters (the gate's typo candidates);
#                  6: an initial "A." is a name token ("A. Smith": a, smith)
CHUNK = 500  # bound on SQL parameters per IN (...) query
_Item = TypeVar("_Item")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS entities(
    id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, path TEXT NOT NULL,
    kind TEXT NOT NULL, title TEXT NOT NULL, aliases TEXT NOT NULL, h TEXT NOT NULL,
    names TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS entities_path ON entities(path);
CREATE TABLE IF NOT EXISTS name_keys(
    key TEXT NOT NULL, id INTEGER NOT NULL, klen INTEGER NOT NULL,
    kspaces INTEGER NOT NULL, kletters TEXT NOT NULL, PRIMARY KEY(key, id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS name_keys_size ON name_keys(kspaces, klen, key);
CREATE INDEX IF NOT EXISTS name_keys_letters ON name_keys(kletters);
CREATE TABLE IF NOT EXISTS name_tokens(
    token TEXT NOT NULL, id INTEGER NOT NULL, PRIMARY KEY(token, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS token_df(token TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ops(op_id TEXT PRIMARY KEY) WITHOUT ROWID;
"""
TABLES = ("meta", "entities", "name_keys", "name_tokens", "token_df", "ops")
ENTITY_COLUMNS = "slug, path, kind, title, aliases, h, names"


def encode_names(names: NameTokens) -> str:
    """Tokens never hold whitespace: names joined by tabs, tokens by spaces (sorted)."""
    return "\t".join(" ".join(sorted(n)) for n in names)


@functools.lru_cache(maxsize=1 << 16)
def decode_names(text: str) -> NameTokens:
    """The name token sets stored as ``text`` (memoised: a pure function of the text, and
    the same candidates come back for query after query)."""
    return tuple(frozenset(part.split()) for part in text.split("\t"))


def entity_row(entity: Entity, names: NameTokens = ()) -> tuple[str, ...]:
    """The stored columns of an entity (``names`` encoded last)."""
    aliases = json.dumps(list(entity.aliases), ensure_ascii=False) if entity.aliases else "[]"
    return (entity.slug, entity.path, entity.kind, entity.title, aliases, entity.h,
            encode_names(names))


def row_entity(row: Sequence[Any]) -> Entity:
    aliases = tuple(json.loads(row[4])) if row[4] != "[]" else ()
    return Entity(slug=row[0], path=row[1], kind=row[2], title=row[3], aliases=aliases, h=row[5])


def chunks(items: Sequence[_Item]) -> Iterator[Sequence[_Item]]:
    for start in range(0, len(items), CHUNK):
        yield items[start:start + CHUNK]


def add_ops(db: sqlite3.Connection, lines: Iterable[str]) -> None:
    """Record the operation ids these journal lines carry (``has_op``)."""
    found = [(op_id,) for line in lines if (op_id := journal_op_id(line)) is not None]
    db.executemany("INSERT OR IGNORE INTO ops VALUES (?)", found)

def insert_entities(db: sqlite3.Connection, entities: Sequence[Entity]) -> None:
    """Add entities (none of them present)."""
    next_id = int(db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM entities").fetchone()[0])
    rows: list[tuple[Any, ...]] = []
    keys: list[tuple[str, int, int]] = []
    tokens: list[tuple[str, int]] = []
    df: dict[str, int] = {}
    for number, entity in enumerate(entities, next_id):
        entity_keys_, names = entity_terms(entity)
        rows.append((number, *entity_row(entity, names)))
        keys.extend((key, number, len(key)) for key in entity_keys_)
        for token in frozenset().union(*names):
            tokens.append((token, number))
            df[token] = df.get(token, 0) + 1
    db.executemany(f"INSERT INTO entities(id, {ENTITY_COLUMNS}) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    keys.sort()
    tokens.sort()
    db.executemany("INSERT INTO name_keys VALUES (?, ?, ?, ?, ?)",
                   [(key, number, size, key.count(" "), key.replace(" ", ""))
                    for key, number, size in keys])
    db.executemany("INSERT INTO name_tokens VALUES (?, ?)", tokens)
    db.executemany("INSERT INTO token_df VALUES (?, ?) ON CONFLICT(token) "
                   "DO UPDATE SET n = n + excluded.n", sorted(df.items()))

def remove_entity(db: sqlite3.Connection, slug: str) -> None:
    row = db.execute(f"SELECT id, {ENTITY_COLUMNS} FROM entities WHERE slug = ?",
                     (slug,)).fetchone()
    if row is None:
        return
    number, entity = row[0], row_entity(row[1:])
    tokens = sorted(frozenset().union(*decode_names(row[7])))
    db.execute("DELETE FROM entities WHERE id = ?", (number,))
    db.executemany("DELETE FROM name_keys WHERE key = ? AND id = ?",
                   [(key, number) for key in entity_keys(entity)])
    db.executemany("DELETE FROM name_tokens WHERE token = ? AND id = ?",
                   [(token, number) for token in tokens])
    db.executemany("UPDATE token_df SET n = n - 1 WHERE token = ?", [(t,) for t in tokens])
    db.executemany("DELETE FROM token_df WHERE token = ? AND n <= 0", [(t,) for t in tokens])


def best_rows(db: sqlite3.Connection, tokens: frozenset[str], chosen: Sequence[str],
              kind: str | None, min_score: float, limit: int) -> list[tuple[float, Any]]:
    """``(score, row)`` of the ``limit`` best entities holding a ``chosen`` token (of
    ``kind``; scoring at least ``min_score`` against ``tokens``), best first, ties by
    slug: ``rank_matches`` over candidates read in slug order, stopping at the
    ``limit``-th perfect score. Candidates are read as (slug, names, id) only and the
    whole rows of the few kept after, in one more query: a candidate's other columns
    cost as much to read as its score does to compute. More than ``CHUNK`` tokens (a
    hostile mention) are asked ``CHUNK`` at a time and their candidates put in slug order
    here, within SQLite's parameter bound."""

    def asked(part: Sequence[str]) -> tuple[str, list[str]]:
        sql = ("SELECT slug, names, id FROM entities WHERE id IN "
               f"(SELECT id FROM name_tokens WHERE token IN ({','.join('?' * len(part))}))")
        return (sql, list(part)) if kind is None else (f"{sql} AND kind = ?", [*part, kind])

    own = not db.in_transaction  # both reads in one snapshot: another process may sync
    if own:
        db.execute("BEGIN")
    try:
        kept = _kept(db, tokens, chosen, asked, min_score, limit)
        rows = {row[0]: row for part in chunks([number for _, _, number in kept])
                for row in db.execute(f"SELECT {ENTITY_COLUMNS} FROM entities WHERE id IN "
                                      f"({','.join('?' * len(part))})", part)}
    finally:
        if own:
            db.execute("COMMIT")
    return [(score, rows[slug]) for score, slug, _ in kept]


def _kept(db: sqlite3.Connection, tokens: frozenset[str], chosen: Sequence[str],
          asked: Callable[[Sequence[str]], tuple[str, list[str]]], min_score: float,
          limit: int) -> list[tuple[float, str, int]]:
    """``(score, slug, id)`` of ``best_rows``' winners, best first, ties by slug."""
    cursor: sqlite3.Cursor | None = None
    candidates: Iterable[Any]
    if len(chosen) <= CHUNK:
        sql, params = asked(chosen)
        candidates = cursor = db.execute(f"{sql} ORDER BY slug", params)
    else:
        by_slug = {row[0]: row for part in chunks(chosen) for row in db.execute(*asked(part))}
        candidates = (by_slug[slug] for slug in sorted(by_slug))
    scored: list[tuple[float, str, int]] = []
    perfect = 0
    for slug, names, number in candidates:
        score = name_score(tokens, decode_names(names))
        if score >= min_score:
            scored.append((score, slug, number))
            if score >= 1.0 and limit > 0:
                perfect += 1
                if perfect >= limit:
                    break
    if cursor is not None:
        cursor.close()  # stopped early: end the statement before the transaction ends
    scored.sort(key=lambda item: (-item[0], item[1]))  # score, then slug
    return scored[:limit]
