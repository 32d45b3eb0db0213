"""ObsidianStorage against a hostile or broken server: answers that are wrong rather than
missing (a spurious 404, an HTML page, a body cut short or trickling in, "slow down")
never become the note's text and never make a write replace a note."""

from __future__ import annotations

import time

import pytest

from echo_core.errors import EchoError
from echo_core.protocols import BackendUnavailable
from plugins.storage_obsidian import base_url_from_vault_url
from plugins.storage_obsidian.obsidian_storage import ObsidianStorage
from tests.obsidian_fake import FakeObsidian
from tests.obsidian_kit import KEY, obsidian_fake, obsidian_storage

__all__ = ["obsidian_fake", "obsidian_storage"]  # fixtures used by this module

NOTE = b"# Seed\n\nPrecious original fact. " + b"filler " * 20 + b"TAIL\n"


@pytest.fixture
def seeded(obsidian_fake: FakeObsidian) -> FakeObsidian:
    obsidian_fake.vault.put("n.md", NOTE)
    obsidian_fake.vault.put("bare.md", b"no final newline")
    return obsidian_fake


def _text(fake: FakeObsidian, path: str) -> bytes:
    entry = fake.vault.get(path)
    assert entry is not None
    return entry[0]


@pytest.mark.parametrize(("path", "before"), [("n.md", NOTE), ("bare.md", b"no final newline")])
def test_a_spurious_404_on_append_never_replaces_the_note(
    seeded: FakeObsidian, obsidian_storage: ObsidianStorage, path: str, before: bytes
) -> None:
    seeded.inject("status", method="GET", status=404)
    obsidian_storage.append_line(path, "- appended")
    after = _text(seeded, path)
    assert after.startswith(before)  # the old content is all still there
    assert after.endswith(b"- appended\n")
    assert not [ex for ex in seeded.exchanges if ex.method == "PUT"]


def test_append_line_without_final_newline_appends_after_a_line_ending(
    seeded: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    seeded.vault.put("crlf.md", b"a\r\nb")
    assert obsidian_storage.append_line("crlf.md", "- c")
    assert _text(seeded, "crlf.md") == b"a\r\nb\r\n- c\r\n"
    assert obsidian_storage.append_line("new/fresh.md", "- first")
    assert _text(seeded, "new/fresh.md") == b"- first\n"


@pytest.mark.parametrize("kind", ["wrong_type", "truncated_close"])
def test_a_wrong_or_cut_short_answer_is_unavailable_never_the_note(
    seeded: FakeObsidian, obsidian_storage: ObsidianStorage, kind: str
) -> None:
    seeded.inject(kind, method="GET", times=100)
    with pytest.raises(BackendUnavailable):
        obsidian_storage.read("n.md")
    with pytest.raises(BackendUnavailable):
        obsidian_storage.read_many(["n.md", "bare.md"])
    with pytest.raises(BackendUnavailable):
        obsidian_storage.append_line("n.md", "- appended")
    with pytest.raises(BackendUnavailable):
        obsidian_storage.stat("n.md")
    assert _text(seeded, "n.md") == NOTE
    assert not [ex for ex in seeded.exchanges if ex.method in ("PUT", "POST")]


def test_a_listing_answered_as_html_is_unavailable(
    seeded: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    seeded.inject("wrong_type", method="GET", path="/vault/", times=100)
    with pytest.raises(BackendUnavailable, match="Content-Type 'text/html'"):
        obsidian_storage.list()


def test_a_trickling_body_hits_the_overall_deadline(seeded: FakeObsidian) -> None:
    storage = ObsidianStorage(seeded.base_url, KEY, timeout=0.3)
    seeded.inject("slow_body", method="GET", delay=0.1, times=100)  # ~20 s for the note
    started = time.monotonic()
    with pytest.raises(BackendUnavailable, match="did not answer"):
        storage.read("n.md")
    assert time.monotonic() - started < 3.0  # 0.3 s, slack for a loaded machine (tight: _limits)
    storage.close()


@pytest.mark.parametrize("status", [408, 429])
def test_rate_limited_or_request_timeout_is_unavailable(
    seeded: FakeObsidian, obsidian_storage: ObsidianStorage, status: int
) -> None:
    seeded.inject("status", method="PUT", status=status)
    with pytest.raises(BackendUnavailable, match=str(status)):
        obsidian_storage.write("n.md", "new\n")
    assert _text(seeded, "n.md") == NOTE
    obsidian_storage.write("n.md", "new\n")  # retried later, it goes through


@pytest.mark.parametrize(
    "url",
    [
        "obsidian+http://user:SEKRET-key@127.0.0.1:27123",
        "obsidian+http://SEKRET-key@127.0.0.1",
        "obsidian+https://127.0.0.1:27124/?key=SEKRET-key",
        "obsidian+https://127.0.0.1:27124/vault?apikey=SEKRET-key#x",
    ],
)
def test_a_key_in_the_vault_url_is_never_printed(url: str) -> None:
    with pytest.raises(EchoError) as caught:
        base_url_from_vault_url(url)
    assert "SEKRET" not in caught.value.message
    assert "***" in caught.value.message


def test_a_name_the_path_rule_refuses_is_listed_like_the_folder_backend(
    seeded: FakeObsidian, obsidian_storage: ObsidianStorage
) -> None:
    seeded.vault.put("concepts/odd\\name.md", b"# Odd\n")
    seeded.vault.put("concepts/fine.md", b"# Fine\n")
    assert obsidian_storage.list("concepts") == ["concepts/fine.md", "concepts/odd\\name.md"]
