"""``PgftsRanker``: a ``PersistentRanker`` kept in the vault's PostgreSQL schema.

Shared by every replica: the index is the ``echo_fts`` table of the vault's own schema
(``tables``), written in the same database every replica reads, so a note one replica
upserts is searchable from all of them once its transaction commits. There is no local
index to keep current across machines, and the state dir is not used.

Writes: ``upsert`` / ``remove`` / ``upsert_many`` / ``remove_many`` are one transaction
per call (the row count in ``echo_fts_meta`` moves in the same transaction);
``rebuild`` replaces every row in one transaction (readers on other connections see
the old index until it commits), streaming the rows with ``COPY``.

Score of a document d for the distinct query terms t (weights of repeated terms summed,
as ``bm25`` does)::

    score(d) = prior(d) x sum over t matching d of  w_t x idf(t) x rank(d, t)
    rank(d, t) = ts_rank_cd(RANK_WEIGHTS, tsv(d), t, NORMALIZATION)
    idf(t)     = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    prior(d)   = IndexDoc.weight x freshness(updated, today)

``ts_rank_cd`` weighs a title occurrence (label A) over a body one (D) and divides by
1 + log(document length) (normalization 1); ``idf`` is BM25's, from the exact document
frequency (N is kept in ``echo_fts_meta``); freshness is ``echo_core.scoring``'s
(half-life and floor, an unknown date 1.0, a future date age 0). Only documents matching
a plain term are scored; ``boost_only`` terms add to those only. Results are
``(path, score > 0)``, best first, ties by path (code-point order), at most ``limit``.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from echo_core import (
    FRESHNESS_FLOOR,
    FRESHNESS_HALF_LIFE_DAYS,
    IndexDoc,
    Storage,
    Tokenizer,
    WeightedTerm,
)
from plugins.recall_pgfts.lexemes import quote, tsquery_literal, tsvector_literal, usable
from plugins.recall_pgfts.tables import FTS, META, ensure_tables

#: ``ts_rank_cd`` weights of the labels {D, C, B, A} (PostgreSQL's defaults): a title
#: occurrence (A) counts ten body ones (D).
RANK_WEIGHTS = (0.1, 0.2, 0.4, 1.0)
#: ``ts_rank_cd`` normalization: 1 = divide by 1 + log(document length).
NORMALIZATION = 1
#: Documents written per ``COPY`` between two progress reports of ``rebuild``.
BATCH = 500


def tokenizer_id(tokenizer: Tokenizer) -> str:
    """The tokenizer's ``name`` (or class) and ``version``: lexemes of another one do
    not match our query terms, so a change means a rebuild."""
    name = getattr(tokenizer, "name", None) or type(tokenizer).__name__
    version = getattr(tokenizer, "version", None)
    return f"{name}@{version}" if version else str(name)


def day_ordinal(updated: str) -> int:
    """``date.toordinal()`` of an ISO date (first 10 characters); 0 when unknown."""
    text = updated.strip()[:10]
    try:
        return _dt.date.fromisoformat(text).toordinal() if text else 0
    except ValueError:
        return 0


def clean_weight(weight: float) -> float:
    """A usable prior: finite and >= 0 (anything else counts as 0: never found)."""
    return float(weight) if math.isfinite(weight) and weight > 0 else 0.0


def merge_terms(terms: Sequence[WeightedTerm]) -> list[tuple[str, float, bool]]:
    """Distinct usable terms ``(term, summed weight, plain)`` in first-seen order;
    ``plain`` unless every copy was ``boost_only``; weights <= 0 dropped."""
    merged: dict[str, tuple[float, bool]] = {}
    for t in terms:
        if usable(t.term):
            weight, plain = merged.get(t.term, (0.0, False))
            merged[t.term] = (weight + float(t.weight), plain or not t.boost_only)
    return [(term, w, plain) for term, (w, plain) in merged.items() if w > 0]


class PgftsRanker:
    """The ``pgfts`` index of one PostgreSQL vault (module docstring). ``storage`` must
    offer ``pg_transaction()`` and ``schema`` (``plugins.recall_pgfts.pg_capable``).
    Safe to use from several threads and processes: every call takes its own pooled
    connection and transaction."""

    def __init__(self, tokenizer: Tokenizer, storage: Storage) -> None:
        self._tokenizer = tokenizer
        self._tokenizer_id = tokenizer_id(tokenizer)
        self._storage = storage
        self._schema: str = getattr(storage, "schema")  # noqa: B009 - duck-typed
        self._s = f'"{self._schema}"'
        self._today = _dt.date.today().toordinal()
        self._ready = False
        self._sql = _Statements(self._s)

    def __repr__(self) -> str:
        return f"PgftsRanker({self._storage.identity!r})"

    def _tx(self) -> Any:
        """A connection in one transaction, the tables made sure of once per instance."""
        transaction: Callable[[], Any] = getattr(self._storage, "pg_transaction")  # noqa: B009
        if not self._ready:
            with transaction() as conn:
                ensure_tables(conn, self._schema, self._tokenizer_id)
            self._ready = True
        return transaction()

    def _row(self, doc: IndexDoc) -> tuple[str, str, float, int]:
        tsv = tsvector_literal(self._tokenizer.tokenize(doc.title),
                               self._tokenizer.tokenize(doc.text))
        return doc.path, tsv, clean_weight(doc.weight), day_ordinal(doc.updated)

    # --- writes -----------------------------------------------------------------------

    def upsert(self, doc: IndexDoc) -> None:
        """Add or replace ``doc.path`` (one transaction; durable when it returns)."""
        self.upsert_many([doc])

    def upsert_many(self, docs: Sequence[IndexDoc]) -> None:
        """Add or replace every document of ``docs`` in one transaction (a path given
        twice: the later document wins)."""
        rows = {doc.path: self._row(doc) for doc in docs}
        if not rows:
            return
        paths, tsvs, weights, days = (list(column) for column in zip(*rows.values(), strict=True))
        with self._tx() as conn:
            added = conn.execute(self._sql.upsert, (paths, tsvs, weights, days)).fetchall()
            new = sum(1 for (inserted,) in added if inserted)
            if new:
                conn.execute(self._sql.add_docs, (new,))

    def remove(self, path: str) -> None:
        """Forget ``path`` (a no-op when it is not indexed)."""
        self.remove_many([path])

    def remove_many(self, paths: Sequence[str]) -> None:
        """Forget every path of ``paths`` in one transaction (unknown ones: no-ops)."""
        wanted = sorted(set(paths))
        if not wanted:
            return
        with self._tx() as conn:
            gone = len(conn.execute(self._sql.remove, (wanted,)).fetchall())
            if gone:
                conn.execute(self._sql.add_docs, (-gone,))

    def rebuild(self, docs: Iterable[IndexDoc],
                progress: Callable[[int], None] | None = None) -> int:
        """Replace the whole index with ``docs`` in one transaction (others read the old
        index until it commits); the count indexed. ``progress(n)`` every ``BATCH``."""
        md_seen = sum(1 for path in self._storage.list("") if path.endswith(".md"))
        count = 0
        later: dict[str, IndexDoc] = {}
        seen: set[str] = set()
        with self._tx() as conn:
            conn.execute(self._sql.lock_meta)
            conn.execute(self._sql.clear)
            batch: list[tuple[str, str, float, int]] = []
            for doc in docs:
                if doc.path in seen:  # a path given twice: the later document wins
                    later[doc.path] = doc
                    continue
                seen.add(doc.path)
                batch.append(self._row(doc))
                if len(batch) >= BATCH:
                    count += self._copy(conn, batch)
                    if progress:
                        progress(count)
            count += self._copy(conn, batch)
            if later:
                rows = [self._row(doc) for doc in later.values()]
                conn.execute(self._sql.upsert, [list(c) for c in zip(*rows, strict=True)])
            conn.execute(self._sql.built, (self._tokenizer_id, len(seen), md_seen))
        if progress:
            progress(count)
        return count

    def _copy(self, conn: Any, batch: list[tuple[str, str, float, int]]) -> int:
        """Stream ``batch`` into ``echo_fts`` with ``COPY``; empties it; its size."""
        done = len(batch)
        if batch:
            with conn.cursor().copy(self._sql.copy) as copy:
                for row in batch:
                    copy.write_row(row)
            batch.clear()
        return done

    # --- state ------------------------------------------------------------------------

    def needs_rebuild(self) -> bool:
        """True when the tables were just created, are of another version or tokenizer,
        or no rebuild ever ran; or when the index is empty while the vault lists another
        number of ``.md`` files than at the last rebuild (notes written around the
        ranker, e.g. by a bulk load). One small query, plus a listing when empty."""
        with self._tx() as conn:
            row = conn.execute(self._sql.meta).fetchone()
        if row is None:
            return True
        tokenizer, docs, built, md_seen = row
        if not built or tokenizer != self._tokenizer_id:
            return True
        if int(docs) > 0:
            return False
        return sum(1 for p in self._storage.list("") if p.endswith(".md")) != int(md_seen)

    def set_today(self, today_ordinal: int) -> None:
        """The date (``date.toordinal()``) freshness is computed against."""
        self._today = int(today_ordinal)

    def paths(self) -> list[str]:
        """Every indexed path, sorted (code-point order)."""
        with self._tx() as conn:
            return [str(row[0]) for row in conn.execute(self._sql.paths).fetchall()]

    # --- search -----------------------------------------------------------------------

    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        """Best ``(path, score)`` pairs, highest first, ties by path, at most ``limit``;
        scores > 0 (module docstring). One query."""
        merged = merge_terms(terms)
        plain = [term for term, _, is_plain in merged if is_plain]
        if not plain or limit <= 0:
            return []
        params = {
            "tq": [quote(term) for term, _, _ in merged],
            "w": [w for _, w, _ in merged],
            "plain": [is_plain for _, _, is_plain in merged],
            "any": tsquery_literal(plain),
            "rw": list(RANK_WEIGHTS),
            "norm": NORMALIZATION,
            "today": self._today,
            "half": FRESHNESS_HALF_LIFE_DAYS,
            "floor": FRESHNESS_FLOOR,
            "limit": int(limit),
        }
        with self._tx() as conn:
            conn.execute("SET LOCAL jit = off")  # compiling costs more than a search
            rows = conn.execute(self._sql.search, params).fetchall()
        return [(str(path), float(score)) for path, score in rows]


class _Statements:
    """The SQL of one schema (``s``: the quoted schema name)."""

    def __init__(self, s: str) -> None:
        fts, meta = f"{s}.{FTS}", f"{s}.{META}"
        self.upsert = (
            f"INSERT INTO {fts} (path, tsv, weight, updated) "
            "SELECT * FROM unnest(%s::text[], %s::tsvector[], %s::float8[], %s::int[]) "
            "ON CONFLICT (path) DO UPDATE SET tsv = EXCLUDED.tsv, weight = EXCLUDED.weight, "
            "updated = EXCLUDED.updated RETURNING (xmax = 0)")
        self.add_docs = f"UPDATE {meta} SET docs = docs + %s"
        self.remove = f"DELETE FROM {fts} WHERE path = ANY(%s) RETURNING 1"
        self.lock_meta = f"SELECT 1 FROM {meta} FOR UPDATE"
        self.clear = f"DELETE FROM {fts}"
        self.copy = f"COPY {fts} (path, tsv, weight, updated) FROM STDIN"
        self.built = (f"UPDATE {meta} SET tokenizer = %s, docs = %s, built = true, "
                      "md_seen = %s")
        self.meta = f"SELECT tokenizer, docs, built, md_seen FROM {meta}"
        self.paths = f"SELECT path FROM {fts} ORDER BY path"
        # the candidates: every document matching a plain term (the GIN index); df of a
        # plain term is counted among them (exact), of a boost-only term over the table;
        # the CTEs are materialized so each is computed once
        self.search = f"""
