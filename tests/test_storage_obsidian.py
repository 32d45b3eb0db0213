"""ObsidianStorage: the storage contract against the fake Local REST API (whose traffic is
checked against the spec), the plugin and its factory, auth, PATCH, and the lock note."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.protocols import BackendUnavailable
from echo_core.testing import PluginContract
from echo_core.testing.storage_contract import StorageContract, StorageSpec, probe_lock_in_child
from plugins import storage_obsidian
from plugins.storage_obsidian import (
    base_url_from_vault_url,
    open_obsidian_storage,
    register_storage,
)
from plugins.storage_obsidian.lock_note import LOCK_PATH, StaleLockWarning
from plugins.storage_obsidian.obsidian_storage import ObsidianStorage, vault_url_path
from tests.obsidian_fake import FakeObsidian
from tests.obsidian_kit import KEY, SETTLE, obsidian_fake, obsidian_storage

__all__ = ["obsidian_fake", "obsidian_storage"]  # fixtures used by this module
STORAGE_TARGET = "plugins.storage_obsidian.obsidian_storage:ObsidianStorage"


class TestObsidianStorage(StorageContract):
    """The lock is the advisory lock note; the child process reaches the same fake."""

    @pytest.fixture
    def storage(self, obsidian_storage: ObsidianStorage) -> ObsidianStorage:
        return obsidian_storage

    @pytest.fixture
    def storage_factory_spec(self, obsidian_fake: FakeObsidian) -> StorageSpec:
        return StorageSpec(STORAGE_TARGET, (obsidian_fake.base_url, KEY), {"lock_settle": SETTLE})


class TestStorageObsidianPlugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return storage_obsidian

    @pytest.fixture
    def plugin_name(self) -> str:
        return "storage_obsidian"


# --- URL, options, factory ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("obsidian+https://127.0.0.1:27124", "https://127.0.0.1:27124"),
        ("obsidian+http://127.0.0.1:27123/", "http://127.0.0.1:27123"),
        ("OBSIDIAN+HTTPS://LocalHost", "https://localhost:27124"),
        ("obsidian+http://vault.lan", "http://vault.lan:27123"),
        ("obsidian+https://[::1]:9000", "https://[::1]:9000"),
    ],
)
def test_vault_url_gives_the_api_base_url(url: str, expected: str) -> None:
    assert base_url_from_vault_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1:27124",
        "obsidian+https://",
        "obsidian+https://host:notaport",
        "obsidian+https://user:secret@host:27124",
        "obsidian+https://host:27124/some/vault",
        "obsidian+https://host:27124?key=x",
    ],
)
def test_unusable_vault_urls_are_usage_errors(url: str) -> None:
    with pytest.raises(EchoError) as caught:
        base_url_from_vault_url(url)
    assert caught.value.code == ExitCode.USAGE


def test_plugin_registers_both_schemes() -> None:
    registered: dict[str, object] = {}
    register_storage(lambda name, obj: registered.__setitem__(name, obj))
    assert registered == {
        "obsidian+https": open_obsidian_storage,
        "obsidian+http": open_obsidian_storage,
    }


def test_factory_builds_a_working_storage_from_url_and_env(obsidian_fake: FakeObsidian) -> None:
    url = obsidian_fake.base_url.replace("http://", "obsidian+http://")
    storage = open_obsidian_storage(url, {"timeout": "3"}, env={"OBSIDIAN_API_KEY": KEY})
    assert storage.identity == f"obsidian+{obsidian_fake.base_url}"
    storage.create()
    storage.write("n.md", "x\n")
    assert storage.read("n.md") == "x\n"
    storage.close()


def test_factory_takes_the_key_from_option_or_named_env(obsidian_fake: FakeObsidian) -> None:
    url = obsidian_fake.base_url.replace("http://", "obsidian+http://")
    for options, env in (({"key": KEY}, {}), ({"key_env": "MY_KEY"}, {"MY_KEY": KEY})):
        storage = open_obsidian_storage(url, options, env=env)
        storage.ping()
        storage.close()


def test_missing_key_is_not_configured_and_says_where_to_put_it() -> None:
    with pytest.raises(EchoError) as caught:
        open_obsidian_storage("obsidian+https://127.0.0.1", {"key_env": "MY_KEY"}, env={})
    assert caught.value.code == ExitCode.NOT_CONFIGURED
    assert "MY_KEY" in caught.value.message and "[backends.obsidian]" in caught.value.message


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"verify": False}, "ca_file"),
        ({"ca_file": "/nonexistent/obsidian.crt"}, "ca_file"),
        ({"cert_fingerprint": "sha256:abc"}, "cert_fingerprint"),
        ({"ca_file": __file__, "cert_fingerprint": "sha256:" + "0" * 64}, "not both"),
        ({"timeout": "soon"}, "timeout"),
        ({"concurrency": 0}, "concurrency"),
    ],
)
def test_bad_options_are_not_configured(options: dict[str, object], named: str) -> None:
    with pytest.raises(EchoError) as caught:
        open_obsidian_storage("obsidian+https://127.0.0.1", {"key": KEY, **options}, env={})
    assert caught.value.code == ExitCode.NOT_CONFIGURED
    assert named in caught.value.message


def test_tls_options_on_plain_http_are_refused() -> None:
    with pytest.raises(EchoError) as caught:
        open_obsidian_storage("obsidian+http://127.0.0.1", {"key": KEY, "ca_file": __file__})
    assert caught.value.code == ExitCode.NOT_CONFIGURED


def test_missing_httpx_is_a_clear_not_configured_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)  # makes `import httpx` fail
    with pytest.raises(EchoError) as caught:
        open_obsidian_storage("obsidian+http://127.0.0.1", {"key": KEY}, env={})
    assert caught.value.code == ExitCode.NOT_CONFIGURED
    assert "pip install 'echo-memory[obsidian]'" in caught.value.message


def test_plugin_import_does_not_import_httpx() -> None:
    code = "import sys, plugins.storage_obsidian; print('httpx' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parent.parent)
    assert done.stdout.strip() == "False"


# --- requests on the wire ------------------------------------------------------------------


def test_paths_are_encoded_per_segment_with_real_slashes() -> None:
    assert vault_url_path("a b/c#?%.md") == "/vault/a%20b/c%23%3F%25.md"
    assert vault_url_path("José/東.md") == "/vault/Jos%C3%A9/%E6%9D%B1.md"
    assert vault_url_path("", folder=True) == "/vault/"
    assert vault_url_path("a/b", folder=True) == "/vault/a/b/"


def test_awkward_names_round_trip(obsidian_storage: ObsidianStorage) -> None:
    path = "notes/100% done #1? [x] & more.md"
    obsidian_storage.write(path, "ok\n")
    assert obsidian_storage.read(path) == "ok\n"
    assert obsidian_storage.list("notes") == [path]


def test_requests_carry_the_bearer_key_and_markdown_type(
    obsidian_fake: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    obsidian_storage.write("n.md", "x\n")
    put = obsidian_fake.exchanges[-1]
    assert put.method == "PUT" and put.request_headers["authorization"] == f"Bearer {KEY}"
    assert put.request_headers["content-type"].startswith("text/markdown")


def test_read_many_reads_concurrently_within_the_bound(obsidian_fake: FakeObsidian) -> None:
    storage = ObsidianStorage(obsidian_fake.base_url, KEY, concurrency=3)
    paths = [f"n{i}.md" for i in range(9)]
    for path in paths:
        storage.write(path, f"{path}\n")
    obsidian_fake.inject("slow", method="GET", delay=0.05, times=9)
    assert storage.read_many(paths) == {path: f"{path}\n" for path in paths}
    assert 1 < obsidian_fake.max_in_flight <= 3  # concurrent, and bounded
    storage.close()


def test_delete_uses_obsidians_trash_setting(
    obsidian_fake: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    obsidian_storage.write("gone.md", "x\n")
    obsidian_storage.delete("gone.md")
    assert obsidian_fake.exchanges[-1].target == "/vault/gone.md"  # no permanent=true


def test_writing_over_a_folder_is_a_usage_error(obsidian_storage: ObsidianStorage) -> None:
    obsidian_storage.write("dir/n.md", "x\n")
    with pytest.raises(EchoError) as caught:
        obsidian_storage.write("dir", "x\n")
    assert caught.value.code == ExitCode.USAGE and "folder" in caught.value.message


# --- auth ----------------------------------------------------------------------------------


def test_wrong_key_is_not_configured_and_says_check_the_key(obsidian_fake: FakeObsidian) -> None:
    storage = ObsidianStorage(obsidian_fake.base_url, "wrong-key")
    for operation in (lambda: storage.read("n.md"), lambda: storage.write("n.md", "x"),
                      storage.ping, storage.list):
        with pytest.raises(EchoError) as caught:
            operation()
        assert caught.value.code == ExitCode.NOT_CONFIGURED
        assert "check the API key" in caught.value.message
        assert "OBSIDIAN_API_KEY" in caught.value.message
    assert obsidian_fake.vault.files == {}
    storage.close()


# --- PATCH ---------------------------------------------------------------------------------


def test_patch_appends_under_a_heading(obsidian_storage: ObsidianStorage) -> None:
    obsidian_storage.write("log.md", "# Log\n\nfirst\n\n# Other\n\nkeep\n")
    new = obsidian_storage.patch("log.md", "append", "heading", ["Log"], "second")
    assert new == "# Log\n\nfirst\n\nsecond\n\n# Other\n\nkeep\n"
    assert obsidian_storage.read("log.md") == new


def test_patch_sets_a_frontmatter_value_as_json(
    obsidian_fake: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    obsidian_storage.write("n.md", "---\nstatus: draft\n---\nbody\n")
    new = obsidian_storage.patch("n.md", "replace", "frontmatter", "status", value=["a", 2])
    assert new == "---\nstatus:\n- a\n- 2\n---\nbody\n"
    sent = json.loads(obsidian_fake.exchanges[-1].request_body)
    assert sent == {"operation": "replace", "targetType": "frontmatter", "target": "status",
                    "value": ["a", 2]}


def test_patch_of_missing_target_is_not_found(obsidian_storage: ObsidianStorage) -> None:
    obsidian_storage.write("n.md", "# A\n")
    with pytest.raises(EchoError) as caught:
        obsidian_storage.patch("n.md", "append", "heading", ["Nope"], "x")
    assert caught.value.code == ExitCode.NOT_FOUND
    new = obsidian_storage.patch("n.md", "append", "heading", ["A", "New"], "x",
                                 create_target_if_missing=True)
    assert new == "# A\n\n## New\nx\n"


def test_patch_rejected_by_obsidian_is_a_usage_error(obsidian_storage: ObsidianStorage) -> None:
    obsidian_storage.write("n.md", "# A\n")
    with pytest.raises(EchoError) as caught:
        obsidian_storage.patch("n.md", "append", "heading", ["A"], value=3)  # no JSON here
    assert caught.value.code == ExitCode.USAGE
    assert obsidian_storage.read("n.md") == "# A\n"


# --- the lock note -------------------------------------------------------------------------


def _plant(fake: FakeObsidian, **record: object) -> None:
    fake.vault.put(LOCK_PATH, json.dumps({"token": "planted", **record}).encode())


def test_lock_note_records_owner_and_is_removed_on_release(
    obsidian_fake: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    with obsidian_storage.lock(timeout=1.0):
        owner = json.loads(obsidian_fake.vault.files[LOCK_PATH][0])
        assert owner["pid"] == os.getpid() and owner["host"] == socket.gethostname()
        assert abs(owner["created"] - time.time()) < 60 and owner["token"]
        assert obsidian_storage.list() == []  # hidden from listings
    assert LOCK_PATH not in obsidian_fake.vault.files
    assert obsidian_fake.exchanges[-1].target.endswith("?permanent=true")


def test_lock_of_live_owner_is_respected_until_timeout(
    obsidian_fake: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    _plant(obsidian_fake, pid=os.getppid(), host="elsewhere", created=time.time())
    started = time.monotonic()
    with pytest.raises(EchoError) as caught, obsidian_storage.lock(timeout=0.3):
        pass
    assert time.monotonic() - started >= 0.3
    assert caught.value.code == ExitCode.LOCK_HELD
    assert f"pid {os.getppid()} on host elsewhere" in caught.value.message
    assert LOCK_PATH in caught.value.message


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ({"pid": os.getppid(), "host": "elsewhere", "created": time.time() - 3600}, "older"),
        ({"pid": 0, "host": socket.gethostname(), "created": time.time()}, "no longer running"),
    ],
)
def test_stale_lock_note_is_broken_with_warning(
    obsidian_fake: FakeObsidian, obsidian_storage: ObsidianStorage,
    record: dict[str, object], reason: str,
) -> None:
    _plant(obsidian_fake, **record)
    with pytest.warns(StaleLockWarning, match=reason), obsidian_storage.lock(timeout=1.0):
        assert json.loads(obsidian_fake.vault.files[LOCK_PATH][0])["pid"] == os.getpid()


def test_slow_lock_write_is_withdrawn_and_retried(
    obsidian_fake: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    obsidian_fake.inject("slow", method="PUT", path=".lock.md", delay=SETTLE)
    with obsidian_storage.lock(timeout=2.0):
        pass
    puts = [ex for ex in obsidian_fake.exchanges if ex.method == "PUT"]
    assert len(puts) == 2  # the slow attempt was not trusted


def test_lock_note_left_by_a_failed_request_is_reclaimed_by_this_process(
    obsidian_fake: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    obsidian_fake.inject("status", method="GET", path=".lock.md", skip=1, times=2)
    # the read-back fails, and so does the cleanup: our record stays behind
    with pytest.raises(BackendUnavailable), obsidian_storage.lock(timeout=1.0):
        pass
    assert json.loads(obsidian_fake.vault.files[LOCK_PATH][0])["pid"] == os.getpid()
    with (
        pytest.warns(StaleLockWarning, match="this process left it behind"),
        obsidian_storage.lock(timeout=1.0),
    ):
        pass
    assert LOCK_PATH not in obsidian_fake.vault.files


def test_release_leaves_a_lock_note_taken_over_by_someone_else(
    obsidian_fake: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    with (
        pytest.warns(StaleLockWarning, match="taken from this process"),
        obsidian_storage.lock(timeout=1.0),
    ):
        _plant(obsidian_fake, pid=os.getppid(), host="elsewhere", created=time.time())
    assert json.loads(obsidian_fake.vault.files[LOCK_PATH][0])["host"] == "elsewhere"


def test_lock_error_in_other_process_names_this_owner(obsidian_fake: FakeObsidian) -> None:
    spec = StorageSpec(STORAGE_TARGET, (obsidian_fake.base_url, KEY), {"lock_settle": SETTLE})
    with ObsidianStorage(obsidian_fake.base_url, KEY, lock_settle=SETTLE).lock(timeout=1.0):
        status, message = probe_lock_in_child(spec, timeout=0.2)
    assert status == f"error {int(ExitCode.LOCK_HELD)}"
    assert f"pid {os.getpid()}" in message


_CRITICAL_SECTION = r"""
import json, os, sys, time
sys.path[:0] = json.loads(sys.argv[1])
from plugins.storage_obsidian.obsidian_storage import ObsidianStorage
storage = ObsidianStorage(sys.argv[2], sys.argv[3], lock_settle=0.1)
for _ in range(2):
    with storage.lock(timeout=30):
        for word in ("enter", "exit"):
            fd = os.open(sys.argv[4], os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            os.write(fd, f"{word} {os.getpid()}\n".encode())
            os.close(fd)
            time.sleep(0.03)
"""


def test_processes_contending_for_the_lock_never_overlap(
    obsidian_fake: FakeObsidian, tmp_path: Path
) -> None:
    log = tmp_path / "critical.log"
    argv = [sys.executable, "-c", _CRITICAL_SECTION, json.dumps(sys.path),
            obsidian_fake.base_url, KEY, str(log)]
    children = [subprocess.Popen(argv) for _ in range(3)]
    assert [child.wait(timeout=60) for child in children] == [0, 0, 0]
    entries = [line.split() for line in log.read_text().splitlines()]
    assert len(entries) == 12
    for enter, leave in zip(entries[::2], entries[1::2], strict=True):
        assert enter[0] == "enter" and leave == ["exit", enter[1]]
    assert LOCK_PATH not in obsidian_fake.vault.files
