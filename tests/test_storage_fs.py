"""FolderStorage: the storage contract plus folder-specific guarantees (atomic writes under
SIGKILL, stale-lock breaking, symlink escapes, the ``file`` plugin factory)."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.protocols import BackendUnavailable
from echo_core.testing.storage_contract import StorageContract, StorageSpec, probe_lock_in_child
from plugins.storage_fs import (
    folder_path_from_url,
    folder_storage,
    open_folder_storage,
    register_storage,
)
from plugins.storage_fs.folder_storage import FolderStorage
from plugins.storage_fs.vault_lock import StaleLockWarning


class TestFolderStorage(StorageContract):
    @pytest.fixture
    def storage(self, tmp_path: Path) -> FolderStorage:
        vault = tmp_path / "vault"
        vault.mkdir()
        return FolderStorage(vault)

    @pytest.fixture
    def storage_factory_spec(self, storage: FolderStorage) -> StorageSpec:
        return StorageSpec("plugins.storage_fs.folder_storage:FolderStorage", (str(storage.root),))


class TestFolderStorageCheckingPathsFirst(TestFolderStorage):
    """The same contract where the kernel does not name open files (non-Linux): every
    path is checked component by component before it is opened."""

    @pytest.fixture(autouse=True)
    def _no_fd_links(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(folder_storage, "_FD_LINKS", "")


@pytest.fixture(params=["open-then-check", "check-then-open"])
def vault(tmp_path: Path, request: pytest.FixtureRequest,
          monkeypatch: pytest.MonkeyPatch) -> Path:
    """A vault folder; every test using it runs with both ways of checking reads."""
    if request.param == "check-then-open":
        monkeypatch.setattr(folder_storage, "_FD_LINKS", "")
    root = tmp_path / "vault"
    root.mkdir()
    return root


def _lock_file(vault: Path) -> Path:
    return vault / "_agent" / ".lock"


def _plant_lock(vault: Path, *, pid: int, host: str, created: float) -> Path:
    path = _lock_file(vault)
    path.parent.mkdir(exist_ok=True)
    record = {"pid": pid, "host": host, "created": created, "token": "planted"}
    path.write_text(json.dumps(record))
    return path


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


# --- files on disk ------------------------------------------------------------------------


def test_identity_is_file_scheme_with_resolved_root(vault: Path) -> None:
    storage = FolderStorage(vault / "." / "sub" / "..")
    assert storage.identity == f"file:{vault.resolve()}"


def test_bytes_on_disk_are_utf8_without_newline_translation(vault: Path) -> None:
    FolderStorage(vault).write("n.md", "é\r\nx\n")
    assert (vault / "n.md").read_bytes() == "é\r\nx\n".encode()


def test_failed_write_keeps_old_content_and_removes_temp_file(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FolderStorage(vault)
    storage.write("n.md", "old\n")

    def broken_replace(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        storage.write("n.md", "new\n")
    monkeypatch.undo()
    assert storage.read("n.md") == "old\n"
    assert sorted(str(p.relative_to(vault)) for p in vault.rglob("*") if p.is_file()) == ["n.md"]


def test_overwrite_keeps_the_file_mode(vault: Path) -> None:
    storage = FolderStorage(vault)
    storage.write("n.md", "old\n")
    os.chmod(vault / "n.md", 0o640)
    storage.write("n.md", "new\n")
    assert (vault / "n.md").stat().st_mode & 0o777 == 0o640


def test_symlink_leading_outside_is_refused_and_named(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret\n")
    (vault / "link.md").symlink_to(outside)
    (vault / "linkdir").symlink_to(tmp_path)
    storage = FolderStorage(vault)
    for action in (
        lambda: storage.read("link.md"),
        lambda: storage.write("link.md", "x\n"),
        lambda: storage.write("linkdir/new.md", "x\n"),
        lambda: storage.append_line("link.md", "x"),
    ):
        with pytest.raises(EchoError) as caught:
            action()
        assert caught.value.code == ExitCode.USAGE
        assert "link" in caught.value.message
    assert outside.read_text() == "secret\n"
    assert not (tmp_path / "new.md").exists()
    assert storage.list() == []
    assert storage.list("linkdir") == []


def test_symlink_inside_vault_is_written_through(vault: Path) -> None:
    storage = FolderStorage(vault)
    storage.write("real.md", "v1\n")
    (vault / "alias.md").symlink_to(vault / "real.md")
    storage.write("alias.md", "v2\n")
    assert (vault / "alias.md").is_symlink()
    assert storage.read("real.md") == "v2\n"


def _refused(action: object) -> None:
    with pytest.raises(EchoError) as caught:
        action()  # type: ignore[operator]
    assert caught.value.code == ExitCode.USAGE
    assert "symlink" in caught.value.message


def test_a_linked_folder_deep_in_the_path_is_checked(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "x.md").write_text("secret\n")
    (vault / "a" / "b").mkdir(parents=True)
    (vault / "a" / "b" / "out").symlink_to(outside)
    storage = FolderStorage(vault)
    storage.write("a/b/fine.md", "ok\n")
    for action in (
        lambda: storage.read("a/b/out/sub/x.md"),
        lambda: storage.exists("a/b/out/sub/x.md"),
        lambda: storage.stat("a/b/out/sub/x.md"),
        lambda: storage.delete("a/b/out/sub/x.md"),
        lambda: storage.write("a/b/out/sub/new.md", "x\n"),
        lambda: storage.read_many(["a/b/fine.md", "a/b/out/sub/x.md"]),
        lambda: storage.read("a/b/out/sub/missing/deeper.md"),
    ):
        _refused(action)
    assert (outside / "sub" / "x.md").read_text() == "secret\n"
    assert not (outside / "sub" / "new.md").exists()


def test_a_chain_of_links_is_followed_to_its_end(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret\n")
    (vault / "hop2.md").symlink_to(outside)
    (vault / "hop1.md").symlink_to(vault / "hop2.md")  # inside -> inside -> outside
    (vault / "real").mkdir()
    (vault / "real" / "n.md").write_text("inside\n")
    (vault / "via").symlink_to(vault / "real")  # a linked folder staying inside
    storage = FolderStorage(vault)
    _refused(lambda: storage.read("hop1.md"))
    assert storage.read("via/n.md") == "inside\n"
    assert storage.read_many(["via/n.md", "real/n.md", "via/none.md"]) == {
        "via/n.md": "inside\n", "real/n.md": "inside\n", "via/none.md": None}
    assert storage.exists("via/n.md") and storage.stat("via/n.md").size == len("inside\n")


def test_a_folder_swapped_for_a_link_is_caught_on_the_next_call(vault: Path, tmp_path: Path) -> None:
    storage = FolderStorage(vault)
    storage.write("notes/n.md", "v1\n")
    assert storage.read_many(["notes/n.md"]) == {"notes/n.md": "v1\n"}
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "n.md").write_text("secret\n")
    (vault / "notes" / "n.md").unlink()
    (vault / "notes").rmdir()
    (vault / "notes").symlink_to(outside)
    _refused(lambda: storage.read_many(["notes/n.md"]))
    _refused(lambda: storage.read("notes/n.md"))
    _refused(lambda: storage.write("notes/n.md", "x\n"))
    assert (outside / "n.md").read_text() == "secret\n"


def test_a_vault_opened_through_a_linked_root_works(tmp_path: Path) -> None:
    real = tmp_path / "real-vault"
    real.mkdir()
    (tmp_path / "link-vault").symlink_to(real)
    storage = FolderStorage(tmp_path / "link-vault")
    storage.write("a/n.md", "x\n")
    assert (real / "a" / "n.md").read_text() == "x\n"
    assert storage.read("a/n.md") == "x\n" and storage.exists("a/n.md")
    assert storage.list() == ["a/n.md"]


def test_a_path_through_a_file_is_missing_not_an_escape(vault: Path) -> None:
    storage = FolderStorage(vault)
    storage.write("f.md", "x\n")
    assert not storage.exists("f.md/child.md")
    assert storage.read_many(["f.md/child.md"]) == {"f.md/child.md": None}
    with pytest.raises(EchoError) as caught:
        storage.stat("f.md/child.md")
    assert caught.value.code == ExitCode.NOT_FOUND


def _list_by_walk(root: Path, prefix: str = "") -> list[str]:
    """``list`` as an ``os.walk`` over pathlib (its implementation before ``scandir``)."""
    if any(part.startswith(".") for part in prefix.split("/")):
        return []
    base = root / prefix if prefix else root
    real_base = Path(os.path.realpath(base))
    if not real_base.is_dir() or (real_base != root and root not in real_base.parents):
        return []
    found = []
    for folder, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            full = Path(folder) / name
            if name.startswith("."):
                continue
            if full.is_symlink():
                real = Path(os.path.realpath(full))
                if root not in real.parents or not real.is_file():
                    continue
            found.append(full.relative_to(root).as_posix())
    return sorted(found)


def test_listing_skips_hidden_entries_and_links_leading_out(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "o.md").write_text("o\n")
    for rel in ("a.md", "b/c.md", "b/d/e.md", "b/.hidden/x.md", ".obsidian/w.json", "b/.t.tmp",
                "z/y/x/w.md"):
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text("x\n")
    (vault / "b" / "in-link.md").symlink_to(vault / "a.md")
    (vault / "b" / "out-link.md").symlink_to(outside / "o.md")
    (vault / "b" / "broken.md").symlink_to(vault / "nowhere.md")
    (vault / "b" / "dir-in").symlink_to(vault / "z")
    (vault / "b" / "dir-out").symlink_to(outside)
    (vault / "b" / "dir-loop").symlink_to(vault / "b")
    storage = FolderStorage(vault)
    assert storage.list() == [
        "a.md", "b/c.md", "b/d/e.md", "b/in-link.md", "z/y/x/w.md"]
    for prefix in ("", "b", "b/d", "z", "b/dir-in", "b/dir-out", "a.md", "missing", "b/.hidden"):
        assert storage.list(prefix) == _list_by_walk(storage.root, prefix), prefix


def test_missing_root_is_unavailable_and_never_created(tmp_path: Path) -> None:
    storage = FolderStorage(tmp_path / "gone")
    with pytest.raises(BackendUnavailable):
        storage.ping()
    with pytest.raises(BackendUnavailable):
        storage.write("n.md", "x\n")
    with pytest.raises(BackendUnavailable):
        with storage.lock(timeout=0.1):
            pass
    assert not (tmp_path / "gone").exists()


def test_writing_under_a_file_is_a_usage_error(vault: Path) -> None:
    storage = FolderStorage(vault)
    storage.write("a.md", "x\n")
    with pytest.raises(EchoError) as caught:
        storage.write("a.md/b.md", "x\n")
    assert caught.value.code == ExitCode.USAGE


def test_concurrent_appends_from_threads_keep_every_line_once(vault: Path) -> None:
    storage = FolderStorage(vault)

    def append_many(worker: int) -> None:
        for i in range(15):
            storage.append_line("log.md", f"- w{worker} {i}")
            storage.append_line("log.md", f"- shared {i}")

    threads = [threading.Thread(target=append_many, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = storage.read("log.md").splitlines()
    expected = {f"- w{w} {i}" for w in range(6) for i in range(15)}
    expected |= {f"- shared {i}" for i in range(15)}
    assert sorted(lines) == sorted(expected)


# --- the vault lock -----------------------------------------------------------------------


def test_lock_file_records_owner_and_is_removed_on_release(vault: Path) -> None:
    storage = FolderStorage(vault)
    with storage.lock(timeout=1.0):
        owner = json.loads(_lock_file(vault).read_text())
        assert owner["pid"] == os.getpid()
        assert owner["host"] == socket.gethostname()
        assert abs(owner["created"] - time.time()) < 60
        assert owner["token"]
    assert not _lock_file(vault).exists()


def test_lock_of_dead_owner_is_broken_with_warning(vault: Path) -> None:
    pid = _dead_pid()
    _plant_lock(vault, pid=pid, host=socket.gethostname(), created=time.time())
    with pytest.warns(StaleLockWarning, match=f"pid {pid}"):
        with FolderStorage(vault).lock(timeout=1.0):
            assert json.loads(_lock_file(vault).read_text())["pid"] == os.getpid()


def test_lock_older_than_stale_after_is_broken_with_warning(vault: Path) -> None:
    _plant_lock(vault, pid=os.getppid(), host="elsewhere", created=time.time() - 30)
    with pytest.warns(StaleLockWarning, match="older than 10 s"):
        with FolderStorage(vault, stale_after=10).lock(timeout=1.0):
            pass


def test_lock_of_live_owner_is_respected_until_timeout(vault: Path) -> None:
    planted = _plant_lock(vault, pid=os.getppid(), host=socket.gethostname(), created=time.time())
    before = planted.read_text()
    started = time.monotonic()
    with pytest.raises(EchoError) as caught:
        with FolderStorage(vault).lock(timeout=0.3):
            pass
    assert time.monotonic() - started >= 0.3
    assert caught.value.code == ExitCode.LOCK_HELD
    assert f"pid {os.getppid()}" in caught.value.message
    assert socket.gethostname() in caught.value.message
    assert planted.read_text() == before


def test_fresh_lock_of_other_host_is_respected_even_with_unknown_pid(vault: Path) -> None:
    _plant_lock(vault, pid=_dead_pid(), host="elsewhere", created=time.time())
    with pytest.raises(EchoError) as caught:
        with FolderStorage(vault).lock(timeout=0.1):
            pass
    assert caught.value.code == ExitCode.LOCK_HELD
    assert "elsewhere" in caught.value.message


def test_release_leaves_a_lock_taken_over_by_someone_else(vault: Path) -> None:
    storage = FolderStorage(vault)
    with pytest.warns(StaleLockWarning, match="taken from this process"):
        with storage.lock(timeout=1.0):
            _plant_lock(vault, pid=os.getppid(), host="elsewhere", created=time.time())
    assert json.loads(_lock_file(vault).read_text())["host"] == "elsewhere"


def test_lock_error_in_other_process_names_this_owner(vault: Path) -> None:
    spec = StorageSpec("plugins.storage_fs.folder_storage:FolderStorage", (str(vault),))
    with FolderStorage(vault).lock(timeout=1.0):
        status, message = probe_lock_in_child(spec, timeout=0.2)
    assert status == f"error {int(ExitCode.LOCK_HELD)}"
    assert f"pid {os.getpid()}" in message


_CRITICAL_SECTION = r"""
import json, os, sys, time
sys.path[:0] = json.loads(sys.argv[1])
from plugins.storage_fs import folder_storage
from plugins.storage_fs.folder_storage import FolderStorage
import warnings
warnings.simplefilter("ignore")
log = sys.argv[3]
with FolderStorage(sys.argv[2]).lock(timeout=20):
    for word in ("enter", "exit"):
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, f"{word} {os.getpid()}\n".encode())
        os.close(fd)
        time.sleep(0.05)
