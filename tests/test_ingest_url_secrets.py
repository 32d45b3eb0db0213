"""A password or key in an ingested URL never reaches the vault, the state dir or the
answer (SPEC §2.1's redaction rule, as ``capture`` applies it to sources): the notes, the
``Source:`` line and ``--json`` hold the redacted URL, which is also the source's identity,
so ingesting the same URL again is "up to date" and writes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.ingest import ingest
from tests.capture_kit import VaultBox
from tests.cli_inproc import CliRun, run_main
from tests.ingest_kit import GUIDE, Page, Site, loopback_site

PASSWORD = "s3cretpw"
KEY = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"
QUERY = f"?api_key={KEY}"
SHOWN_QUERY = "?api_key=[REDACTED:anthropic-key]"


def _everything_under(root: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def _secret_url(site: Site, path: str) -> str:
    return site.url(path).replace("http://", f"http://alice:{PASSWORD}@") + QUERY


def _cli(box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
         *args: str) -> CliRun:
    return run_main(["ingest", "--vault", str(box.vault), "--state-dir", str(box.state),
                     "--json", *args], capsys, monkeypatch)


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


@pytest.fixture()
def site() -> Iterator[Site]:
    with loopback_site({"/docs/guide.md" + QUERY: Page(GUIDE, "text/markdown")}) as running:
        yield running


def test_url_secrets_are_redacted_everywhere_and_reingest_is_up_to_date(
        tmp_path: Path, box: VaultBox, site: Site, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in box.env().items():
        monkeypatch.setenv(key, value)
    url = _secret_url(site, "/docs/guide.md")
    done = _cli(box, capsys, monkeypatch, url)
    assert done.code == 0, done
    data = json.loads(done.out)
    shown = (site.url("/docs/guide.md").replace("http://", "http://alice:[REDACTED:url-password]@")
             + SHOWN_QUERY)
    assert data["source"] == shown
    assert {"url-password", "anthropic-key"} <= set(data["redacted"])
    parent = box.read(data["path"])
    assert f"Source: {shown}" in parent
    assert box.frontmatter(data["path"])["source_url"] == shown
    for part in data["parts"]:
        assert box.frontmatter(part["path"])["source_url"] == shown
    notes = box.files()

    again = _cli(box, capsys, monkeypatch, url)
    assert again.code == 0, again
    answer = json.loads(again.out)
    assert answer["action"] == "unchanged" and "up to date" in answer["message"], answer
    assert box.files() == notes  # nothing doubled
    for text in (done.out, done.err, again.out, again.err):
        assert PASSWORD not in text and KEY not in text
    disk = _everything_under(tmp_path)  # vault, state dir, home
    assert PASSWORD.encode() not in disk and KEY.encode() not in disk


def test_a_failed_fetch_does_not_show_the_url_secrets(box: VaultBox, site: Site) -> None:
    with pytest.raises(EchoError) as caught:
        ingest(box.ctx(), _secret_url(site, "/missing.md"))
    assert caught.value.code == ExitCode.NOT_FOUND
    message = caught.value.message
    assert PASSWORD not in message and KEY not in message, message
    assert "alice:[REDACTED:url-password]@" in message and SHOWN_QUERY in message


def test_a_document_an_earlier_version_recorded_with_the_raw_url_is_rewritten(
        box: VaultBox, site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """Notes ingested before URLs were redacted hold the raw URL: ingesting it again
    finds them (no second document) and rewrites them without the secret."""
    import echo_core.ops.ingest_fetch as fetch_module
    from echo_core.redaction import RedactionResult

    url = _secret_url(site, "/docs/guide.md")
    with monkeypatch.context() as old_version:  # what an earlier version recorded
        old_version.setattr(fetch_module, "redact", lambda text: RedactionResult(text, ()))
        first = ingest(box.ctx(), url)
    notes = sorted(p.relative_to(box.vault).as_posix() for p in box.vault.rglob("*.md"))
    assert PASSWORD.encode() in _everything_under(box.vault)
    again = ingest(box.ctx(), url)
    assert again.data.path == first.data.path and again.data.changed
    assert sorted(p.relative_to(box.vault).as_posix() for p in box.vault.rglob("*.md")) == notes
    assert PASSWORD.encode() not in _everything_under(box.vault)
    assert ingest(box.ctx(), url).data.changed is False  # then up to date
