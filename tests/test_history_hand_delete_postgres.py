"""On a PostgreSQL vault the record of notes deleted by hand is shared like the rest of
the history: one machine's check records a deletion, another's ``history`` sees it, and
the log is never a note."""

from __future__ import annotations

from echo_core.context import EchoContext
from echo_core.history import DELETED_LOG, Deleted
from echo_core.history_files import HISTORY_PREFIX
from tests.postgres_kit import pg_schema_url, postgres_server
from tests.test_postgres_replicas import replicas

__all__ = ["pg_schema_url", "postgres_server", "replicas"]  # fixtures

NOTE = "resources/concepts/engine.md"


def test_a_deletion_recorded_on_one_machine_is_seen_on_another(
        replicas: tuple[EchoContext, EchoContext]) -> None:
    a, b = replicas
    a.vault.write_note(NOTE, "# Engine\n\nfirst\n")
    a.vault.write_note(NOTE, "# Engine\n\nsecond\n")
    with a.vault.storage.lock():
        a.history.record_deleted([(NOTE, "ab" * 8)], at="2026-03-10T10:00:00")
    assert b.history.deleted(NOTE) == Deleted(NOTE, "ab" * 8, "2026-03-10T10:00:00")
    hidden = a.vault.storage.list_hidden(HISTORY_PREFIX)  # type: ignore[attr-defined]
    assert f"{HISTORY_PREFIX}/{DELETED_LOG}" in hidden
    assert not any(DELETED_LOG in p for p in a.vault.storage.list(""))