"""


def test_processes_racing_to_break_a_stale_lock_never_overlap(vault: Path, tmp_path: Path) -> None:
    _plant_lock(vault, pid=_dead_pid(), host=socket.gethostname(), created=time.time())
    log = tmp_path / "critical.log"
    argv = [sys.executable, "-c", _CRITICAL_SECTION, json.dumps(sys.path), str(vault), str(log)]
    children = [subprocess.Popen(argv) for _ in range(4)]
    assert [child.wait(timeout=60) for child in children] == [0, 0, 0, 0]
    entries = [line.split() for line in log.read_text().splitlines()]
    assert len(entries) == 8
    for enter, leave in zip(entries[::2], entries[1::2], strict=True):
        assert enter[0] == "enter" and leave == ["exit", enter[1]]


# --- crash safety -------------------------------------------------------------------------


def _version(tag: str, eol: str, lines: int) -> str:
    return "".join(f"{tag} {i:06d}{eol}" for i in range(lines))


_OVERWRITER = r"""
import json, sys
sys.path[:0] = json.loads(sys.argv[1])
from plugins.storage_fs import folder_storage
from plugins.storage_fs.folder_storage import FolderStorage
versions = [open(p, encoding="utf-8", newline="").read() for p in sys.argv[3:]]
storage = FolderStorage(sys.argv[2])
storage.write("note.md", versions[0])
print("ready", flush=True)
i = 1
while True:
    storage.write("note.md", versions[i % 2])
    i += 1
