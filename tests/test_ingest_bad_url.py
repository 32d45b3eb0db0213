"""A malformed URL is a usage error (exit 2) with a message that says so, from every
surface (the operation, the CLI with ``--json``, MCP) and for a redirect to one; never
a traceback nor "check the network". Nothing is written."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.ingest import ingest
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.ingest_kit import Page, Site, loopback_site

BAD_URLS = [
    ("http://[::1", "Invalid IPv6 URL"),
    ("http://exa mple.com/", "a space or a control character"),
    ("http://", "not an http(s) URL"),
    ("http://host:99999/", "Port out of range"),
    ("http://host:0/", "port 0"),
    ("http://host:abc/", "Port could not be cast"),
    ("http://[zz]/", "does not appear to be an IPv4 or IPv6 address"),
    ("http://a..b/", "host 'a..b'"),
    ("http://ex<am>ple.com/", "host 'ex<am>ple.com'"),
    ("https://example.com/a\tb", "a space or a control character"),
]


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


@pytest.mark.parametrize(("url", "words"), BAD_URLS)
def test_a_malformed_url_is_a_usage_error(box: VaultBox, url: str, words: str) -> None:
    before = box.tree_digest()
    for remote in (False, True):  # over MCP the host is checked first: same answer
        with pytest.raises(EchoError) as caught:
            ingest(box.ctx(), url, remote=remote)
        assert caught.value.code == ExitCode.USAGE, caught.value.message
        assert words in caught.value.message and "URL" in caught.value.message
        assert "network" not in caught.value.message
    assert box.tree_digest() == before


@pytest.mark.parametrize("url", [u for u, _ in BAD_URLS[:4]])
def test_the_cli_answers_a_malformed_url_with_a_json_envelope(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        url: str) -> None:
    box = VaultBox(tmp_path).init()
    for key, value in box.env().items():
        monkeypatch.setenv(key, value)
    before = box.tree_digest()
    run = run_main(["ingest", "--vault", str(box.vault), "--state-dir", str(box.state),
                    "--json", url], capsys, monkeypatch)
    assert run.code == 2, run
    error = json.loads(run.out)["error"]
    assert error["code"] == "usage" and error["exit"] == 2
    assert "URL" in error["message"] and "Traceback" not in run.err
    assert box.tree_digest() == before


@pytest.fixture()
def site() -> Iterator[Site]:
    with loopback_site({"/to-bad": Page(status=302, location="http://[::1/x"),
                        "/to-port": Page(status=302, location="http://127.0.0.1:99999/")}
                       ) as running:
        yield running


@pytest.mark.parametrize("path", ["/to-bad", "/to-port"])
def test_a_redirect_to_a_malformed_url_is_a_usage_error(box: VaultBox, site: Site,
                                                        path: str) -> None:
    before = box.tree_digest()
    with pytest.raises(EchoError) as caught:
        ingest(box.ctx(ECHO_INGEST_PRIVATE_HOSTS="allow"), site.url(path), remote=True)
    assert caught.value.code == ExitCode.USAGE, caught.value.message
    assert "a redirect from" in caught.value.message
    assert box.tree_digest() == before
