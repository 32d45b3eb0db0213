"""A dict-backed storage that passes ``StorageContract``: proof the suite is reusable by a
backend other than the folder one.

Its files live in one process's memory; only its *lock* is shared across processes (an
``fcntl.flock`` on a lock file), which is what the cross-process lock test checks.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode, not_found
from echo_core.models import FileStat
from echo_core.paths import normalize_path
from echo_core.testing.storage_contract import StorageContract, StorageSpec


class MemoryStorage:
    """Files in a dict; the vault lock is ``flock`` on ``lock_path`` (shared by processes)."""

    def __init__(self, lock_path: str) -> None:
        self.identity = f"memory:{lock_path}"
        self._files: dict[str, tuple[str, float]] = {}
        self._guard = threading.Lock()
        self._lock_path = lock_path
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd = -1

    def read(self, path: str) -> str:
        rel = normalize_path(path)
        with self._guard:
            entry = self._files.get(rel)
        if entry is None:
            raise not_found(f"no file {rel!r} in memory; check the path")
        return entry[0]

    def read_many(self, paths: Sequence[str]) -> dict[str, str | None]:
        clean = {given: normalize_path(given) for given in paths}
        with self._guard:
            found = {given: self._files.get(rel) for given, rel in clean.items()}
        return {given: None if entry is None else entry[0] for given, entry in found.items()}

    def write(self, path: str, text: str) -> None:
        rel = normalize_path(path)
        with self._guard:
            self._files[rel] = (text, time.time())

    def append_line(self, path: str, line: str) -> bool:
        rel = normalize_path(path)
        line = line.rstrip("\r\n")
        with self._guard:
            current = self._files.get(rel, ("", 0.0))[0]
            if line in [existing.rstrip("\r") for existing in current.split("\n")]:
                return False
            first = current.find("\n")
            eol = "\r\n" if first > 0 and current[first - 1] == "\r" else "\n"
            if current and not current.endswith("\n"):
                current += eol
            self._files[rel] = (current + line + eol, time.time())
            return True

    def exists(self, path: str) -> bool:
        rel = normalize_path(path)
        with self._guard:
            return rel in self._files

    def delete(self, path: str) -> None:
        rel = normalize_path(path)
        with self._guard:
            if self._files.pop(rel, None) is None:
                raise not_found(f"no file {rel!r} in memory; nothing to delete")

    def list(self, prefix: str = "") -> list[str]:
        rel = normalize_path(prefix, allow_root=True)
        start = f"{rel}/" if rel else ""
        with self._guard:
            paths = list(self._files)
        return sorted(
            p
            for p in paths
            if p.startswith(start) and not any(part.startswith(".") for part in p.split("/"))
        )

    def stat(self, path: str) -> FileStat:
        rel = normalize_path(path)
        with self._guard:
            entry = self._files.get(rel)
        if entry is None:
            raise not_found(f"no file {rel!r} in memory; check the path")
        return FileStat(path=rel, size=len(entry[0].encode("utf-8")), mtime=entry[1])

    def lock(self, timeout: float = 10.0) -> AbstractContextManager[None]:
        return self._hold(timeout)

    @contextlib.contextmanager
    def _hold(self, timeout: float) -> Iterator[None]:
        deadline = time.monotonic() + timeout
        if not self._thread_lock.acquire(timeout=timeout):
            raise EchoError("memory vault lock held by another thread", ExitCode.LOCK_HELD)
        try:
            if self._depth == 0:
                self._fd = self._flock(deadline)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    os.close(self._fd)  # releases the flock
        finally:
            self._thread_lock.release()

    def _flock(self, deadline: float) -> int:
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise EchoError(
                        f"memory vault lock {self._lock_path} held by another process; retry",
                        ExitCode.LOCK_HELD,
                    ) from None
                time.sleep(0.01)

    def ping(self) -> None:
        return None

    def create(self) -> None:
        return None


class TestMemoryStorage(StorageContract):
    @pytest.fixture
    def storage(self, tmp_path: Path) -> MemoryStorage:
        return MemoryStorage(str(tmp_path / "memory.lock"))

    @pytest.fixture
    def storage_factory_spec(self, tmp_path: Path) -> StorageSpec:
        return StorageSpec(f"{__file__}:MemoryStorage", (str(tmp_path / "memory.lock"),))


def test_memory_storages_do_not_share_files(tmp_path: Path) -> None:
    one = MemoryStorage(str(tmp_path / "lock"))
    two = MemoryStorage(str(tmp_path / "lock"))
    one.write("n.md", "x\n")
    assert not two.exists("n.md")
