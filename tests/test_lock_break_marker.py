"""Breaking a stale vault lock leaves no ``_agent/.lock.break`` behind (a synced vault
showed it to people), and removing it keeps breakers exclusive: a breaker that waited on
a break file its previous holder removed starts over on the current one."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest

from echo_core import StaleLockWarning
from plugins.storage_fs import vault_lock
from plugins.storage_fs.folder_storage import FolderStorage


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _plant_stale_lock(vault: Path) -> None:
    (vault / "_agent").mkdir(exist_ok=True)
    record = {"pid": _dead_pid(), "host": socket.gethostname(), "created": time.time(),
              "token": "planted"}
    (vault / "_agent" / ".lock").write_text(json.dumps(record))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    return root


def test_breaking_a_stale_lock_leaves_no_break_file(vault: Path) -> None:
    _plant_stale_lock(vault)
    with pytest.warns(StaleLockWarning, match="no longer running"), \
            FolderStorage(vault).lock(timeout=1.0):
        pass
    assert sorted(os.listdir(vault / "_agent")) == []


def test_a_break_file_left_by_an_older_version_goes_when_the_lock_is_taken(vault: Path) -> None:
    (vault / "_agent").mkdir()
    (vault / "_agent" / ".lock.break").write_bytes(b"")
    with FolderStorage(vault).lock(timeout=1.0):
        pass
    assert sorted(os.listdir(vault / "_agent")) == []


def test_a_break_file_a_breaker_holds_is_left_to_it(vault: Path) -> None:
    path = vault / "_agent" / ".lock.break"
    (vault / "_agent").mkdir()
    with vault_lock._break_guard(path, wait=True) as held:
        assert held
        with FolderStorage(vault).lock(timeout=1.0):
            pass
        assert path.exists()  # not pulled from under the breaker holding it
    assert not path.exists()  # the breaker removes it itself


def test_a_breaker_that_waited_on_a_removed_break_file_starts_over(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A holds the break file; B opened it and waits; A removes it and leaves; C creates
    a new one and holds it. B then gets the old, removed file: it must not go in."""
    (vault / "_agent").mkdir()
    path = vault / "_agent" / ".lock.break"
    b_opened, c_inside, b_progress = threading.Event(), threading.Event(), threading.Event()
    inside: list[str] = []
    overlaps: list[list[str]] = []
    calls = {"b": 0}

    def flock(fd: int, op: int) -> None:
        if threading.current_thread().name != "B":
            fcntl.flock(fd, op)
            return
        calls["b"] += 1
        if calls["b"] == 1:
            b_opened.set()  # B has the (soon removed) file open
            fcntl.flock(fd, op)
            assert c_inside.wait(10)
        else:
            b_progress.set()  # B is about to wait on the current file
            fcntl.flock(fd, op)

    fake = types.SimpleNamespace(flock=flock, LOCK_EX=fcntl.LOCK_EX, LOCK_NB=fcntl.LOCK_NB)
    monkeypatch.setattr(vault_lock, "fcntl", fake)

    def enter(name: str) -> contextlib.ExitStack:
        stack = contextlib.ExitStack()
        stack.enter_context(vault_lock._break_guard(path, wait=True))
        if inside:
            overlaps.append([*inside, name])
        inside.append(name)
        stack.callback(inside.remove, name)
        return stack

    def breaker_b() -> None:
        with enter("B"):
            b_progress.set()

    a = enter("A")
    thread = threading.Thread(target=breaker_b, name="B")
    thread.start()
    assert b_opened.wait(10)
    a.close()
    with enter("C"):
        c_inside.set()
        assert b_progress.wait(10)
        assert inside == ["C"]
    thread.join(10)
    assert not thread.is_alive()
    assert overlaps == []
    assert calls["b"] >= 2  # B started over at least once
    assert not path.exists()


_CRITICAL_SECTION = r"""
import json, os, sys, time, warnings
sys.path[:0] = json.loads(sys.argv[1])
from plugins.storage_fs.folder_storage import FolderStorage
warnings.simplefilter("ignore")
log = sys.argv[3]
with FolderStorage(sys.argv[2]).lock(timeout=30):
    for word in ("enter", "exit"):
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, f"{word} {os.getpid()}\n".encode())
        os.close(fd)
        time.sleep(0.02)
"""


def test_processes_breaking_the_same_stale_lock_have_one_holder_and_leave_nothing(
    vault: Path, tmp_path: Path
) -> None:
    argv_tail = [json.dumps(sys.path), str(vault)]
    for round_no in range(2):
        _plant_stale_lock(vault)
        log = tmp_path / f"critical-{round_no}.log"
        argv = [sys.executable, "-c", _CRITICAL_SECTION, *argv_tail, str(log)]
        children = [subprocess.Popen(argv) for _ in range(5)]
        assert [child.wait(timeout=90) for child in children] == [0] * 5
        entries = [line.split() for line in log.read_text().splitlines()]
        assert len(entries) == 10
        for enter, leave in zip(entries[::2], entries[1::2], strict=True):
            assert enter[0] == "enter" and leave == ["exit", enter[1]]
        assert sorted(os.listdir(vault / "_agent")) == []

