"""Learnings: what agents learned, stored once, reinforced when learned again (SPEC §7).

``LearningStore(path)`` keeps them in SQLite (``learnings_schema``), normally
``<habitat_dir>/learnings.sqlite``; ``LearningStore(path, db=...)`` in the tables of a
PostgreSQL vault (``learnings_pg``, ``pg_sql``: the same SQL, shared by every replica).

* ``store(content, type=..., tags=..., agent_id=..., session_id=..., rationale=...,
  now=..., project=...)``: a near-duplicate of a learning already stored
  (``learnings_similarity``) reinforces it: recurrence + 1, tags joined, one more
  provenance row (with this store's own text); learned again in another project than its
  own (both named, case aside), it becomes a learning of every project (``project`` "");
  otherwise a new ``pending`` learning of ``project`` ("": every project). One ``BEGIN IMMEDIATE`` transaction
  (on PostgreSQL: one transaction under the store's advisory lock): two processes (or
  replicas) storing the same text at once give one learning with recurrence 2.
* States (``STATES``): ``pending`` -> ``approved`` | ``rejected`` (``decide``; a
  rejection keeps its ``reason``). Decay (``decay``) demotes, never deletes: a pending
  learning not seen for ``decay.PENDING_DAYS`` x 24 hours becomes ``demoted-pending``, a
  rejection older than ``decay.REJECTED_DAYS`` x 24 hours becomes ``demoted-rejected``. Learned again, a
  ``demoted-pending`` one is ``pending`` again, and a rejected (or demoted-rejected) one
  comes back to ``pending`` once it recurred ``decay.REVIVE_RECURRENCE`` more times since
  its rejection (its reason kept, for the reviewer).
* Nothing is ever deleted: every store is a provenance row, every change of state a
  ``state_changes`` row.
"""

from __future__ import annotations

import builtins
import contextlib
import datetime as _dt
import json
import secrets
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from plugins.habitat import decay as _decay
from plugins.habitat.learnings_schema import connect, log_change
from plugins.habitat.learnings_similarity import THRESHOLD, compact, normalise, similarity, words

if TYPE_CHECKING:
    from plugins.habitat.pg_sql import PgDb, SqlConn

__all__ = ["STATES", "TYPES", "Learning", "LearningStore", "Provenance", "StoreOutcome",
           "StoreUnreadable"]

#: What a learning is (``store_learning``'s ``type``).
TYPES = ("learning", "finding", "decision", "connection", "artifact")
#: Its states: the operator's decision, and the two decayed states (demoted, not lost).
STATES = ("pending", "approved", "rejected", "demoted-pending", "demoted-rejected")
#: A candidate near-duplicate shares at least this share of the new text's words.
CANDIDATE_SHARE = 0.5
#: Most candidates compared with a new learning (those sharing the most words).
MAX_CANDIDATES = 50

_COLUMNS = ("id, content, type, tags, state, recurrence, agent_id, session_id, rationale, "
            "created, updated, last_seen, decided, decided_recurrence, reason, "
            "insight_path, note_status, project")


class StoreUnreadable(sqlite3.DatabaseError):
    """The store's file is not a learnings store (damaged, or another file)."""


@attrs.frozen(kw_only=True)
class Learning:
    """One learning. ``agent_id`` / ``session_id`` / ``rationale``: its first store's
    provenance (``LearningStore.provenance`` has every one). ``created`` / ``updated`` /
    ``last_seen`` (its latest store) / ``decided`` (its latest decision): ISO times.
    ``reason``: why it was last rejected ("" when never). ``insight_path``: its insight
    note in the vault, once approved. ``note_status``: the ``status`` that note held when
    the habitat last wrote or read it (a different one there is a person's edit).
    ``project``: the project it was learned in, "" for every project (none known, or
    learned in several); its insight note is scoped to it when first written."""

    id: str
    content: str
    type: str
    tags: tuple[str, ...]
    state: str
    recurrence: int
    agent_id: str
    session_id: str
    rationale: str
    created: str
    updated: str
    last_seen: str = ""
    decided: str = ""
    decided_recurrence: int = 0
    reason: str = ""
    insight_path: str | None = None
    note_status: str = ""
    project: str = ""