WITH q AS MATERIALIZED (
    SELECT tq, w, plain, i
    FROM unnest(%(tq)s::tsquery[], %(w)s::float8[], %(plain)s::bool[])
         WITH ORDINALITY AS q(tq, w, plain, i)),
hits AS MATERIALIZED (
    SELECT c.path, c.weight, c.updated, q.i,
           ts_rank_cd(%(rw)s::float4[], c.tsv, q.tq, %(norm)s)::float8 AS r
    FROM {fts} c JOIN q ON c.tsv @@ q.tq
    WHERE c.tsv @@ %(any)s::tsquery AND c.weight > 0),
counted AS (SELECT i, count(*) AS df FROM hits GROUP BY i),
idf AS MATERIALIZED (
    SELECT q.i, q.w * ln(1.0 + (n.n - d.df + 0.5) / (d.df + 0.5)) AS wi
    FROM q CROSS JOIN (SELECT greatest(docs, 1)::float8 AS n FROM {meta}) n
    LEFT JOIN counted c ON c.i = q.i
    CROSS JOIN LATERAL (SELECT least(n.n, CASE WHEN q.plain THEN coalesce(c.df, 0)
        ELSE (SELECT count(*) FROM {fts} f WHERE f.tsv @@ q.tq) END)::float8 AS df) d),
scored AS (
    SELECT h.path,
           sum(idf.wi * h.r) * min(h.weight)
           * CASE WHEN min(h.updated) <= 0 THEN 1.0
                  ELSE greatest(%(floor)s::float8, power(2.0::float8,
                       -greatest(%(today)s - min(h.updated), 0)::float8 / %(half)s::float8))
             END AS score
    FROM hits h JOIN idf ON idf.i = h.i
    GROUP BY h.path)
SELECT path, score FROM scored WHERE score > 0
ORDER BY score DESC, path LIMIT %(limit)s"""
