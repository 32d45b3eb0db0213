"""ObsidianStorage when the server misbehaves (refused, silent, 5xx, dropped mid-request)
and over TLS with the plugin's self-signed certificate."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.protocols import BackendUnavailable
from plugins.storage_obsidian import open_obsidian_storage
from plugins.storage_obsidian.obsidian_storage import ObsidianStorage
from tests.obsidian_fake import FakeObsidian
from tests.obsidian_kit import KEY, obsidian_fake, obsidian_storage
from tests.obsidian_spec import assert_conforms
from tests.obsidian_tls import SelfSigned, make_self_signed

__all__ = ["obsidian_fake", "obsidian_storage"]  # fixtures used by this module

Operation = Callable[[ObsidianStorage], object]
OPERATIONS: dict[str, tuple[str, Operation]] = {
    "read": ("GET", lambda s: s.read("n.md")),
    "read_many": ("GET", lambda s: s.read_many(["n.md", "m.md"])),
    "exists": ("GET", lambda s: s.exists("n.md")),
    "stat": ("GET", lambda s: s.stat("n.md")),
    "list": ("GET", lambda s: s.list()),
    "write": ("PUT", lambda s: s.write("n.md", "new\n")),
    "append_line": ("POST", lambda s: s.append_line("n.md", "- appended")),
    "append_line_no_final_eol": ("POST", lambda s: s.append_line("bare.md", "- appended")),
    "delete": ("DELETE", lambda s: s.delete("n.md")),
    "patch": ("PATCH", lambda s: s.patch("n.md", "append", "heading", ["N"], "x")),
    "ping": ("GET", lambda s: s.ping()),
}
ORIGINAL = {"n.md": b"# N\n\nold\n", "bare.md": b"no final newline"}


@pytest.fixture
def seeded(obsidian_fake: FakeObsidian) -> FakeObsidian:
    for path, data in ORIGINAL.items():
        obsidian_fake.vault.put(path, data)
    return obsidian_fake


def _unchanged(fake: FakeObsidian) -> bool:
    return {path: entry[0] for path, entry in fake.vault.files.items()} == ORIGINAL


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_refused_connection_is_unavailable_then_recovers(
    seeded: FakeObsidian, obsidian_storage: ObsidianStorage, name: str
) -> None:
    obsidian_storage.ping()  # a pooled connection exists when the server goes away
    seeded.refuse()
    with pytest.raises(BackendUnavailable, match="cannot connect to Obsidian Local REST API"):
        OPERATIONS[name][1](obsidian_storage)
    seeded.resume()
    OPERATIONS[name][1](obsidian_storage)


def test_nothing_listening_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    storage = ObsidianStorage(f"http://127.0.0.1:{port}", KEY)
    with pytest.raises(BackendUnavailable, match="check that Obsidian is running"):
        storage.ping()
    with pytest.raises(BackendUnavailable), storage.lock(timeout=0.2):
        pass


@pytest.mark.parametrize(
    ("fault", "options", "message"),
    [
        ("timeout", {"delay": 1.0}, "did not answer"),
        ("status", {"status": 503}, "503 50000: injected server error"),
        ("status", {"status": 500}, "failed on"),
        ("drop_after_headers", {}, "broke during"),
        ("drop_before_response", {}, "broke during"),
    ],
)
@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_faults_are_unavailable_and_write_nothing(
    seeded: FakeObsidian, name: str, fault: str, options: dict[str, object], message: str
) -> None:
    method, operation = OPERATIONS[name]
    storage = ObsidianStorage(seeded.base_url, KEY, timeout=0.2 if fault == "timeout" else 5.0)
    seeded.inject(fault, method=method, times=100, **options)
    with pytest.raises(BackendUnavailable, match=message):
        operation(storage)
    assert _unchanged(seeded)
    seeded.faults.clear()
    if fault != "timeout":  # (a 0.2 s budget is too tight to assert success under load)
        operation(storage)  # the same storage works once the server behaves
    storage.close()


def test_a_failed_release_leaves_the_lock_note_to_go_stale(
    obsidian_fake: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    with (
        pytest.warns(UserWarning, match="could not remove the vault lock note"),
        obsidian_storage.lock(timeout=1.0),
    ):
        obsidian_fake.inject("status", method="DELETE", times=5)
    assert "_agent/.lock.md" in obsidian_fake.vault.files


# --- TLS -------------------------------------------------------------------------------------


@pytest.fixture
def certificate(tmp_path: Path) -> SelfSigned:
    return make_self_signed(tmp_path / "tls")


@pytest.fixture
def https_fake(certificate: SelfSigned) -> Iterator[FakeObsidian]:
    with FakeObsidian(KEY, tls=certificate.server_context()) as fake:
        yield fake
    assert_conforms(fake.exchanges)


def _vault_url(fake: FakeObsidian) -> str:
    return fake.base_url.replace("https://", "obsidian+https://")


def test_self_signed_certificate_fails_clearly_by_default(https_fake: FakeObsidian) -> None:
    storage = open_obsidian_storage(_vault_url(https_fake), {"key": KEY}, env={})
    with pytest.raises(EchoError) as caught:
        storage.ping()
    assert caught.value.code == ExitCode.NOT_CONFIGURED
    message = caught.value.message
    assert "TLS verification" in message and "ca_file" in message
    assert "cert_fingerprint" in message
    assert https_fake.exchanges == []  # nothing was sent to an unverified server


def test_trusting_the_certificate_with_ca_file_works(
    https_fake: FakeObsidian, certificate: SelfSigned
) -> None:
    options = {"key": KEY, "ca_file": str(certificate.cert_file)}
    storage = open_obsidian_storage(_vault_url(https_fake), options, env={})
    storage.write("tls.md", "secure\r\n")
    assert storage.read("tls.md") == "secure\r\n"
    storage.close()


def test_pinning_the_certificate_fingerprint_works(
    https_fake: FakeObsidian, certificate: SelfSigned
) -> None:
    pin = certificate.fingerprint.upper().replace("SHA256:", "sha256:")
    storage = open_obsidian_storage(_vault_url(https_fake), {"key": KEY, "cert_fingerprint": pin})
    storage.ping()
    assert storage.list() == []
    storage.close()


def test_a_wrong_pin_fails_clearly_and_sends_nothing(
    https_fake: FakeObsidian, certificate: SelfSigned
) -> None:
    options = {"key": KEY, "cert_fingerprint": "sha256:" + "ab" * 32}
    storage = open_obsidian_storage(_vault_url(https_fake), options)
    with pytest.raises(EchoError) as caught:
        storage.write("n.md", "x\n")
    assert caught.value.code == ExitCode.NOT_CONFIGURED
    assert "does not match the pin" in caught.value.message
    assert certificate.fingerprint in caught.value.message
    assert https_fake.exchanges == []


def test_another_certificate_as_ca_file_is_refused(
    https_fake: FakeObsidian, tmp_path: Path
) -> None:
    other = make_self_signed(tmp_path / "other")
    storage = ObsidianStorage(https_fake.base_url, KEY, verify=str(other.cert_file))
    with pytest.raises(EchoError) as caught:
        storage.ping()
    assert caught.value.code == ExitCode.NOT_CONFIGURED and "ca_file" in caught.value.message


def test_verification_cannot_be_switched_off(https_fake: FakeObsidian) -> None:
    with pytest.raises(EchoError) as caught:
        ObsidianStorage(https_fake.base_url, KEY, verify=False)
    assert caught.value.code == ExitCode.NOT_CONFIGURED
