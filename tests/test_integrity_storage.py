"""Issue 11, data integrity at the storage edge: an overwrite without its history is not
made, leftovers of killed writers are swept by the next write, a full or read-only vault
queues the write instead of crashing, and a name the filesystem cannot hold is exit 2."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from echo_core.context import EchoContext, create_context
from echo_core.errors import EchoError, ExitCode
from echo_core.history import NoteHistory
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.notes_io import put_note
from echo_core.ops.outbox import flush
from plugins.storage_fs.folder_storage import FolderStorage

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def ctx(tmp_path: Path) -> EchoContext:
    env = {"HOME": str(tmp_path / "home"), "ECHO_CONFIG": str(tmp_path / "none.toml"),
           "ECHO_TODAY": "2026-03-01", "ECHO_NOW": "2026-03-01T10:00:00"}
    context = create_context(vault=str(tmp_path / "vault"), state_dir=str(tmp_path / "state"),
                             env=env)
    init_vault(context)
    return context


def test_an_overwrite_whose_history_cannot_be_kept_is_refused(
        ctx: EchoContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    put_note(ctx, "notes/plan.md", "# Plan\n\nversion one\n")

    def unwritable(self: NoteHistory, *args: Any, **kwargs: Any) -> Any:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(NoteHistory, "keep", unwritable)
    with pytest.raises(EchoError) as refused:
        put_note(ctx, "notes/plan.md", "# Plan\n\nversion two\n")
    assert refused.value.code == ExitCode.NOT_CONFIGURED
    assert "history" in refused.value.message and "ECHO_STATE_DIR" in refused.value.message
    assert (tmp_path / "vault/notes/plan.md").read_text() == "# Plan\n\nversion one\n"


KILLED_WRITER = """
import os, signal, sys
from plugins.storage_fs.folder_storage import FolderStorage
def die(src, dst):
    os.kill(os.getpid(), signal.SIGKILL)  # killed after the temp file, before the rename
os.replace = die
FolderStorage(sys.argv[1]).write(sys.argv[2], "x" * 5000)
"""


def temp_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.tmp") if p.is_file())


def test_temp_files_of_killed_writers_are_gone_after_the_next_write(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(3):
        proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(vault),
                               f"notes/n{n}.md"], cwd=REPO, capture_output=True, timeout=60,
                              check=False)
        assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert len(temp_files(vault)) >= 1  # (each killed writer's first write swept the last)
    FolderStorage(vault).write("notes/other.md", "next write\n")
    assert temp_files(vault) == []
    assert not (vault / "notes/n0.md").exists()


def test_a_live_writers_temp_file_is_not_swept(tmp_path: Path) -> None:
    from echo_core.tempfiles import temp_name

    vault = tmp_path / "vault"
    (vault / "_agent/.tmp").mkdir(parents=True)
    mine = vault / "_agent/.tmp" / temp_name("x.md")  # this (live) process's
    mine.write_text("in flight")
    FolderStorage(vault).write("notes/a.md", "a\n")
    assert mine.exists()


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_a_full_or_read_only_vault_queues_the_capture_and_lands_it_once_later(
        ctx: EchoContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    real_open = os.open

    def refusing(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith(".tmp") and "/vault/" in str(path):
            raise OSError(code, os.strerror(code))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing)
    envelope = capture(ctx, CaptureRequest(title="Queue Theory", kind="concept",
                                           body="waits for space"))
    assert (envelope.ok, envelope.action) == (True, "queued"), envelope.message
    assert os.strerror(code) in envelope.message
    monkeypatch.setattr(os, "open", real_open)
    assert not (tmp_path / "vault/resources/concepts/queue-theory.md").exists()
    result = flush(ctx).data
    assert (result.synced, result.pending) == (1, 0)
    text = (tmp_path / "vault/resources/concepts/queue-theory.md").read_text()
    assert text.count("waits for space") == 1


def test_a_name_too_long_for_the_filesystem_is_a_usage_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = FolderStorage(tmp_path)
    with pytest.raises(EchoError) as refused:
        storage.write("notes/" + "n" * 300 + ".md", "x")  # refused by the path rules
    assert refused.value.code == ExitCode.USAGE
    storage.write("notes/" + "n" * 240 + ".md", "x")  # legal: its temp file name is capped
    real_open = os.open

    def short_names(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith(".tmp"):  # a file system with short names (eCryptfs: 143)
            raise OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", short_names)
    with pytest.raises(EchoError) as refused:
        storage.write("notes/" + "m" * 150 + ".md", "x")
    assert refused.value.code == ExitCode.USAGE
    assert "shorter name" in refused.value.message


def test_doctor_fails_when_the_entity_index_is_damaged(ctx: EchoContext, tmp_path: Path) -> None:
    from echo_core.ops.doctor import run_doctor

    with open(tmp_path / "vault/_agent/index/entities.json", "a", encoding="utf-8") as index:
        index.write("appended junk\n")
    fresh = create_context(vault=str(tmp_path / "vault"), state_dir=str(tmp_path / "state"),
                           env=dict(ctx.env))
    envelope = run_doctor(fresh)
    check = {c.name: c for c in envelope.data.checks}["entity-index"]
    assert not envelope.ok and check.status == "fail"
    assert "entities.json" in check.detail


def test_doctor_does_not_advise_init_for_a_vault_gone_missing(
        ctx: EchoContext, tmp_path: Path) -> None:
    import shutil

    from echo_core.ops.doctor import run_doctor

    shutil.rmtree(tmp_path / "vault")
    fresh = create_context(vault=str(tmp_path / "vault"), state_dir=str(tmp_path / "state"),
                           env=dict(ctx.env))
    check = {c.name: c for c in run_doctor(fresh).data.checks}["vault"]
    assert check.status == "fail" and "init" not in check.fix and "mount" in check.fix
