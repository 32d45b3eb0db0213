"""``StorageBase``: a backend implementing only the primitives inherits the rest and
passes ``StorageContract`` (issue 12, item 3; fsspec's ``AbstractFileSystem`` model)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from echo_core import StorageBase
from echo_core.errors import EchoError, ExitCode
from echo_core.models import FileStat
from echo_core.protocols import BackendUnavailable
from echo_core.testing.storage_contract import StorageContract, StorageSpec
from plugins.storage_fs.folder_storage import FolderStorage
from plugins.storage_obsidian.obsidian_storage import ObsidianStorage
from tests.test_storage_memory import MemoryStorage

PRIMITIVES = {"read", "write", "delete", "list", "stat", "lock"}
DERIVED = {"read_many", "exists", "append_line", "ping", "create"}


class PrimitiveStorage(StorageBase):
    """Only the six primitives (files kept by a ``MemoryStorage``); every other
    ``Storage`` method comes from ``StorageBase``. ``calls`` records primitive calls."""

    def __init__(self, lock_path: str) -> None:
        self._files = MemoryStorage(lock_path)
        self.identity = f"primitive:{lock_path}"
        self.calls: list[str] = []
        self.down = False

    def _use(self, name: str) -> None:
        if self.down:
            raise BackendUnavailable("the primitive backend is down; retry later")
        self.calls.append(name)

    def read(self, path: str) -> str:
        self._use("read")
        return self._files.read(path)

    def write(self, path: str, text: str) -> None:
        self._use("write")
        self._files.write(path, text)

    def delete(self, path: str) -> None:
        self._use("delete")
        self._files.delete(path)

    def list(self, prefix: str = "") -> list[str]:
        self._use("list")
        return self._files.list(prefix)

    def stat(self, path: str) -> FileStat:
        self._use("stat")
        return self._files.stat(path)

    def lock(self, timeout: float = 10.0) -> AbstractContextManager[None]:
        self._use("lock")
        return self._files.lock(timeout)


class TestPrimitiveStorage(StorageContract):
    @pytest.fixture
    def storage(self, tmp_path: Path) -> PrimitiveStorage:
        return PrimitiveStorage(str(tmp_path / "primitive.lock"))

    @pytest.fixture
    def storage_factory_spec(self, tmp_path: Path) -> StorageSpec:
        return StorageSpec(f"{__file__}:PrimitiveStorage", (str(tmp_path / "primitive.lock"),))


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[PrimitiveStorage]:
    yield PrimitiveStorage(str(tmp_path / "primitive.lock"))


def test_the_test_backend_defines_only_the_primitives() -> None:
    own = {name for name in vars(PrimitiveStorage) if not name.startswith("_")}
    assert own == PRIMITIVES
    for name in DERIVED:
        assert getattr(PrimitiveStorage, name) is getattr(StorageBase, name)


def test_a_backend_missing_a_primitive_cannot_be_built() -> None:
    assert StorageBase.__abstractmethods__ == frozenset(PRIMITIVES)
    partial = type("Partial", (StorageBase,),
                   {name: getattr(PrimitiveStorage, name) for name in PRIMITIVES - {"lock"}})
    with pytest.raises(TypeError, match="abstract"):
        partial()


def test_derived_methods_use_only_primitives(storage: PrimitiveStorage) -> None:
    storage.write("a.md", "x")
    storage.calls.clear()
    assert storage.exists("a.md") and not storage.exists("b.md")
    assert storage.read_many(["a.md", "b.md"]) == {"a.md": "x", "b.md": None}
    assert storage.append_line("a.md", "- y") is True
    assert storage.read("a.md") == "x\n- y\n"
    assert storage.calls == ["stat", "stat", "read", "read", "read", "write", "read"]


def test_derived_methods_validate_paths_before_any_primitive(storage: PrimitiveStorage) -> None:
    with pytest.raises(EchoError) as caught:
        storage.read_many(["a.md", "../escape.md"])
    assert caught.value.code == ExitCode.USAGE and storage.calls == []
    with pytest.raises(EchoError) as caught:
        storage.append_line("a.md", "two\nlines")
    assert caught.value.code == ExitCode.USAGE and storage.calls == []


def test_ping_and_create_report_an_unreachable_backend(storage: PrimitiveStorage) -> None:
    storage.ping()
    storage.create()
    storage.down = True
    with pytest.raises(BackendUnavailable):
        storage.ping()
    with pytest.raises(BackendUnavailable):
        storage.create()


@pytest.mark.parametrize("backend", [FolderStorage, ObsidianStorage])
def test_builtin_backends_inherit_the_base(backend: type[StorageBase]) -> None:
    assert issubclass(backend, StorageBase) and not inspect.isabstract(backend)
