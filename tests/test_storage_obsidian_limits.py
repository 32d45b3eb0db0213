"""ObsidianStorage keeps a hostile or misdirected server within bounds: an answer is read
up to a cap and no further, an error message quotes at most a short excerpt of what the
server said, the ``timeout`` option is each request's overall deadline, and a redirect is
named as one (never followed: the API key would go with it)."""

from __future__ import annotations

import time

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.protocols import BackendUnavailable
from echo_core.text_source import MAX_SOURCE_BYTES
from plugins.storage_obsidian.limits import NOTE_CAP
from plugins.storage_obsidian.obsidian_storage import ObsidianStorage
from tests.obsidian_fake import FakeObsidian
from tests.obsidian_kit import KEY, obsidian_fake, obsidian_storage

__all__ = ["obsidian_fake", "obsidian_storage"]  # fixtures used by this module

NOTE = b"# N\n\nold\n"
#: Far over the cap; a client that reads it all takes every byte of it.
HUGE = 64 * 1024 * 1024


@pytest.fixture
def seeded(obsidian_fake: FakeObsidian) -> FakeObsidian:
    obsidian_fake.vault.put("n.md", NOTE)
    return obsidian_fake


def test_the_note_cap_is_the_projects_note_size_limit() -> None:
    assert NOTE_CAP == MAX_SOURCE_BYTES  # mirrored: plugins see only echo_core's public names


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "growing"])
def test_an_answer_over_the_cap_is_refused_and_not_read_to_its_end(
    seeded: FakeObsidian, obsidian_storage: ObsidianStorage, chunked: bool
) -> None:
    fault = seeded.inject("big_body", method="GET", size=HUGE, chunked=chunked, times=10)
    with pytest.raises(EchoError) as caught:
        obsidian_storage.read("n.md")
    error = caught.value
    assert not isinstance(error, BackendUnavailable) and error.code == ExitCode.FAILURE
    assert f"{NOTE_CAP:,} bytes" in error.message and "nothing was taken" in error.message
    assert fault.sent < HUGE // 2  # the read stopped at the cap (plus socket buffers)


def test_an_append_never_writes_after_an_answer_over_the_cap(
    seeded: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    seeded.inject("big_body", method="GET", size=HUGE, chunked=True)
    with pytest.raises(EchoError, match="bytes"):
        obsidian_storage.append_line("n.md", "- appended")
    assert seeded.vault.files["n.md"][0] == NOTE
    assert not [ex for ex in seeded.exchanges if ex.method in ("PUT", "POST")]


def test_a_note_under_the_cap_and_a_larger_attachment_still_read(
    seeded: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    note = b"line\n" * (NOTE_CAP // 5)  # exactly at the cap
    seeded.vault.put("big.md", note)
    assert obsidian_storage.read("big.md").encode() == note
    attachment = b"\x89PNG" + b"\0" * (NOTE_CAP + 1)  # attachments have no cap (as in import)
    seeded.vault.put("image.png", attachment)
    assert obsidian_storage.read_bytes("image.png") == attachment


def test_an_error_message_quotes_a_short_escaped_excerpt_of_the_server(
    seeded: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    seeded.inject("status", method="PUT", status=400, message="\x1b[2J\x1b]0;owned\x07" + "A" * 50_000)
    with pytest.raises(EchoError) as caught:
        obsidian_storage.write("n.md", "new\n")
    message = caught.value.message
    assert len(message) < 1000
    assert "\x1b" not in message and "\x07" not in message and "\\x1b[2J" in message
    assert "characters in all" in message


def test_a_huge_server_error_is_still_unavailable_and_quoted_short(
    seeded: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    seeded.inject("status", method="GET", status=503, message="B" * (HUGE // 4))
    with pytest.raises(BackendUnavailable) as caught:
        obsidian_storage.read("n.md")
    assert "503" in caught.value.message and len(caught.value.message) < 1000


@pytest.mark.parametrize("fault", ["slow_body", "slow_headers"])
def test_the_timeout_is_the_whole_requests_deadline(seeded: FakeObsidian, fault: str) -> None:
    storage = ObsidianStorage(seeded.base_url, KEY, timeout=0.4)
    seeded.vault.put("n.md", NOTE * 20)
    seeded.inject(fault, method="GET", delay=0.05, times=100)  # each byte well in time
    started = time.monotonic()
    with pytest.raises(BackendUnavailable, match="within 0.4 s"):
        storage.read("n.md")
    assert time.monotonic() - started < 0.4 + 0.25  # not a second read timeout on top
    storage.close()


@pytest.mark.parametrize("status", [301, 307, 308])
def test_a_redirect_names_where_it_goes_and_is_not_followed(
    seeded: FakeObsidian, obsidian_storage: ObsidianStorage, status: int
) -> None:
    elsewhere = "https://obsidian.example.org:27124/vault/n.md"
    seeded.inject("redirect", status=status, location=elsewhere, times=10)
    with pytest.raises(EchoError) as caught:
        obsidian_storage.read("n.md")
    error = caught.value
    assert error.code == ExitCode.NOT_CONFIGURED
    assert "redirect" in error.message and elsewhere in error.message
    assert "vault URL" in error.message and "plugin version" not in error.message
    with pytest.raises(EchoError, match="redirect"):
        obsidian_storage.write("n.md", "new\n")
    assert seeded.vault.files["n.md"][0] == NOTE
