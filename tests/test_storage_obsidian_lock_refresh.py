"""The lock note of an Obsidian vault is refreshed while it is held, so a short stale age
is safe: a long operation keeps its lock, and a note its holder stopped refreshing (a
crashed or hung process, a release the server did not take) frees the vault within
``stale_after`` (60 s by default, was 600 s) even when the holder's pid is still alive."""

from __future__ import annotations

import json
import os
import socket
import time

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.locking import StaleLockWarning
from plugins.storage_obsidian import open_obsidian_storage
from plugins.storage_obsidian.lock_note import LOCK_PATH, NoteLock
from plugins.storage_obsidian.obsidian_storage import ObsidianStorage
from tests.obsidian_fake import FakeObsidian
from tests.obsidian_kit import KEY, SETTLE, obsidian_fake, obsidian_storage

__all__ = ["obsidian_fake", "obsidian_storage"]  # fixtures used by this module

STALE = 0.6  # refreshed every STALE / 4 s


def _record(fake: FakeObsidian) -> dict[str, object]:
    loaded: dict[str, object] = json.loads(fake.vault.files[LOCK_PATH][0])
    return loaded


def _another_process(storage: ObsidianStorage, timeout: float) -> object:
    """The lock as another process sees it (its own lock state, the same lock note)."""
    return NoteLock("another process").hold(storage, timeout, STALE, SETTLE)


def test_a_held_lock_is_refreshed_so_a_long_operation_keeps_it(
    obsidian_fake: FakeObsidian,
) -> None:
    storage = ObsidianStorage(obsidian_fake.base_url, KEY, lock_settle=SETTLE, stale_after=STALE)
    with storage.lock(timeout=1.0):
        taken = _record(obsidian_fake)
        with pytest.raises(EchoError) as caught, _another_process(storage, 2 * STALE):  # type: ignore[attr-defined]
            pass
        assert caught.value.code == ExitCode.LOCK_HELD  # not broken as stale meanwhile
        now = _record(obsidian_fake)
        assert now["token"] == taken["token"] and now["created"] == taken["created"]
        assert isinstance(now["beat"], float) and now["beat"] > time.time() - STALE
    assert LOCK_PATH not in obsidian_fake.vault.files
    storage.close()


def test_a_live_processs_leftover_lock_note_frees_the_vault_within_the_default(
    obsidian_fake: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    """A holder that is still running (its pid alive) but no longer refreshes its note."""
    left = {"pid": os.getppid(), "host": socket.gethostname(), "token": "left",
            "created": time.time() - 90, "beat": time.time() - 90}
    obsidian_fake.vault.put(LOCK_PATH, json.dumps(left).encode())
    with pytest.warns(StaleLockWarning, match="stopped refreshing"), obsidian_storage.lock(1.0):
        assert _record(obsidian_fake)["pid"] == os.getpid()
    assert LOCK_PATH not in obsidian_fake.vault.files


def test_the_default_stale_age_is_a_minute(obsidian_fake: FakeObsidian) -> None:
    url = obsidian_fake.base_url.replace("http://", "obsidian+http://")
    storage = open_obsidian_storage(url, {"key": KEY})
    assert storage.stale_after == 60.0
    storage.close()


def test_a_note_left_by_a_failed_release_stops_being_refreshed_and_goes_stale(
    obsidian_fake: FakeObsidian,
) -> None:
    storage = ObsidianStorage(obsidian_fake.base_url, KEY, lock_settle=SETTLE, stale_after=STALE)
    with pytest.warns(UserWarning, match="could not remove"), storage.lock(timeout=1.0):
        obsidian_fake.inject("status", method="DELETE", times=5)
    obsidian_fake.faults.clear()
    left = _record(obsidian_fake)
    time.sleep(STALE / 2)
    assert _record(obsidian_fake) == left  # no refresh after the release
    started = time.monotonic()
    with pytest.warns(StaleLockWarning, match="stopped refreshing"), \
            _another_process(storage, 3 * STALE):  # type: ignore[attr-defined]
        assert time.monotonic() - started < 2 * STALE
    storage.close()


def test_a_refresh_never_replaces_another_holders_record(obsidian_fake: FakeObsidian) -> None:
    storage = ObsidianStorage(obsidian_fake.base_url, KEY, lock_settle=SETTLE, stale_after=STALE)
    other = {"pid": os.getppid(), "host": "elsewhere", "token": "other", "created": time.time()}
    with pytest.warns(StaleLockWarning, match="taken from this process"), storage.lock(1.0):
        _take_over(obsidian_fake, other)
    assert _record(obsidian_fake) == other
    storage.close()


def _take_over(fake: FakeObsidian, record: dict[str, object]) -> None:
    """Another process takes the lock note over; two refresh periods pass."""
    fake.vault.put(LOCK_PATH, json.dumps(record).encode())
    time.sleep(STALE / 2)
    assert _record(fake) == record
