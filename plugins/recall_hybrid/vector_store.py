"""``VectorStore``: note vectors for one vault, persistent, crash-safe, multi-process.

Layout under the store's folder (e.g. ``<state_dir>/hybrid/``), formats in
``vector_files``: ``vectors.bin`` (the base: header, float32 matrix, paths; rewritten
only whole and atomically), ``delta.log`` (append-only upserts/removals since that base)
and ``lock`` (``flock``: writers exclusive, readers shared while they read the files).

* ``upsert``/``upsert_many``/``remove``: append to the log and fsync, O(records), so a
  note write never rewrites the 150 MB matrix of a 100k-note vault; durable on return.
* When the log holds more than ``max(compact_min, compact_fraction x base rows)``
  records, that writer folds it into a new base (``save``): the matrix is rewritten
  (~0.5 s at 100k x 384), then the log reset. A kill anywhere leaves the old base, or
  the new base with a stale log it already holds (ignored by its gen).
* ``search``: base rows @ query (BLAS sgemv over the memory-mapped matrix) plus the
  log's rows, rows superseded by the log masked out, top-k by ``np.argpartition``. A
  base of ``vector_sketch.MIN_ROWS`` rows or more is first shortlisted on its sketch
  (``vector_sketch``: a 128-dimension projection written with the base) and only the
  shortlist is scored exactly.
* ``cosine_stats``: the mean and standard deviation of a query's cosines over every
  stored vector, exact, from the base's moments (``vector_moments``, written with it)
  corrected for the log's rows; ``cosines_of``: the cosines of given paths.
  Each call first ``refresh``es: two ``stat`` calls, and the new log records if another
  process appended (only those bytes are read).
* Header ``model_id``/``dims``/schema differ from the ranker's, or a file is unreadable:
  ``needs_rebuild()`` is True and ``rebuild(paths, matrix)`` replaces everything.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import numpy.typing as npt

from echo_core import sweep_stale
from plugins.recall_hybrid.vector_files import (
    BASE_NAME,
    LOCK_NAME,
    LOG_NAME,
    BaseFile,
    StoreUnreadable,
    append_records,
    encode_record,
    read_base,
    read_log,
    write_base,
    write_empty_log,
)
from plugins.recall_hybrid.vector_moments import Moments, read_moments, write_moments
from plugins.recall_hybrid.vector_sketch import Sketch, candidates, read_sketch, write_sketch

__all__ = ["StoreUnreadable", "VectorStore"]

F32 = npt.NDArray[np.float32]


class VectorStore:
    """Unit vectors by note path under ``folder``, for ``model_id`` vectors of ``dims``.

    Opening is lazy (first use). Not thread-safe within one process (the ranker holds
    one per process and serialises calls); any number of processes may share a folder.
    """

    def __init__(self, folder: str | os.PathLike[str], *, model_id: str, dims: int,
                 compact_min: int = 1024, compact_fraction: float = 0.05) -> None:
        self.folder = Path(folder)
        self.model_id = model_id
        self.dims = dims
        self.compact_min = compact_min
        self.compact_fraction = compact_fraction
        self._base: BaseFile | None = None
        self._base_key: tuple[int, int, int] | None = None
        self._log_key: tuple[int, int] | None = None
        self._log_end = 0
        self._log_count = 0
        self._unusable: str | None = None
        self._rows: dict[str, int] = {}
        self._delta: dict[str, F32 | None] = {}
        self._search_cache: tuple[list[str], F32, npt.NDArray[np.intp]] | None = None
        self._opened = False

    # -- reading -----------------------------------------------------------------------

    @contextmanager
    def _locked(self, exclusive: bool) -> Iterator[None]:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)

    def _stat_keys(self) -> tuple[tuple[int, int, int] | None, tuple[int, int] | None]:
        keys: list[tuple[int, ...] | None] = []
        for name in (BASE_NAME, LOG_NAME):
            try:
                st = os.stat(self.folder / name)
            except FileNotFoundError:
                keys.append(None)
                continue
            keys.append((st.st_ino, st.st_mtime_ns, st.st_size) if name == BASE_NAME
                        else (st.st_ino, st.st_size))
        base_key, log_key = keys
        return base_key, log_key  # type: ignore[return-value]

    def refresh(self) -> None:
        """Bring this view up to date with the files (cheap when nothing changed)."""
        base_key, log_key = self._stat_keys()
        if self._opened and base_key == self._base_key and log_key == self._log_key:
            return
        if not self.folder.exists():
            self._reset_view(None, None)
            self._opened = True
            return
        with self._locked(exclusive=False):
            self._refresh_locked()

    def _refresh_locked(self) -> None:
        base_key, log_key = self._stat_keys()
        if not self._opened or base_key != self._base_key:
            self._load_base(base_key)
        if self._unusable is not None or self._base is None:
            self._log_key = log_key
            return
        same_log = self._log_key is not None and log_key is not None \
            and log_key[0] == self._log_key[0] and log_key[1] >= self._log_end
        if not same_log:
            self._delta, self._log_end, self._log_count = {}, 0, 0
        records, end, usable = read_log(self.folder, dims=self.dims, gen=self._base.gen,
                                        offset=self._log_end)
        for record in records:
            self._delta[record.path] = record.vector
        self._log_count += len(records)
        self._log_end = end if usable else 0
        self._log_key = log_key
        if records or not same_log:
            self._search_cache = None

    def _reset_view(self, base: BaseFile | None, key: tuple[int, int, int] | None) -> None:
        self._base, self._base_key = base, key
        self._sketch: Sketch | None = None if base is None else read_sketch(
            self.folder, base.gen, len(base.paths), base.dims)
        self._moments: Moments | None = None if base is None else read_moments(
            self.folder, base.gen, len(base.paths), base.dims)
        self._rows = {} if base is None else {p: i for i, p in enumerate(base.paths)}
        self._delta, self._log_key, self._log_end, self._log_count = {}, None, 0, 0
        self._search_cache = None

    def _load_base(self, key: tuple[int, int, int] | None) -> None:
        self._opened = True
        self._unusable = None
        try:
            base = read_base(self.folder)
        except StoreUnreadable as exc:
            self._unusable = str(exc)
            self._reset_view(None, key)
            return
        if base is not None and (base.model_id != self.model_id or base.dims != self.dims):
            self._unusable = f"vectors of {base.model_id} ({base.dims} dims)"
            base = None
        self._reset_view(base, key)

    def needs_rebuild(self) -> bool:
        """True when there is no usable base: none yet, unreadable, or made for another
        model, dims or schema. ``rebuild`` makes it False."""
        self.refresh()
        return self._base is None

    def _live(self) -> Iterator[tuple[str, int | None]]:
        """(path, base row or None for a delta vector) of every stored path."""
        base_paths = self._base.paths if self._base is not None else []
        for row, path in enumerate(base_paths):
            if path not in self._delta:
                yield path, row
        for path, vec in self._delta.items():
            if vec is not None:
                yield path, None

    def paths(self) -> list[str]:
        """Every stored path (base order, then the log's)."""
        self.refresh()
        return [path for path, _ in self._live()]

    def __len__(self) -> int:
        return len(self.paths())

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.get(path) is not None

    def get(self, path: str) -> F32 | None:
        """The stored vector of ``path`` (a read-only float32 (dims,)), or None."""
        self.refresh()
        return self._stored(path)

    def search(self, query: npt.ArrayLike, limit: int) -> list[tuple[str, float]]:
        """The ``limit`` stored paths most similar to ``query`` (a (dims,) vector; unit
        norm for cosines), best first: ``[(path, cosine), ...]``. Ties keep base order."""
        self.refresh()
        q = self._query_vector(query)
        if limit <= 0:
            return []
        delta_paths, delta_matrix, dead_rows = self._search_parts()
        found: list[tuple[float, int, str]] = []
        if self._base is not None and self._sketch is not None:
            rows = self._sketch.shortlist(q, candidates(limit), dead_rows)
            exact = self._base.matrix[rows] @ q
            if len(dead_rows):
                exact[np.isin(rows, dead_rows)] = -np.inf
            found += [(score, order, self._base.paths[order]) for score, order in
                      _top_rows(exact, rows, limit)]
        elif self._base is not None and len(self._base.paths):
            scores = self._base.matrix @ q
            if len(dead_rows):
                scores[dead_rows] = -np.inf
            found += _top(scores, limit, self._base.paths, 0)
        if delta_paths:
            found += _top(delta_matrix @ q, limit, delta_paths, len(self._rows))
        found.sort(key=lambda hit: (-hit[0], hit[1]))
        return [(path, score) for score, _, path in found[:limit] if score != -np.inf]

    def cosine_stats(self, query: npt.ArrayLike) -> tuple[float, float, int]:
        """``(mean, standard deviation, count)`` of ``query``'s cosines over every stored
        vector (``(0.0, 0.0, 0)`` when there is none). Exact: the base's moments, less the
        rows the log supersedes, plus the log's vectors; a base without usable moments
        is scored row by row."""
        self.refresh()
        q = self._query_vector(query)
        delta_paths, delta_matrix, dead_rows = self._search_parts()
        count, total, squares = 0, 0.0, 0.0
        base = self._base
        if base is not None and len(base.paths):
            if self._moments is not None:
                count = self._moments.count - len(dead_rows)
                total, squares = self._moments.sums(q.astype(np.float64))
                gone = (base.matrix[dead_rows] @ q).astype(np.float64)
            else:
                scores = (base.matrix @ q).astype(np.float64)
                count, total, squares = len(scores) - len(dead_rows), \
                    float(scores.sum()), float(scores @ scores)
                gone = scores[dead_rows]
            total, squares = total - float(gone.sum()), squares - float(gone @ gone)
        if delta_paths:
            extra = (delta_matrix @ q).astype(np.float64)
            count, total, squares = count + len(extra), total + float(extra.sum()), \
                squares + float(extra @ extra)
        if count <= 0:
            return 0.0, 0.0, 0
        mean = total / count
        return mean, max(squares / count - mean * mean, 0.0) ** 0.5, count

    def cosines_of(self, query: npt.ArrayLike, paths: Sequence[str]) -> dict[str, float]:
        """The cosine of ``query`` with the stored vector of each of ``paths`` that has
        one (one refresh, one product for all)."""
        self.refresh()
        q = self._query_vector(query)
        found = [(path, vec) for path in paths
                 if (vec := self._stored(path)) is not None]
        if not found:
            return {}
        scores = np.stack([vec for _, vec in found]) @ q
        return {path: float(score) for (path, _), score in zip(found, scores, strict=True)}

    def _stored(self, path: str) -> F32 | None:
        if path in self._delta:
            return self._delta[path]
        row = self._rows.get(path)
        return None if row is None or self._base is None else self._base.matrix[row]

    def _query_vector(self, query: npt.ArrayLike) -> F32:
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(-1)
        if q.shape != (self.dims,):
            raise ValueError(f"query has shape {q.shape}, expected ({self.dims},)")
        return q

    def _search_parts(self) -> tuple[list[str], F32, npt.NDArray[np.intp]]:
        if self._search_cache is None:
            live = [(p, v) for p, v in self._delta.items() if v is not None]
            matrix = np.stack([v for _, v in live]) if live else \
                np.empty((0, self.dims), dtype=np.float32)
            dead = np.fromiter((self._rows[p] for p in self._delta if p in self._rows),
                               dtype=np.intp)
            self._search_cache = ([p for p, _ in live], matrix, dead)
        return self._search_cache

    # -- writing -----------------------------------------------------------------------

    def upsert(self, path: str, vector: npt.ArrayLike) -> None:
        """Store (or replace) the vector of ``path``; durable when it returns."""
        self.upsert_many([path], np.asarray(vector, dtype=np.float32).reshape(1, -1))

    def upsert_many(self, paths: Sequence[str], matrix: npt.ArrayLike) -> None:
        """Store the rows of ``matrix`` (len(paths) x dims) under ``paths``, one log
        append and one fsync for all. Raises ``StoreUnreadable`` when ``needs_rebuild``."""
        rows = np.asarray(matrix, dtype=np.float32)
        if rows.shape != (len(paths), self.dims):
            raise ValueError(f"matrix shape {rows.shape} != ({len(paths)}, {self.dims})")
        self._append(b"".join(encode_record(p, r) for p, r in zip(paths, rows, strict=True)),
                     len(paths))

    def remove(self, path: str) -> None:
        """Forget ``path`` (no-op when absent); durable when it returns."""
        self.refresh()
        if self.get(path) is not None:
            self._append(encode_record(path, None), 1)

    def _append(self, blob: bytes, count: int) -> None:
        with self._locked(exclusive=True):
            self._refresh_locked()
            if self._base is None:
                raise StoreUnreadable(self._unusable or "the vector store has no base yet: "
                                      "rebuild it first")
            if self._log_end == 0:  # no log for this base (or a stale one): start it
                write_empty_log(self.folder, dims=self.dims, gen=self._base.gen)
                self._refresh_locked()
            append_records(self.folder, blob, good_end=self._log_end)
            self._refresh_locked()
            if self._log_count > max(self.compact_min,
                                     self.compact_fraction * len(self._base.paths)):
                self._save_locked()

    def save(self) -> None:
        """Fold the log into a new base now (atomic replace; readers see old or new)."""
        with self._locked(exclusive=True):
            self._refresh_locked()
            if self._base is None:
                raise StoreUnreadable(self._unusable or "the vector store has no base yet")
            self._save_locked()

    def _save_locked(self) -> None:
        live = list(self._live())
        paths = [p for p, _ in live]
        matrix = np.empty((len(live), self.dims), dtype=np.float32)
        base = self._base
        for i, (path, row) in enumerate(live):
            matrix[i] = base.matrix[row] if row is not None and base is not None \
                else self._delta[path]
        self._write_locked(paths, matrix)

    def rebuild(self, paths: Sequence[str], matrix: npt.ArrayLike) -> None:
        """Replace the whole store with ``paths`` and ``matrix`` rows (for this model)."""
        rows = np.asarray(matrix, dtype=np.float32)
        if rows.shape != (len(paths), self.dims) or len(set(paths)) != len(paths):
            raise ValueError("rebuild needs one row per distinct path")
        with self._locked(exclusive=True):
            self._write_locked(list(paths), rows)

    def _write_locked(self, paths: list[str], matrix: F32) -> None:
        sweep_stale(self.folder)
        gen = os.urandom(16)
        write_base(self.folder, model_id=self.model_id, dims=self.dims, gen=gen,
                   paths=paths, matrix=matrix)
        write_sketch(self.folder, gen, matrix)
        write_moments(self.folder, gen, matrix)
        write_empty_log(self.folder, dims=self.dims, gen=gen)
        self._opened = False
        self._refresh_locked()


def _top(scores: npt.NDArray[np.float32], limit: int, paths: list[str], order_base: int
         ) -> list[tuple[float, int, str]]:
    """The best ``limit`` of ``scores`` as (score, tie order, path), unsorted."""
    if limit < len(scores):
        picked = np.argpartition(scores, len(scores) - limit)[len(scores) - limit:]
    else:
        picked = np.arange(len(scores))
    return [(float(scores[i]), order_base + int(i), paths[int(i)]) for i in picked]


def _top_rows(scores: F32, rows: npt.NDArray[np.intp], limit: int) -> list[tuple[float, int]]:
    """The best ``limit`` of ``scores`` (of the base ``rows``) as (score, row)."""
    picked = _top(scores, limit, [""] * len(scores), 0)
    return [(score, int(rows[i])) for score, i, _ in picked]