@attrs.frozen(kw_only=True)
class Provenance:
    """One store of a learning: when, by whom, why, and the text it was stored with."""

    seq: int
    ts: str
    agent_id: str
    session_id: str
    rationale: str
    content: str


@attrs.frozen
class StoreOutcome:
    """What ``store`` did: ``stored`` (a new learning), ``reinforced`` (an existing one,
    recurrence + 1) or ``revived`` (reinforced back to pending); ``score`` is the
    similarity to the learning it reinforced (0.0 for a new one)."""

    learning: Learning
    action: str
    score: float = 0.0


def _learning(row: Sequence[Any]) -> Learning:
    return Learning(id=row[0], content=row[1], type=row[2], tags=tuple(json.loads(row[3])),
                    state=row[4], recurrence=int(row[5]), agent_id=row[6],
                    session_id=row[7], rationale=row[8], created=row[9], updated=row[10],
                    last_seen=row[11], decided=row[12], decided_recurrence=int(row[13]),
                    reason=row[14], insight_path=row[15], note_status=row[16],
                    project=row[17])


def _stamp(now: _dt.datetime) -> str:
    return now.isoformat(timespec="seconds")


class LearningStore:
    """The learnings in the SQLite file at ``path`` (created on first use), or, given
    ``db``, in a PostgreSQL vault's tables (``path`` then names nothing on disk)."""

    def __init__(self, path: Path, *, db: PgDb | None = None) -> None:
        self.path = path
        self.db = db

    def exists(self) -> bool:
        """Whether a learning was ever stored here (SQLite: the file exists; PostgreSQL:
        always, the tables are made on first use)."""
        return self.db is not None or self.path.exists()

    def where(self) -> str:
        """Where the store is, for messages (its file, or its schema)."""
        return str(self.path) if self.db is None else f"schema {self.db.schema!r}"

    def local(self) -> LearningStore:
        """The store of this machine's own derived data (the insight ranker's
        ``insight_index``): itself for a SQLite store, else a SQLite store beside the
        state dir's habitat files."""
        if self.db is None or self.db.local_dir is None:
            return self
        return LearningStore(self.db.local_dir / "learnings-local.sqlite")

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = connect(self.path)
        except sqlite3.OperationalError:
            raise  # busy, no disk space, a folder it cannot write: not a damaged file
        except sqlite3.DatabaseError as exc:
            raise StoreUnreadable(f"{self.path}: {exc}") from None
        try:
            yield conn
        finally:
            conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[SqlConn]:
        """A connection inside ``BEGIN IMMEDIATE`` (committed when the block ends, rolled
        back when it raises); on PostgreSQL the store's serialised write transaction."""
        if self.db is not None:
            with self.db.transaction() as pg:
                yield pg
            return
        with self._connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextlib.contextmanager
    def reading(self) -> Iterator[SqlConn]:
        """A connection for reads (one snapshot while the block runs)."""
        if self.db is not None:
            with self.db.reading() as pg:
                yield pg
            return
        with self._connection() as conn:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.execute("ROLLBACK")

    # -- reads ---------------------------------------------------------------------

    def list(self, state: str | None = None, *,
             type: str | None = None) -> builtins.list[Learning]:
        """Every learning (of ``state`` / ``type`` when given), oldest first."""
        where, args = [], []
        if state is not None:
            where.append("state = ?")
            args.append(state)
        if type is not None:
            where.append("type = ?")
            args.append(type)
        sql = f"SELECT {_COLUMNS} FROM learnings"
        if where:
            sql += " WHERE " + " AND ".join(where)
        with self.reading() as conn:
            rows = conn.execute(sql + " ORDER BY created, id", args).fetchall()
        return [_learning(r) for r in rows]

    def get(self, learning_id: str) -> Learning | None:
        """The learning with id ``learning_id``, or None."""
        with self.reading() as conn:
            return self._get(conn, learning_id)

    def matching(self, prefix: str) -> builtins.list[Learning]:
        """The learnings whose id starts with ``prefix`` (at most 10)."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        with self.reading() as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM learnings WHERE id LIKE ? ESCAPE "
                                "'\\' ORDER BY id LIMIT 10", (escaped + "%",)).fetchall()
        return [_learning(r) for r in rows]

    def provenance(self, learning_id: str) -> builtins.list[Provenance]:
        """Every store of the learning, first first."""
        with self.reading() as conn:
            rows = conn.execute("SELECT seq, ts, agent_id, session_id, rationale, content "
                                "FROM provenance WHERE learning_id = ? ORDER BY seq",
                                (learning_id,)).fetchall()
        return [Provenance(seq=r[0], ts=r[1], agent_id=r[2], session_id=r[3],
                           rationale=r[4], content=r[5]) for r in rows]

    def state_changes(self, learning_id: str) -> builtins.list[tuple[str, str, str, str]]:
        """``(ts, before, after, why)`` of every change of the learning's state."""
        with self.reading() as conn:
            rows = conn.execute("SELECT ts, before, after, why FROM state_changes WHERE "
                                "learning_id = ? ORDER BY rowid", (learning_id,)).fetchall()
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    @staticmethod
    def _get(conn: SqlConn, learning_id: str) -> Learning | None:
        row = conn.execute(f"SELECT {_COLUMNS} FROM learnings WHERE id = ?",
                           (learning_id,)).fetchone()
        return _learning(row) if row else None

    # -- writes --------------------------------------------------------------------

    def store(self, content: str, *, type: str, tags: Sequence[str], agent_id: str,
              session_id: str, rationale: str, now: _dt.datetime,
              project: str = "") -> StoreOutcome:
        """Store ``content`` (already validated) as learned in ``project``, or reinforce
        its near-duplicate (see the module docstring)."""
        normal = normalise(content)
        content_words = words(normal)
        stamp = _stamp(now)
        with self.transaction() as conn:
            match, score = self._near_duplicate(conn, compact(normal), content_words)
            if match is None:
                learning = self._insert(conn, content, normal, content_words, type, tags,
                                        agent_id, session_id, rationale, stamp, project)
                action = "stored"
            else:
                learning, action = self._reinforce(conn, match, tags, stamp, project)
            self._add_provenance(conn, learning.id, stamp, agent_id, session_id, rationale,
                                 content)
        return StoreOutcome(learning, action, score)

    def _near_duplicate(self, conn: SqlConn, key: str,
                        content_words: builtins.list[str]) -> tuple[Learning | None, float]:
        """The stored learning ``content_words`` near-duplicates (the most similar; the
        oldest on a tie), with its similarity."""
        row = conn.execute(f"SELECT {_COLUMNS} FROM learnings WHERE compact = ? ORDER BY "
                           "created, id LIMIT 1", (key,)).fetchone()
        if row is not None:
            return _learning(row), 1.0
        tokens = sorted(set(content_words))
        if not tokens:
            return None, 0.0
        need = max(1, int(len(tokens) * CANDIDATE_SHARE))
        marks = ",".join("?" * len(tokens))
        found = conn.execute(
            f"SELECT learning_id FROM learning_tokens WHERE token IN ({marks}) GROUP BY "
            f"learning_id HAVING COUNT(*) >= ? ORDER BY COUNT(*) DESC, learning_id LIMIT ?",
            (*tokens, need, MAX_CANDIDATES)).fetchall()
        best: tuple[float, str, str] | None = None
        for (candidate,) in found:
            created, stored_words = conn.execute(
                "SELECT created, words FROM learnings WHERE id = ?", (candidate,)).fetchone()
            score = similarity(json.loads(stored_words), content_words)
            if score >= THRESHOLD and (best is None or (-score, created, candidate) <
                                       (-best[0], best[1], best[2])):
                best = (score, created, candidate)
        if best is None:
            return None, 0.0
        return self._get(conn, best[2]), round(best[0], 4)

    def _insert(self, conn: SqlConn, content: str, normal: str,
                content_words: builtins.list[str], type: str, tags: Sequence[str],
                agent_id: str, session_id: str, rationale: str, stamp: str,
                project: str) -> Learning:
        learning_id = secrets.token_hex(4)
        while conn.execute("SELECT 1 FROM learnings WHERE id = ?", (learning_id,)).fetchone():
            learning_id = secrets.token_hex(4)
        tag_list = list(dict.fromkeys(tags))
        conn.execute(
            "INSERT INTO learnings (id, content, compact, words, type, tags, state, "
            "recurrence, agent_id, session_id, rationale, created, updated, last_seen, "
            "project) VALUES (?, ?, ?, ?, ?, ?, 'pending', 1, ?, ?, ?, ?, ?, ?, ?)",
            (learning_id, content, compact(normal), json.dumps(content_words), type,
             json.dumps(tag_list), agent_id, session_id, rationale, stamp, stamp, stamp,
             project))
        conn.executemany("INSERT INTO learning_tokens VALUES (?, ?) ON CONFLICT DO NOTHING",
                         [(t, learning_id) for t in set(content_words)])
        conn.execute("INSERT INTO learning_fts (id, content, tags) VALUES (?, ?, ?)",
                     (learning_id, content, " ".join(tag_list)))
        log_change(conn, learning_id, stamp, "", "pending", "stored")
        learning = self._get(conn, learning_id)
        assert learning is not None
        return learning

    def _reinforce(self, conn: SqlConn, found: Learning, tags: Sequence[str],
                   stamp: str, project: str) -> tuple[Learning, str]:
        recurrence = found.recurrence + 1
        state = _decay.state_when_reinforced(found, recurrence)
        tag_list = list(dict.fromkeys((*found.tags, *tags)))
        elsewhere = bool(project) and found.project.casefold() != project.casefold()
        conn.execute("UPDATE learnings SET recurrence = ?, tags = ?, updated = ?, "
                     "last_seen = ?, state = ?, project = ? WHERE id = ?",
                     (recurrence, json.dumps(tag_list), stamp, stamp, state,
                      "" if elsewhere else found.project, found.id))
        if tag_list != list(found.tags):
            conn.execute("UPDATE learning_fts SET tags = ? WHERE id = ?",
                         (" ".join(tag_list), found.id))
        action = "reinforced"
        if state != found.state:
            log_change(conn, found.id, stamp, found.state, state,
                       f"learned again (recurrence {recurrence})")
            action = "revived" if found.state in _decay.REJECTED_STATES else action
        learning = self._get(conn, found.id)
        assert learning is not None
        return learning, action

    @staticmethod
    def _add_provenance(conn: SqlConn, learning_id: str, stamp: str,
                        agent_id: str, session_id: str, rationale: str, content: str) -> None:
        seq = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM provenance WHERE "
                           "learning_id = ?", (learning_id,)).fetchone()[0]
        conn.execute("INSERT INTO provenance VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (learning_id, seq, stamp, agent_id, session_id, rationale, content))

    def decide(self, learning_id: str, state: str, *, now: _dt.datetime, why: str,
               reason: str | None = None, insight_path: str | None = None,
               note_status: str | None = None) -> Learning:
        """Set the learning's state to ``state`` (an operator's decision, or its note's
        status read back), stamping ``decided`` and the recurrence it was decided at.
        ``reason`` replaces the rejection reason when given; ``insight_path`` /
        ``note_status`` are recorded when given. Raises ``KeyError`` for an unknown id."""
        if state not in STATES:
            raise ValueError(f"unknown state {state!r}")
        stamp = _stamp(now)
        with self.transaction() as conn:
            found = self._get(conn, learning_id)
            if found is None:
                raise KeyError(learning_id)
            conn.execute(
                "UPDATE learnings SET state = ?, updated = ?, decided = ?, "
                "decided_recurrence = recurrence, reason = COALESCE(?, reason), "
                "insight_path = COALESCE(?, insight_path), "
                "note_status = COALESCE(?, note_status) WHERE id = ?",
                (state, stamp, stamp, reason, insight_path, note_status, learning_id))
            if state != found.state:
                log_change(conn, learning_id, stamp, found.state, state, why)
            learning = self._get(conn, learning_id)
        assert learning is not None
        return learning

    def note_written(self, learning_id: str, insight_path: str, note_status: str) -> None:
        """Record the insight note's path and the status it now holds."""
        with self.transaction() as conn:
            conn.execute("UPDATE learnings SET insight_path = ?, note_status = ? WHERE id = ?",
                         (insight_path, note_status, learning_id))

    def decay(self, today: _dt.date, now: _dt.datetime) -> builtins.list[_decay.Demotion]:
        """Demote what is due at ``now``'s time of day on ``today`` (they agree unless a
        caller pins them apart) (``decay.demote_due``); the demotions made."""
        moment = _dt.datetime.combine(today, now.time())
        with self.transaction() as conn:
            return _decay.demote_due(conn, moment, _stamp(now))

