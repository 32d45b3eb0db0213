"""``StorageContract``: the behaviour every ``Storage`` backend must show (DESIGN §4).

A mix-in suite in the style of fsspec's abstract tests. Subclass it in a ``Test*`` class
and override the fixtures that build your implementation::

    from echo_core.testing import StorageContract, StorageSpec

    class TestMyStorage(StorageContract):
        @pytest.fixture
        def storage(self, tmp_path):
            return MyStorage(str(tmp_path))

        @pytest.fixture
        def storage_factory_spec(self, tmp_path):
            return StorageSpec("my_plugin.storage:MyStorage", (str(tmp_path),))
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar

import attrs
import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.protocols import Storage

# have pytest rewrite the asserts of this suite's conditional-write part too (the package
# names the other suite modules); it must be named before it is imported
pytest.register_assert_rewrite("echo_core.testing.storage_contract_conditional")
from echo_core.testing.storage_contract_conditional import (
    BAD_PATHS,
    ConditionalWriteContract,
    named,
)

#: Operations that take one path; each must validate it.
PATH_OPERATIONS: dict[str, Callable[[Storage, str], object]] = {
    "read": lambda s, p: s.read(p),
    "read_many": lambda s, p: s.read_many([p]),
    "write": lambda s, p: s.write(p, "text\n"),
    "append_line": lambda s, p: s.append_line(p, "- line"),
    "delete": lambda s, p: s.delete(p),
    "exists": lambda s, p: s.exists(p),
    "stat": lambda s, p: s.stat(p),
    "list": lambda s, p: s.list(p),
}

UNICODE_TEXT = "# Café 東京 🧠\n\nJosé met 李小龙 — naïve résumé 🚀\nΩ≈ç√ 😀\n"


@attrs.frozen
class StorageSpec:
    """How to rebuild a storage of the same vault in another Python process.

    ``target`` is ``"package.module:callable"`` (or ``"/path/to/file.py:callable"``);
    the child process calls ``callable(*args, **kwargs)``. Arguments must be JSON data.
    The child gets the parent's ``sys.path``.
    """

    target: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = attrs.field(factory=dict)


#: Builds ``storage()`` in a child process from the JSON payload in ``argv[1]``.
_BUILD = r"""
import importlib, importlib.util, json, sys
payload = json.loads(sys.argv[1])
sys.path[:0] = payload["sys_path"]
module_ref, _, name = payload["target"].rpartition(":")
if module_ref.endswith(".py"):
    spec = importlib.util.spec_from_file_location("_storage_contract_factory", module_ref)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
else:
    module = importlib.import_module(module_ref)
factory = module
for part in name.split("."):
    factory = getattr(factory, part)

def storage():
    return factory(*payload["args"], **payload["kwargs"])
"""

_LOCK_PROBE = _BUILD + r"""
from echo_core.errors import EchoError
try:
    with storage().lock(timeout=payload["timeout"]):
        print("acquired")
except EchoError as exc:
    print("error", int(exc.code))
    print(exc.message)
