"""Note history on a PostgreSQL vault (issue 20 part 1: "history versions live in Postgres
so every replica shares them"): two machines (own state dirs) of one vault list and
restore the same versions, the ring keeps its size with no stray blob left in the
database, and none of it is a note, a change a replica syncs, or an exported file."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core import catch_up, invoke
from echo_core.context import EchoContext
from echo_core.history import RING_SIZE
from echo_core.history_files import HISTORY_PREFIX, StorageHistoryFiles
from tests.postgres_kit import pg_schema_url, postgres_server
from tests.test_postgres_replicas import replicas

__all__ = ["pg_schema_url", "postgres_server", "replicas"]  # fixtures

NOTE = "resources/concepts/engine.md"


@pytest.fixture
def machines(replicas: tuple[EchoContext, EchoContext]) -> tuple[EchoContext, EchoContext]:
    """Two machines (own state dirs) of one initialised PostgreSQL vault."""
    return replicas


def _history_paths(ctx: EchoContext) -> list[str]:
    return ctx.vault.storage.list_hidden(HISTORY_PREFIX)  # type: ignore[attr-defined,no-any-return]


def test_the_history_of_a_postgres_vault_is_kept_in_the_database(
        machines: tuple[EchoContext, EchoContext], tmp_path: Path) -> None:
    a, _ = machines
    assert isinstance(a.history.files, StorageHistoryFiles)
    a.vault.write_note(NOTE, "# Engine\n\nfirst\n")
    a.vault.write_note(NOTE, "# Engine\n\nsecond\n")
    assert any(p.endswith("/versions.ndjson") for p in _history_paths(a))
    assert not list((tmp_path / "a").glob("**/history/*"))


def test_a_version_kept_on_one_machine_is_restored_on_another(
        machines: tuple[EchoContext, EchoContext]) -> None:
    a, b = machines
    a.vault.write_note(NOTE, "# Engine\n\nfirst\n")
    a.vault.write_note(NOTE, "# Engine\n\nsecond\n")
    versions = b.history.versions(NOTE)
    assert [b.history.text(NOTE, v) for v in versions] == ["# Engine\n\nfirst\n"]
    done = invoke(b, "restore", {"path": NOTE, "version_id": versions[0].version_id,
                                 "confirm": True})
    assert done.ok and a.vault.storage.read(NOTE) == "# Engine\n\nfirst\n"
    assert [a.history.text(NOTE, v) for v in a.history.versions(NOTE)] == [
        "# Engine\n\nsecond\n", "# Engine\n\nfirst\n"]


def test_the_ring_keeps_twenty_and_leaves_no_stray_blob(
        machines: tuple[EchoContext, EchoContext]) -> None:
    a, b = machines
    for i in range(2 * RING_SIZE + 3):  # past the log's compaction (2 x the ring)
        (a if i % 2 else b).vault.write_note(NOTE, f"# version {i}\n")
    versions = a.history.versions(NOTE)
    assert len(versions) == RING_SIZE
    assert [a.history.text(NOTE, v) for v in versions] == [
        f"# version {i}\n" for i in range(2 * RING_SIZE + 1, RING_SIZE + 1, -1)]
    files = [p for p in _history_paths(a) if p.count("/") == 2]  # a ring's, not the path list
    assert len(files) == RING_SIZE + 1  # the blobs of the ring and one log
    assert [p for p in _history_paths(a) if p.count("/") == 1] == [
        f"{HISTORY_PREFIX}/paths.ndjson"]
    stray = f"{files[0].rsplit('/', 1)[0]}/{'0' * 64}"
    a.vault.storage.write(stray, "left by a crash")
    assert stray in _history_paths(a)
    assert sorted(a.history.files.names(files[0].split("/")[1])) == sorted(
        p.rsplit("/", 1)[1] for p in _history_paths(a) if p.count("/") == 2)


def test_history_is_not_a_note_nor_a_change_to_sync_nor_exported(
        machines: tuple[EchoContext, EchoContext], tmp_path: Path) -> None:
    a, b = machines
    catch_up(b)
    a.vault.write_note(NOTE, "# Engine\n\nfirst\n")
    a.vault.write_note(NOTE, "# Engine\n\nsecond\n")
    assert not [p for p in a.vault.storage.list("") if p.startswith(HISTORY_PREFIX)]
    changes = catch_up(b)
    assert NOTE in {*changes.changed, *changes.new}
    assert not [p for p in (*changes.changed, *changes.new)
                if p.startswith(HISTORY_PREFIX)]
    found = invoke(b, "recall", {"query": "first", "include_linked": False}).data
    assert not [h.path for h in found.primary if h.path.startswith(HISTORY_PREFIX)]
    out = tmp_path / "export"
    assert invoke(a, "export", {"to": str(out)}).ok
    assert (out / NOTE).read_text() == "# Engine\n\nsecond\n"
    assert not (out / HISTORY_PREFIX).exists()
