"""Ranking a search of the loom's index within milliseconds, however big the loom.

FTS5's ``bm25()`` costs what its words cost: before scoring a single row it counts the
rows holding each word of the expression (a word in most of a million records: ~40 ms
each), and ``ORDER BY`` a score visits every match. ``RankedSearch.ranked`` therefore:

* ranks only the newest ``RANK_WINDOW`` matches of the whole expression (their lowest
  rowid found with one ``ORDER BY rowid DESC ... OFFSET``; the window widens 8x while
  the filters leave fewer than ``limit`` hits and older matches remain);
* scores with BM25 over the expression's *rare* words only: a word held by more than
  ``COMMON_ROWS`` records (counted up to that bound, remembered per index) still has to
  match (a subquery on the whole expression) but weighs nothing — BM25 gives such a word
  little weight anyway, and counting it is what is slow;
* when every word is common, orders the matches newest first (no score: 0.0).

Scores are BM25 (text 1, result 0.5, tags 2), higher is better; ties go to the newest.
Filters (agent, kind, time) are checked on each candidate's row; a time window also
bounds the rowids searched (``LoomIndex.rowid_bounds``).
"""

from __future__ import annotations

from typing import Any

from plugins.habitat.loom_index import Located, LoomIndex

__all__ = ["COMMON_ROWS", "RANK_WINDOW", "RankedSearch"]

#: How many of the newest matches are ranked (widened 8x while filters leave too few).
RANK_WINDOW = 2000
#: A word held by more records than this is common: it filters, it is not scored.
COMMON_ROWS = 20_000
_WEIGHTS = "1.0, 0.5, 2.0"  # text, result, tags
#: A word's common / rare verdict is asked again once the index grew by this share.
_RECHECK_GROWTH = 0.25


class RankedSearch:
    """One search's filters over ``index`` (module docstring): ``ranked(words, joiner)``
    for the AND pass, then the OR pass."""

    def __init__(self, index: LoomIndex, limit: int, agent_id: str | None, kind: str | None,
                 low: str | None, high: str | None) -> None:
        self.index = index
        self.limit = limit
        self.filters = [(clause, value) for clause, value in (
            ("r.agent_id = ?", agent_id), ("r.kind = ?", kind), ("r.ts >= ?", low),
            ("r.ts < ?", high)) if value]
        self.lo, self.hi = index.rowid_bounds(low, high)

    # -- words ----------------------------------------------------------------------------

    def _common(self, word: str) -> bool:
        """Whether more than ``COMMON_ROWS`` records hold ``word`` (remembered on the
        index, asked again once it grew by ``_RECHECK_GROWTH``)."""
        memo = self.index.common_words
        rows = self.index.row_count()
        known = memo.get(word)
        if known is not None and (known[0] or rows <= known[1] * (1 + _RECHECK_GROWTH)):
            return known[0]
        (held,) = self.index.db.execute(
            "SELECT count(*) FROM (SELECT rowid FROM records_fts WHERE records_fts MATCH ? "
            "LIMIT ?)", (word, COMMON_ROWS + 1)).fetchone()
        memo[word] = (held > COMMON_ROWS, rows)
        return bool(held > COMMON_ROWS)

    # -- queries --------------------------------------------------------------------------

    def _range(self, column: str, lo: int | None) -> tuple[str, list[Any]]:
        sql, args = "", []
        if lo is not None:
            sql, args = f" AND {column} >= ?", [lo]
        if self.hi is not None:
            sql, args = sql + f" AND {column} <= ?", [*args, self.hi]
        return sql, args

    def _cutoff(self, match: str, window: int) -> int | None:
        """The rowid of the ``window``-th newest match (None: fewer match)."""
        where, args = self._range("rowid", self.lo)
        row = self.index.db.execute(
            f"SELECT rowid FROM records_fts WHERE records_fts MATCH ?{where} "
            "ORDER BY rowid DESC LIMIT 1 OFFSET ?", [match, *args, window - 1]).fetchone()
        return None if row is None else int(row[0])

    def ranked(self, words: list[str], joiner: str) -> list[tuple[Located, float]]:
        """The best ``limit`` records matching ``words`` joined by ``joiner`` (``" AND "``
        / ``" OR "``) and the filters (module docstring)."""
        match = joiner.join(words)
        rare = [w for w in words if not self._common(w)]
        window = RANK_WINDOW
        while True:
            cutoff = self._cutoff(match, window)
            lo = cutoff if cutoff is not None and (self.lo is None or cutoff > self.lo) \
                else self.lo
            if not rare:
                rows = self._newest(match, lo)
            else:
                rows = self._scored(joiner.join(rare), match if joiner == " AND " and
                                    len(rare) < len(words) else None, lo)
            if len(rows) >= self.limit or cutoff is None:
                return rows
            window *= 8

    def _filtered(self, where: str, args: list[Any]) -> tuple[str, list[Any]]:
        for clause, value in self.filters:
            where += f" AND {clause}"
            args.append(value)
        return where, args

    def _scored(self, scored: str, also: str | None,
                lo: int | None) -> list[tuple[Located, float]]:
        where, args = self._range("records_fts.rowid", lo)
        if also is not None:  # the common words must match too
            sub, sub_args = self._range("rowid", lo)
            where += (" AND records_fts.rowid IN (SELECT rowid FROM records_fts "
                      f"WHERE records_fts MATCH ?{sub})")
            args += [also, *sub_args]
        where, args = self._filtered(where, args)
        sql = (f"SELECT r.rowid, r.day, r.offset, -bm25(records_fts, {_WEIGHTS}) AS score "
               "FROM records_fts JOIN records r ON r.rowid = records_fts.rowid "
               f"WHERE records_fts MATCH ?{where} ORDER BY score DESC, r.rowid DESC LIMIT ?")
        return [(Located(rowid, day, offset), float(score)) for rowid, day, offset, score
                in self.index.db.execute(sql, [scored, *args, self.limit])]

    def _newest(self, match: str, lo: int | None) -> list[tuple[Located, float]]:
        where, args = self._filtered(*self._range("records_fts.rowid", lo))
        sql = ("SELECT r.rowid, r.day, r.offset FROM records_fts JOIN records r ON "
               f"r.rowid = records_fts.rowid WHERE records_fts MATCH ?{where} "
               "ORDER BY records_fts.rowid DESC LIMIT ?")
        return [(Located(rowid, day, offset), 0.0) for rowid, day, offset
                in self.index.db.execute(sql, [match, *args, self.limit])]