"""

_IDENTITY_PROBE = _BUILD + r"""
print(json.dumps([[type(s).__qualname__, s.identity] for s in (storage(), storage())]))
"""

#: How far (s) a just-written file's ``stat().mtime`` may be from this machine's clock.
MTIME_SLACK = 60.0


def start_in_child(script: str, spec: StorageSpec, **extra: Any) -> subprocess.Popen[str]:
    """``script`` (``_BUILD`` and more) started in a fresh Python process with the payload
    of ``spec`` and ``extra``."""
    payload = json.dumps({"sys_path": [p for p in sys.path if p], "target": spec.target,
                          "args": list(spec.args), "kwargs": spec.kwargs, **extra})
    return subprocess.Popen([sys.executable, "-c", script, payload], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def output_of(child: subprocess.Popen[str]) -> str:
    """Standard output of a ``start_in_child`` process; a crash fails the test."""
    try:
        out, err = child.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        raise
    assert child.returncode == 0, f"storage probe crashed:\n{err}"
    return out


def probe_lock_in_child(spec: StorageSpec, timeout: float) -> tuple[str, str]:
    """Try ``storage.lock(timeout)`` in a fresh Python process built from ``spec``.

    Returns ``("acquired", "")`` or ``("error <code>", message)``.
    """
    status, _, message = output_of(start_in_child(_LOCK_PROBE, spec, timeout=timeout)
                                   ).partition("\n")
    return status.strip(), message.strip()


def identities_in_children(spec: StorageSpec) -> list[tuple[str, str]]:
    """``(class name, identity)`` of the storages two fresh Python processes (at once) open
    from ``spec``, two each, one after the other."""
    children = [start_in_child(_IDENTITY_PROBE, spec) for _ in range(2)]
    return [(kind, identity) for child in children
            for kind, identity in json.loads(output_of(child))]


class StorageContract(ConditionalWriteContract):
    """Contract tests for ``echo_core.protocols.Storage`` (mix-in; not collected alone),
    with those of its optional ``ConditionalWrite`` (``ConditionalWriteContract``: the
    storage's own conditional write, or the core's fallback when it offers none).

    Fixtures to override:

    * ``storage`` -> a fresh, empty, writable ``Storage`` for each test (e.g. on
      ``tmp_path``). Required.
    * ``storage_factory_spec`` -> a ``StorageSpec`` that rebuilds, in another process,
      a storage of the *same vault* as ``storage`` (same folder, server, ...: the same
      vault lock and identity). Required unless ``supports_cross_process_lock = False``;
      without it the identity check (every opening of the vault gives the same
      ``identity``) is skipped too.

    Class attribute ``supports_cross_process_lock``: set it to False only for a backend
    whose lock cannot be seen from another process (the cross-process test is then
    skipped with that reason; say why in your class docstring).
    """

    supports_cross_process_lock: ClassVar[bool] = True

    @pytest.fixture
    def storage(self) -> Storage:
        raise NotImplementedError("override the `storage` fixture to build your backend")

    @pytest.fixture
    def storage_factory_spec(self) -> StorageSpec:
        raise NotImplementedError(
            "override `storage_factory_spec` so the cross-process lock test can rebuild "
            "the storage in a child process (or set supports_cross_process_lock = False)"
        )

    # --- shape ------------------------------------------------------------------------

    def test_implements_storage_protocol(self, storage: Storage) -> None:
        assert isinstance(storage, Storage)
        assert isinstance(storage.identity, str) and storage.identity

    def test_identity_is_the_same_for_every_opening_of_the_vault(
        self, request: pytest.FixtureRequest, storage: Storage
    ) -> None:
        """The identity keys what this machine keeps per vault (state dir: outbox,
        history, indexes): storages opened on one vault, in one process or several, one
        after another, all give the same one (one of this class, ``storage``'s)."""
        try:
            spec = request.getfixturevalue("storage_factory_spec")
        except NotImplementedError:
            pytest.skip("no `storage_factory_spec` to open the vault again")
        assert isinstance(spec, StorageSpec)
        opened = identities_in_children(spec)
        assert len({identity for _, identity in opened}) == 1, (
            f"storages opened on one vault gave different identities: {opened}")
        for kind, identity in opened:
            if kind == type(storage).__qualname__:
                assert identity == storage.identity, (kind, identity, storage.identity)

    def test_ping_succeeds_on_a_reachable_backend(self, storage: Storage) -> None:
        storage.ping()

    def test_create_is_idempotent_and_keeps_files(self, storage: Storage) -> None:
        storage.write("keep.md", "kept\r\n")
        storage.create()
        storage.create()
        storage.ping()
        assert storage.read("keep.md") == "kept\r\n"

    # --- read / write -----------------------------------------------------------------

    def test_write_then_read_returns_same_text(self, storage: Storage) -> None:
        storage.write("notes/a.md", "# A\n\nbody\n")
        assert storage.read("notes/a.md") == "# A\n\nbody\n"

    def test_unicode_text_round_trips(self, storage: Storage) -> None:
        storage.write("notes/unicode.md", UNICODE_TEXT)
        assert storage.read("notes/unicode.md") == UNICODE_TEXT

    def test_unicode_path_round_trips(self, storage: Storage) -> None:
        path = "resources/people/José 東京 🧠.md"
        storage.write(path, "x\n")
        assert storage.read(path) == "x\n"
        assert storage.list("resources") == [path]

    def test_crlf_and_missing_final_newline_preserved_exactly(self, storage: Storage) -> None:
        text = "---\r\ntype: concept\r\n---\r\nline\rmixed\nend"
        storage.write("crlf.md", text)
        assert storage.read("crlf.md") == text

    def test_write_creates_nested_folders(self, storage: Storage) -> None:
        storage.write("a/b/c/d/deep.md", "deep\n")
        assert storage.read("a/b/c/d/deep.md") == "deep\n"

    def test_overwrite_replaces_whole_content(self, storage: Storage) -> None:
        storage.write("n.md", "a long first version\n" * 50)
        storage.write("n.md", "short\n")
        assert storage.read("n.md") == "short\n"

    def test_writes_leave_no_visible_temp_files(self, storage: Storage) -> None:
        for i in range(5):
            storage.write("inbox/n.md", f"v{i}\n")
        assert storage.list() == ["inbox/n.md"]

    def test_equivalent_spellings_name_the_same_file(self, storage: Storage) -> None:
        storage.write("./notes//a.md", "x\n")
        assert storage.read("notes/a.md") == "x\n"
        assert storage.list() == ["notes/a.md"]

    def test_read_many_maps_missing_files_to_none(self, storage: Storage) -> None:
        storage.write("one.md", "1\n")
        storage.write("two.md", "2\n")
        got = storage.read_many(["one.md", "missing.md", "two.md"])
        assert got == {"one.md": "1\n", "missing.md": None, "two.md": "2\n"}

    def test_stat_reports_size_in_bytes_and_mtime(self, storage: Storage) -> None:
        storage.write("s.md", "é🧠\n")
        st = storage.stat("s.md")
        assert st.path == "s.md"
        assert st.size == len("é🧠\n".encode())
        assert st.mtime > 0

    def test_stat_mtime_is_the_time_of_the_last_write(self, storage: Storage) -> None:
        """``mtime`` counts seconds since the epoch as ``time.time()`` does (within
        ``MTIME_SLACK``), at the last write: the core compares it with the clock (the Stop
        gate, decay, backups) and keys caches on ``(size, mtime)``. Coarse clocks may
        give a rewrite the same mtime; it never goes back."""
        storage.write("m.md", "one\n")
        first = storage.stat("m.md").mtime
        assert abs(first - time.time()) < MTIME_SLACK, f"mtime {first} is not about now"
        storage.write("m.md", "two\n")
        second = storage.stat("m.md").mtime
        assert second >= first, f"a rewrite moved mtime back: {first} -> {second}"
        assert abs(second - time.time()) < MTIME_SLACK, f"mtime {second} is not about now"

    # --- append -----------------------------------------------------------------------

    def test_append_line_is_idempotent(self, storage: Storage) -> None:
        storage.write("inbox.md", "# Inbox\n")
        assert storage.append_line("inbox.md", "- 2024-01-02: idea") is True
        assert storage.append_line("inbox.md", "- 2024-01-02: idea") is False
        assert storage.read("inbox.md") == "# Inbox\n- 2024-01-02: idea\n"

    def test_append_line_creates_missing_file(self, storage: Storage) -> None:
        assert storage.append_line("new/log.md", "- first") is True
        assert storage.read("new/log.md") == "- first\n"

    def test_append_line_adds_missing_final_newline_first(self, storage: Storage) -> None:
        storage.write("log.md", "- a")
        assert storage.append_line("log.md", "- b") is True
        assert storage.read("log.md") == "- a\n- b\n"

    def test_append_line_keeps_crlf_file_crlf(self, storage: Storage) -> None:
        storage.write("log.md", "- a\r\n- b")
        assert storage.append_line("log.md", "- c") is True
        assert storage.append_line("log.md", "- a") is False
        assert storage.read("log.md") == "- a\r\n- b\r\n- c\r\n"

    # --- listing ----------------------------------------------------------------------

    def test_list_is_sorted_and_recursive(self, storage: Storage) -> None:
        for path in ("b.md", "a/z.md", "a/b/c.md", "A.md"):
            storage.write(path, "x\n")
        assert storage.list() == ["A.md", "a/b/c.md", "a/z.md", "b.md"]

    def test_list_prefix_is_a_folder_not_a_string_prefix(self, storage: Storage) -> None:
        for path in ("proj/x.md", "proj/sub/y.md", "projects/z.md", "other.md"):
            storage.write(path, "x\n")
        assert storage.list("proj") == ["proj/sub/y.md", "proj/x.md"]
        assert storage.list("proj/") == ["proj/sub/y.md", "proj/x.md"]

    def test_list_skips_hidden_files_and_folders(self, storage: Storage) -> None:
        storage.write(".obsidian/app.json", "{}")
        storage.write("notes/.draft.md", "x\n")
        storage.write(".git/HEAD", "ref\n")
        storage.write("notes/kept.md", "x\n")
        assert storage.list() == ["notes/kept.md"]
        assert storage.exists(".obsidian/app.json")

    def test_list_of_missing_prefix_is_empty(self, storage: Storage) -> None:
        storage.write("a/x.md", "x\n")
        assert storage.list("nope") == []
        assert storage.list("a/x.md/deeper") == []

    def test_list_of_empty_vault_is_empty(self, storage: Storage) -> None:
        assert storage.list() == []

    # --- exists / delete / not found --------------------------------------------------

    def test_exists_is_true_only_for_files(self, storage: Storage) -> None:
        storage.write("dir/n.md", "x\n")
        assert storage.exists("dir/n.md") is True
        assert storage.exists("dir/other.md") is False
        assert storage.exists("dir") is False

    def test_delete_removes_the_file(self, storage: Storage) -> None:
        storage.write("gone.md", "x\n")
        storage.delete("gone.md")
        assert not storage.exists("gone.md")
        assert storage.list() == []

    @pytest.mark.parametrize("operation", ["read", "stat", "delete"])
    def test_missing_file_is_not_found(self, storage: Storage, operation: str) -> None:
        with pytest.raises(EchoError) as caught:
            PATH_OPERATIONS[operation](storage, "missing/nothing.md")
        assert caught.value.code == ExitCode.NOT_FOUND
        assert "missing/nothing.md" in caught.value.message

    @pytest.mark.parametrize("bad_path", BAD_PATHS)
    @pytest.mark.parametrize("operation", sorted(PATH_OPERATIONS))
    def test_bad_path_is_rejected_and_named(
        self, storage: Storage, operation: str, bad_path: str
    ) -> None:
        with pytest.raises(EchoError) as caught:
            PATH_OPERATIONS[operation](storage, bad_path)
        assert caught.value.code == ExitCode.USAGE
        assert named(caught.value.message, bad_path), caught.value.message

    def test_rejected_write_changes_nothing(self, storage: Storage) -> None:
        for bad_path in BAD_PATHS:
            with pytest.raises(EchoError):
                storage.write(bad_path, "x\n")
        assert storage.list() == []

    # --- lock -------------------------------------------------------------------------

    def test_lock_is_reentrant_in_one_thread(self, storage: Storage) -> None:
        with storage.lock(timeout=1.0):
            with storage.lock(timeout=1.0):
                storage.write("in-lock.md", "x\n")
            storage.write("still-locked.md", "x\n")
            assert storage.list() == ["in-lock.md", "still-locked.md"]
        with storage.lock(timeout=1.0):
            pass

    def test_lock_excludes_other_threads_until_outermost_release(self, storage: Storage) -> None:
        outcomes: list[str] = []

        def try_lock() -> None:
            try:
                with storage.lock(timeout=0.2):
                    outcomes.append("acquired")
            except EchoError as exc:
                outcomes.append(f"error {int(exc.code)}")

        with storage.lock(timeout=1.0):
            with storage.lock(timeout=1.0):
                pass
            other = threading.Thread(target=try_lock)
            other.start()
            other.join()
        assert outcomes == [f"error {int(ExitCode.LOCK_HELD)}"]
        other = threading.Thread(target=try_lock)
        other.start()
        other.join()
        assert outcomes[-1] == "acquired"

    def test_lock_is_released_when_the_block_raises(self, storage: Storage) -> None:
        with pytest.raises(ValueError), storage.lock(timeout=1.0):
            raise ValueError("boom")
        outcome: list[bool] = []
        thread = threading.Thread(target=lambda: outcome.append(self._can_lock(storage)))
        thread.start()
        thread.join()
        assert outcome == [True]

    def test_lock_excludes_other_processes(
        self, request: pytest.FixtureRequest, storage: Storage
    ) -> None:
        if not self.supports_cross_process_lock:
            pytest.skip(f"{type(self).__name__} declares no cross-process lock")
        spec = request.getfixturevalue("storage_factory_spec")
        assert isinstance(spec, StorageSpec)
        with storage.lock(timeout=1.0):
            status, message = probe_lock_in_child(spec, timeout=0.3)
            assert status == f"error {int(ExitCode.LOCK_HELD)}", message
            assert message
        status, message = probe_lock_in_child(spec, timeout=5.0)
        assert status == "acquired", message

    @staticmethod
    def _can_lock(storage: Storage) -> bool:
        try:
            with storage.lock(timeout=0.2):
                return True
        except EchoError:
            return False
