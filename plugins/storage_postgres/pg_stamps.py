"""What a PostgreSQL vault says about its files without sending their bytes: one query
for many files.

``StampQueries`` is a mix-in of ``PostgresStorage`` providing the optional methods the
core's change finding uses when a backend has them (``echo_core.vault_scan``):

* ``scan_tree(prefix, suffix, prune)``: every file's ``(size, mtime_ns)`` in one range
  scan (``folders`` stays empty: a database has no folder stamps, so the core's
  per-folder check is not used; ``has_folder_stamps`` is false);
* ``file_stamps(paths)``: the stamps of some files, a query per thousand;
* ``file_digests(paths)``: each file's ``content_hash`` (the first 16 hex digits of the
  SHA-256 of its bytes, which the table keeps), without reading the bytes out.

Without them the core falls back to ``list`` plus one ``stat`` per file: a round trip
each, 10k of them for a 10k-note sweep. Hidden files and folders are left out, as
``list`` does. Mtimes are the server's clock (``pg_schema``), as nanoseconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from echo_core import TreeScan, normalize_path

#: Paths per query of ``file_stamps`` / ``file_digests``.
_CHUNK = 1000


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.split("/"))


def _ns(mtime: float) -> int:
    return round(mtime * 1e9)


class StampQueries:
    """Mix-in: needs ``_tx()`` (a connection in a transaction) and ``_s`` (the quoted
    schema) from the storage class."""

    _s: str

    def _tx(self) -> AbstractContextManager[Any]:
        raise NotImplementedError  # the storage class's

    def scan_tree(self, prefix: str = "", suffix: str = "",
                  prune: Sequence[str] = ()) -> TreeScan:
        """Every file under the folder ``prefix`` (those ending with ``suffix`` when
        given; none under the folders ``prune`` names) with ``(size, mtime_ns)``: one
        query. ``folders`` is empty (no folder stamps in a database)."""
        rel = normalize_path(prefix, allow_root=True)
        if rel and _hidden(rel):
            return TreeScan({})
        below = tuple(f"{normalize_path(p)}/" for p in prune)
        sql = f"SELECT path, size, mtime FROM {self._s}.echo_files"
        args: list[Any] = []
        where: list[str] = []
        if rel:
            where.append("path >= %s AND path < %s")
            args += [f"{rel}/", f"{rel}0"]
        if suffix:
            where.append("right(path, %s) = %s")
            args += [len(suffix), suffix]
        if where:
            sql += " WHERE " + " AND ".join(where)
        with self._tx() as conn:
            rows = conn.execute(sql, args).fetchall()
        files = {path: (int(size), _ns(float(mtime))) for path, size, mtime in rows
                 if not _hidden(path) and not path.startswith(below)}
        return TreeScan(files)

    def file_stamps(self, paths: Sequence[str]) -> dict[str, tuple[int, int] | None]:
        """``(size, mtime_ns)`` of each of ``paths`` (None: no such file); a query per
        thousand. Bad paths raise (exit 2) before anything is asked."""
        found = self._columns(paths, "size, mtime")
        return {p: None if row is None else (int(row[0]), _ns(float(row[1])))
                for p, row in found.items()}

    def file_digests(self, paths: Sequence[str]) -> dict[str, str | None]:
        """``content_hash`` of each file's bytes (None: no such file), from the stored
        SHA-256: no bytes leave the server."""
        found = self._columns(paths, "sha256")
        return {p: None if row is None else bytes(row[0]).hex()[:16] for p, row in found.items()}

    def _columns(self, paths: Sequence[str], columns: str) -> dict[str, tuple[Any, ...] | None]:
        targets = [(given, normalize_path(given)) for given in paths]
        unique = sorted({rel for _, rel in targets})
        rows: dict[str, tuple[Any, ...]] = {}
        if unique:
            with self._tx() as conn:
                for start in range(0, len(unique), _CHUNK):
                    for row in conn.execute(
                            f"SELECT path, {columns} FROM {self._s}.echo_files "
                            "WHERE path = ANY(%s)", (unique[start:start + _CHUNK],)):
                        rows[row[0]] = tuple(row[1:])
        return {given: rows.get(rel) for given, rel in targets}