"""


def test_sigkill_during_overwrites_never_leaves_a_torn_note(vault: Path, tmp_path: Path) -> None:
    versions = [_version("alpha", "\n", 15_500), _version("bravo", "\r\n", 14_000)]
    assert all(len(v) > 190_000 for v in versions)
    sources = [tmp_path / "alpha.txt", tmp_path / "bravo.txt"]
    for source, version in zip(sources, versions, strict=True):
        source.write_bytes(version.encode())
    argv = [sys.executable, "-c", _OVERWRITER, json.dumps(sys.path), str(vault)]
    argv += [str(source) for source in sources]
    storage = FolderStorage(vault)
    rng = random.Random(20240601)
    seen: set[int] = set()
    for _ in range(50):
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.05))
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        text = storage.read("note.md")
        assert text in versions, f"torn note: {len(text)} chars"
        seen.add(versions.index(text))
    assert seen == {0, 1}
    assert storage.list() == ["note.md"]


# --- the plugin ---------------------------------------------------------------------------


def test_plugin_registers_the_file_scheme() -> None:
    registered: dict[str, object] = {}
    register_storage(lambda name, obj: registered.__setitem__(name, obj))
    assert registered == {"file": open_folder_storage}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("/srv/my vault", "/srv/my vault"),
        ("file:///srv/my%20vault", "/srv/my vault"),
        ("file://localhost/srv/vault", "/srv/vault"),
        ("file:/srv/vault", "/srv/vault"),
        ("relative/vault", "relative/vault"),
    ],
)
def test_factory_accepts_paths_and_file_urls(url: str, expected: str) -> None:
    assert folder_path_from_url(url) == expected


def test_factory_round_trips_the_identity(vault: Path) -> None:
    storage = open_folder_storage(f"file://{vault}", {"stale_after": "30"})
    assert isinstance(storage, FolderStorage)
    assert storage.stale_after == 30.0
    assert open_folder_storage(storage.identity, {}).root == storage.root


@pytest.mark.parametrize("url", ["file://server/share/vault", "", "file://"])
def test_factory_rejects_unusable_urls(url: str) -> None:
    with pytest.raises(EchoError) as caught:
        folder_path_from_url(url)
    assert caught.value.code == ExitCode.USAGE


def test_a_folder_or_a_fifo_is_not_a_readable_note(vault: Path) -> None:
    (vault / "folder.md").mkdir()
    os.mkfifo(vault / "pipe.md")  # opening it must not wait for a writer
    storage = FolderStorage(vault)
    storage.write("real.md", "ok\n")
    for path in ("folder.md", "pipe.md"):
        with pytest.raises(EchoError) as caught:
            storage.read(path)
        assert caught.value.code == ExitCode.NOT_FOUND and path in caught.value.message
    assert storage.read_many(["folder.md", "pipe.md", "real.md"]) == {
        "folder.md": None, "pipe.md": None, "real.md": "ok\n"}
