"""PostgresStorage's conditional write (``ConditionalWrite.write_unless_changed``) and
its vault lock lost while held, against a real server: a write from stale text changes
nothing, two writers from the same text never both win, and a capture whose lock
connection the server cuts between its read and its write loses nobody's bullet."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from echo_core.actions import Action
from echo_core.context import create_context
from echo_core.locking import StaleLockWarning
from echo_core.models import CaptureRequest
from echo_core.ops.capture import CaptureResult, capture
from echo_core.ops.init import init_vault
from echo_core.ops.outbox import flush
from echo_core.protocols import BackendUnavailable, ConditionalWrite, offers
from echo_core.testing.storage_contract import StorageSpec, probe_lock_in_child
from plugins.storage_postgres import open_postgres_storage
from plugins.storage_postgres.pg_storage import PostgresStorage
from tests.conftest import CLI
from tests.postgres_kit import (
    close_storages,
    pg_schema_url,
    postgres_server,
    terminate_lock_holder,
    wait_until,
)

__all__ = ["pg_schema_url", "postgres_server"]  # fixtures used by this module
FACTORY = "plugins.storage_postgres:open_postgres_storage"


@pytest.fixture
def pair(pg_schema_url: str) -> Iterator[tuple[PostgresStorage, PostgresStorage]]:
    """Two storages of one vault: two pools, so two sets of connections."""
    one, two = open_postgres_storage(pg_schema_url, {}), open_postgres_storage(pg_schema_url, {})
    one.create()
    yield one, two
    one.close()
    two.close()


def test_the_storage_offers_conditional_write(
        pair: tuple[PostgresStorage, PostgresStorage]) -> None:
    assert offers(pair[0], ConditionalWrite)


def test_a_conditional_write_from_stale_text_changes_nothing(
        pair: tuple[PostgresStorage, PostgresStorage]) -> None:
    storage, _ = pair
    storage.write("notes/a.md", "v1\n")
    before = storage.last_change()
    assert storage.write_unless_changed("notes/a.md", "v2\n", "v0\n") is False
    assert storage.write_unless_changed("notes/a.md", "v2\n", None) is False  # exists
    assert storage.write_unless_changed("notes/gone.md", "x\n", "was here\n") is False
    assert storage.read("notes/a.md") == "v1\n" and not storage.exists("notes/gone.md")
    assert storage.last_change() == before  # no change logged, no number used
    assert storage.write_unless_changed("notes/a.md", "v2\r\n", "v1\n") is True
    assert storage.write_unless_changed("notes/new.md", "first\n", None) is True
    assert storage.read("notes/a.md") == "v2\r\n" and storage.read("notes/new.md") == "first\n"
    assert storage.changes_since(before) == [(before + 1, "notes/a.md", "w"),
                                             (before + 2, "notes/new.md", "w")]


def test_concurrent_conditional_writes_from_two_connections_never_both_win(
        pair: tuple[PostgresStorage, PostgresStorage]) -> None:
    storage = pair[0]
    storage.write("notes/race.md", "round 0\n")
    for turn in range(1, 16):
        prior = storage.read("notes/race.md")
        start = threading.Barrier(2)
        won: dict[int, bool] = {}

        def write(who: int, turn: int = turn, prior: str = prior,
                  start: threading.Barrier = start, won: dict[int, bool] = won) -> None:
            start.wait()
            won[who] = pair[who].write_unless_changed("notes/race.md",
                                                      f"round {turn} by {who}\n", prior)

        threads = [threading.Thread(target=write, args=(who,)) for who in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(won.values()) == [False, True], won
        winner = next(who for who, ok in won.items() if ok)
        assert storage.read("notes/race.md") == f"round {turn} by {winner}\n"


def test_a_conditional_write_waits_for_a_write_in_flight_and_then_sees_it(
        pair: tuple[PostgresStorage, PostgresStorage], postgres_server: str) -> None:
    """The check reads the file after the change counter's lock, in a fresh snapshot: a
    write committed while it waited is seen, not the text of before."""
    mine, theirs = pair
    mine.write("notes/a.md", "v1\n")
    s = f'"{mine.schema}"'
    result: list[bool] = []
    waiter = threading.Thread(target=lambda: result.append(
        mine.write_unless_changed("notes/a.md", "mine\n", "v1\n")))
    with theirs.pg_transaction() as conn:  # another writer, not yet committed
        conn.execute(f"SELECT last FROM {s}.echo_change_counter FOR UPDATE")
        conn.execute(f"UPDATE {s}.echo_files SET data = 'theirs', sha256 = sha256('theirs') "
                     "WHERE path = 'notes/a.md'")
        waiter.start()
        with psycopg.connect(postgres_server, autocommit=True) as admin:
            wait_until(lambda: admin.execute(  # the conditional write waits for the lock
                "SELECT 1 FROM pg_catalog.pg_locks WHERE NOT granted").fetchone())
    waiter.join()
    assert result == [False] and mine.read("notes/a.md") == "theirs"


def test_a_write_under_a_lock_lost_while_held_fails_and_writes_nothing(
        pg_schema_url: str, pair: tuple[PostgresStorage, PostgresStorage]) -> None:
    storage, other = pair
    storage.write("notes/a.md", "v1\n")
    table = f'"{storage.schema}".plugin_rows'  # a plugin's own table (pgfts, habitat)
    with storage.pg_transaction() as conn:
        conn.execute(f"CREATE TABLE {table} (x int)")

    def plugin_write() -> None:
        with storage.pg_transaction() as conn:
            conn.execute(f"INSERT INTO {table} VALUES (1)")

    def plugin_rows() -> int:
        with other.pg_transaction() as conn:
            return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def hold_while_the_server_cuts_the_lock() -> None:
        with storage.lock(timeout=2.0):
            storage.write("notes/a.md", "v2\n")  # lands: the lock is held
            terminate_lock_holder(pg_schema_url)
            status, message = probe_lock_in_child(StorageSpec(FACTORY, (pg_schema_url, {})),
                                                  2.0)
            assert status == "acquired", message  # another process may take it now
            before = other.last_change()
            writes: list[Callable[[], Any]] = [
                lambda: storage.write("notes/a.md", "v3\n"),
                lambda: storage.write_unless_changed("notes/a.md", "v3\n", "v2\n"),
                lambda: storage.append_line("notes/a.md", "more"),
                lambda: storage.write_many({"notes/b.md": "b\n"}),
                lambda: storage.delete("notes/a.md"),
                plugin_write,  # a plugin's write through pg_transaction() under the lock
            ]
            for attempt in writes:
                with pytest.raises(BackendUnavailable, match="lost while held"):
                    attempt()
            assert other.read("notes/a.md") == "v2\n" and not other.exists("notes/b.md")
            assert other.last_change() == before
            assert storage.read("notes/a.md") == "v2\n"  # reads still work

    with pytest.warns(StaleLockWarning, match="lost while held"):
        hold_while_the_server_cuts_the_lock()
    assert plugin_rows() == 0  # (asked after the hold: this thread's lock was lost)
    storage.write("notes/a.md", "v3\n")  # the hold is over: writes go through again
    with storage.lock(timeout=2.0):
        storage.write("notes/a.md", "v4\n")
    assert other.read("notes/a.md") == "v4\n"


def test_a_capture_whose_lock_is_cut_between_read_and_write_loses_no_bullet(
        pg_schema_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """lostlock.py made deterministic: capture A reads the note under the vault lock; the
    server cuts A's lock connection; capture B (another process) takes the lock and
    updates the note; then A writes. Both bullets must end up in the note."""
    env = {"HOME": str(tmp_path / "home"), "ECHO_TODAY": "2026-03-01"}
    ctx = create_context(vault=pg_schema_url, state_dir=str(tmp_path / "a"), env=env)
    init_vault(ctx)
    made = capture(ctx, CaptureRequest(title="Lostlock Target", kind="concept", body="start"))
    assert made.ok and isinstance(made.data, CaptureResult)
    note = str(made.data.path)
    storage = ctx.vault.storage
    b_env = dict(os.environ, HOME=str(tmp_path / "home"), ECHO_VAULT=pg_schema_url,
                 ECHO_STATE_DIR=str(tmp_path / "b"), ECHO_TODAY="2026-03-01")
    b_done: list[subprocess.CompletedProcess[str]] = []

    def cut_then_b_captures(real: Callable[..., Any]) -> Callable[..., Any]:
        def write(path: str, *args: Any) -> Any:
            if path == note and not b_done:  # A planned its note; it writes it now
                terminate_lock_holder(pg_schema_url)
                b_done.append(subprocess.run(
                    [*CLI, "capture", "Lostlock Target", "-k", "concept", "-b", "B mark"],
                    capture_output=True, text=True, env=b_env, timeout=60, check=False))
            return real(path, *args)
        return write

    for name in ("write", "write_unless_changed"):
        if hasattr(storage, name):  # the plain write on a storage without the conditional one
            monkeypatch.setattr(storage, name, cut_then_b_captures(getattr(storage, name)))
    with pytest.warns(StaleLockWarning, match="lost while held"):
        a_done = capture(ctx, CaptureRequest(title="Lostlock Target", kind="concept",
                                             body="A mark"))
    monkeypatch.undo()
    assert b_done and b_done[0].returncode == 0 and "updated" in b_done[0].stdout, b_done
    flush(ctx)  # A's capture, when it was queued
    text = storage.read(note)
    assert "A mark" in text and "B mark" in text and "start" in text
    assert a_done.action == Action.QUEUED  # not written under the lost lock: it waited
    close_storages([ctx])
