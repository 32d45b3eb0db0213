"""Errors carry their exit codes in their classes, and ``BackendUnavailable`` is one of
them (an ``UnavailableError``, exit 69). Since an outage is now an ``EchoError`` too, each
handler of ``EchoError`` that must let an outage pass says so; the tests below pin those
places: an outage is never mistaken for a refusal, a missing file or a failed plugin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from echo_core.context import EchoContext
from echo_core.errors import (
    DuplicateGateError,
    EchoError,
    ExitCode,
    LockHeldError,
    NotConfiguredError,
    NotFoundError,
    UnavailableError,
    UsageError,
    not_found,
    usage_error,
)
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.outbox import FlushBusy
from echo_core.ops.write_intent import recover_pending
from echo_core.protocols import BackendUnavailable, VaultMissing, VaultNotWritable
from plugins.storage_fs.folder_storage import FolderStorage
from tests import test_integrity_storage
from tests.cli_inproc import run_main

CLASSES = [(UsageError, ExitCode.USAGE, "usage"), (NotFoundError, ExitCode.NOT_FOUND, "not-found"),
           (UnavailableError, ExitCode.UNAVAILABLE, "unavailable"),
           (LockHeldError, ExitCode.LOCK_HELD, "lock-held"),
           (DuplicateGateError, ExitCode.DUPLICATE_GATE, "duplicate-gate"),
           (NotConfiguredError, ExitCode.NOT_CONFIGURED, "not-configured")]


@pytest.mark.parametrize(("cls", "code", "name"), CLASSES)
def test_each_error_class_carries_its_exit_code(cls: type[EchoError], code: ExitCode,
                                                name: str) -> None:
    error = cls("what went wrong; what to do")
    assert isinstance(error, EchoError) and cls.code == code
    assert (error.code, error.code_name, error.message) == (code, name, "what went wrong; what to do")
    assert str(error) == "what went wrong; what to do"


def test_echo_error_with_a_code_keeps_working() -> None:
    plain = EchoError("boom")
    assert plain.code == ExitCode.FAILURE
    coded = EchoError("gone", ExitCode.NOT_FOUND)
    assert (coded.code, coded.code_name) == (ExitCode.NOT_FOUND, "not-found")
    assert NotFoundError("x", ExitCode.USAGE).code == ExitCode.USAGE  # an explicit code wins
    assert EchoError.code == ExitCode.FAILURE  # instances never change the class default
    assert repr(usage_error("bad")) == "UsageError('bad', USAGE)"
    assert type(usage_error("bad")) is UsageError and type(not_found("x")) is NotFoundError


@pytest.mark.parametrize("cls", [BackendUnavailable, VaultMissing, VaultNotWritable])
def test_backend_unavailable_is_an_unavailable_error(cls: type[BackendUnavailable]) -> None:
    down = cls("connection refused")
    assert isinstance(down, UnavailableError) and isinstance(down, EchoError)
    assert (down.code, down.message, str(down)) == (ExitCode.UNAVAILABLE, "connection refused",
                                                    "connection refused")


def test_flush_busy_is_a_lock_held_error() -> None:
    assert issubclass(FlushBusy, LockHeldError) and FlushBusy("busy").code == ExitCode.LOCK_HELD


# -- the handlers that let an outage pass ------------------------------------------------

ctx = test_integrity_storage.ctx  # the fixture: an initialised folder vault


def _outage(*args: Any, **kwargs: Any) -> Any:
    raise BackendUnavailable("503 Service Unavailable (test)")


def test_an_outage_part_way_through_a_capture_keeps_its_intent_for_recovery(
        ctx: EchoContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused write rolls back what landed; an outage does not (the vault may be
    back any moment): the intent stays, and recovery meeting the outage again leaves it
    in place rather than setting it aside as unfinishable."""
    real_write, real_conditional = FolderStorage.write, FolderStorage.write_unless_changed

    def down_at_daily(self: FolderStorage, path: str, text: str) -> None:
        if path.startswith("journal/daily/"):
            raise BackendUnavailable("503 Service Unavailable (test)")
        real_write(self, path, text)

    def down_at_daily_if_unchanged(self: FolderStorage, path: str, text: str,
                                   expected: str | None) -> bool:
        if path.startswith("journal/daily/"):
            raise BackendUnavailable("503 Service Unavailable (test)")
        return real_conditional(self, path, text, expected)

    monkeypatch.setattr(FolderStorage, "write", down_at_daily)
    monkeypatch.setattr(FolderStorage, "write_unless_changed", down_at_daily_if_unchanged)
    queued = capture(ctx, CaptureRequest(title="Half Landed", kind="concept", body="kept"))
    assert queued.action == "queued", queued.message
    assert (tmp_path / "vault/resources/concepts/half-landed.md").is_file(), "rolled back"
    intents = ctx.state_dir / "pending-writes"
    assert len(list(intents.glob("*.json"))) == 1
    monkeypatch.setattr(FolderStorage, "read", _outage)
    with pytest.raises(BackendUnavailable):
        recover_pending(ctx)
    assert len(list(intents.glob("*.json"))) == 1 and not list(intents.glob("*.failed"))


