"""``sqlite_wal.settle_wal``: a writer that let the log grow truncates it after its commit,
so the next process to open the database does not replay megabytes of frames; nothing
written is lost, a busy log is left for later without waiting long, and the stores that
write big transactions (entity-name cache, vault manifest, bm25 delta) settle theirs."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

import echo_core.sqlite_wal as wal
from echo_core.sqlite_wal import settle_wal


def _db(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, timeout=10.0)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA wal_autocheckpoint = 0")  # only settle_wal empties the log here
    db.execute("CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v TEXT)")
    return db


def _fill(db: sqlite3.Connection, rows: int, start: int = 0) -> None:
    db.execute("BEGIN IMMEDIATE")
    db.executemany("INSERT INTO t VALUES (?, ?)", ((start + i, "x" * 500) for i in range(rows)))
    db.execute("COMMIT")


def _wal_size(path: Path) -> int:
    return os.stat(f"{path}-wal").st_size if os.path.exists(f"{path}-wal") else 0


def test_a_log_past_the_bound_is_truncated_and_every_row_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    db = _db(path)
    _fill(db, 1000)  # ~0.5 MB of frames
    assert 1 << 18 < _wal_size(path) <= wal.SETTLE_BYTES
    assert not settle_wal(db, path), "under SETTLE_BYTES (1 MB): left alone"
    _fill(db, 11000, start=1000)
    assert _wal_size(path) > wal.SETTLE_BYTES
    assert settle_wal(db, path)
    assert _wal_size(path) == 0
    other = sqlite3.connect(path)
    assert other.execute("SELECT COUNT(*), MAX(k) FROM t").fetchone() == (12000, 11999)
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 10000, "its own wait restored"


def test_a_missing_log_or_database_is_no_error(tmp_path: Path) -> None:
    db = sqlite3.connect(":memory:")
    assert not settle_wal(db, tmp_path / "absent.sqlite")


def test_a_reader_in_another_connection_leaves_the_log_for_later_without_a_long_wait(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wal, "SETTLE_BYTES", 1 << 16)
    path = tmp_path / "a.sqlite"
    db = _db(path)
    _fill(db, 2000)
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT COUNT(*) FROM t").fetchone() == (2000,)  # holds a snapshot
    _fill(db, 2000, start=2000)
    started = time.monotonic()
    assert not settle_wal(db, path)
    assert time.monotonic() - started < 5.0  # the 10 s busy wait was not used
    reader.execute("COMMIT")
    assert reader.execute("SELECT COUNT(*) FROM t").fetchone() == (4000,)
    assert settle_wal(db, path) and _wal_size(path) == 0


def test_the_entity_name_cache_settles_the_log_its_rebuild_wrote(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.models import Entity
    from tests.capture_kit import VaultBox

    monkeypatch.setattr(wal, "SETTLE_BYTES", 1 << 12)
    box = VaultBox(tmp_path / "box").init()
    ctx = box.ctx()
    entities = [Entity(slug=f"thing-{n:04d}", path=f"resources/concepts/thing-{n:04d}.md",
                       kind="concept", title=f"Thing {n:04d}", aliases=(f"T{n}",))
                for n in range(300)]
    with ctx.storage.lock():
        ctx.entities.load()
        ctx.entities.apply(puts=entities, deletes=[])
    names = ctx.entity_names
    assert names.get("thing-0007") is not None  # the first lookup builds the cache
    assert names.path is not None
    assert _wal_size(names.path) == 0
    assert [m.entity.slug for m in names.fuzzy("thing", limit=2)] == ["thing-0000", "thing-0001"]


def test_the_bm25_delta_and_the_vault_manifest_settle_their_logs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.vault_manifest import VaultManifest
    from tests.bm25_kit import corpus, make

    monkeypatch.setattr(wal, "SETTLE_BYTES", 1 << 12)
    index = make(tmp_path / "state")
    index.rebuild(corpus(50))
    index.upsert_many(corpus(400, seed=9))  # one write transaction of 400 docs
    delta = tmp_path / "state" / "bm25" / "delta.sqlite"
    assert delta.is_file() and _wal_size(delta) == 0
    manifest = VaultManifest(tmp_path / "state")
    with manifest._write() as db:
        db.executemany("INSERT OR REPLACE INTO notes(path, size, mtime, hash) VALUES (?, ?, ?, ?)",
                       ((f"notes/{n}.md", n, n, "x" * 64) for n in range(2000)))
    assert _wal_size(manifest.path) == 0


_WRITER = """
import sqlite3, sys
import echo_core.sqlite_wal as wal
from echo_core.sqlite_wal import settle_wal
wal.SETTLE_BYTES = 1 << 12
path = sys.argv[1]
db = sqlite3.connect(path, isolation_level=None, timeout=10.0)
db.execute("PRAGMA journal_mode = WAL")
db.execute("CREATE TABLE IF NOT EXISTS t(k INTEGER PRIMARY KEY, v TEXT)")
n = db.execute("SELECT COUNT(*) FROM t").fetchone()[0]
while True:
    db.execute("BEGIN IMMEDIATE")
    db.executemany("INSERT INTO t VALUES (?, ?)", ((n + i, "x" * 500) for i in range(500)))
    db.execute("COMMIT")
    n += 500
    print(n, flush=True)
    settle_wal(db, path)
"""


@pytest.mark.parametrize("seed", range(4))
def test_a_writer_killed_while_it_settles_loses_no_committed_row(tmp_path: Path,
                                                                  seed: int) -> None:
    import random
    import subprocess
    import sys

    path = tmp_path / "a.sqlite"
    committed = 0
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        for _ in range(random.Random(seed).randint(2, 12)):
            committed = int(proc.stdout.readline())
        proc.kill()  # mid-write or mid-checkpoint, wherever it is
        proc.wait()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    count, top = db.execute("SELECT COUNT(*), MAX(k) FROM t").fetchone()
    assert count >= committed and count % 500 == 0 and top == count - 1  # none torn or doubled