def _unreadable(*args: Any, **kwargs: Any) -> Any:
    raise EchoError("one file is unreadable (test)")


@pytest.mark.parametrize("first", [_outage, _unreadable], ids=["read-down", "one-unreadable"])
def test_an_outage_fails_a_backup_instead_of_skipping_files(
        ctx: EchoContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: Any) -> None:
    """A file that cannot be read is skipped and reported, but a file read that met an
    outage fails the backup (exit 69)."""
    from echo_core.ops.backup import backup_vault

    calls: list[str] = []

    def read_bytes(self: FolderStorage, path: str) -> bytes:
        calls.append(path)
        return first() if len(calls) == 1 else _outage()  # type: ignore[no-any-return]

    monkeypatch.setattr(FolderStorage, "read_bytes", read_bytes)
    with pytest.raises(BackendUnavailable):
        backup_vault(ctx, out=str(tmp_path / "backups"))


@pytest.mark.parametrize("failing", ["read", "stat"])
def test_an_outage_after_the_ping_is_not_reported_as_a_broken_vault_by_doctor(
        ctx: EchoContext, monkeypatch: pytest.MonkeyPatch, failing: str) -> None:
    """``read`` fails the marker check, ``stat`` the entity-index check."""
    from echo_core.ops.doctor import run_doctor

    monkeypatch.setattr(FolderStorage, failing, _outage)
    with pytest.raises(BackendUnavailable):
        run_doctor(ctx)


def test_an_outage_is_not_taken_for_a_note_that_does_not_exist(
        ctx: EchoContext, monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.ops.history import note_history

    monkeypatch.setattr(FolderStorage, "exists", _outage)
    with pytest.raises(BackendUnavailable):
        note_history(ctx, "resources/concepts/nothing.md")


def test_a_build_part_that_meets_an_outage_is_that_parts_failure(tmp_path: Path) -> None:
    from echo_core.ops.build import _run_parts

    class DownPart:
        def contribute(self, out_dir: str, context: Any) -> list[str]:
            raise BackendUnavailable("503 (test)")

    with pytest.raises(EchoError) as caught:
        _run_parts({"down": DownPart()}, tmp_path, None)  # type: ignore[arg-type]
    assert not isinstance(caught.value, BackendUnavailable)
    assert caught.value.code == ExitCode.FAILURE
    assert "build part 'down' failed: BackendUnavailable: 503 (test)" in caught.value.message


def test_the_cli_says_vault_unreachable_and_exits_69(
        isolated_env: dict[str, str], vault_dir: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ECHO_VAULT", str(vault_dir))
    assert run_main(["init"], capsys, monkeypatch).code == 0
    monkeypatch.setattr(FolderStorage, "read", _outage)
    run = run_main(["get", "resources/concepts/x.md", "--json"], capsys, monkeypatch)
    assert run.code == 69
    error = json.loads(run.out)["error"]
    assert (error["code"], error["exit"]) == ("unavailable", 69)
    assert error["message"].startswith("vault unreachable: 503 Service Unavailable (test); "
                                       "nothing was written and this command was not queued")
