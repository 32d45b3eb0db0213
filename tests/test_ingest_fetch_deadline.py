"""The whole-fetch deadline (``DEADLINE_FACTOR`` x ``ECHO_INGEST_TIMEOUT``) also holds for
an answer that ends when the server closes the connection (HTTP/1.0 without a length, or
``Connection: close``): the standard client drops the connection's socket then, so the
deadline must shut the socket it kept itself. Exit 69, nothing written."""

from __future__ import annotations

import http.server
import json
import time
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.ingest import ingest
from echo_core.ops.ingest_fetch import DEADLINE_FACTOR
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.ingest_kit import serving

TIMEOUT = 0.5
DEADLINE = TIMEOUT * DEADLINE_FACTOR
MARGIN = 1.0
#: The CLI call also loads the plugins and opens the vault (under a second), on a shared
#: machine.
CLI_MARGIN = 2.0
#: How long the server would go on: far past the deadline, short enough for a failing run.
DRIP_S = 8.0


class _CloseDelimited(http.server.BaseHTTPRequestHandler):
    """A body with no length, one byte every 0.2 s (each read is quick, the whole is not):
    ``/http10`` answers HTTP/1.0, ``/close`` HTTP/1.1 with ``Connection: close``."""

    def do_GET(self) -> None:
        head = (b"HTTP/1.0 200 OK\r\n" if self.path == "/http10"
                else b"HTTP/1.1 200 OK\r\nConnection: close\r\n")
        try:
            self.wfile.write(head + b"Content-Type: text/html\r\n\r\n<p>")
            self.wfile.flush()
            for _ in range(int(DRIP_S / 0.2)):
                time.sleep(0.2)
                self.wfile.write(b"a")
                self.wfile.flush()
        except OSError:
            pass  # the client hung up

    def log_message(self, format: str, *args: object) -> None:
        pass


def _dripping_server() -> AbstractContextManager[str]:
    return serving(_CloseDelimited)


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


@pytest.mark.parametrize("path", ["/http10", "/close"])
def test_a_close_delimited_trickle_is_cut_off_at_the_fetch_deadline(box: VaultBox,
                                                                     path: str) -> None:
    before = box.tree_digest()
    with _dripping_server() as base:
        started = time.monotonic()
        with pytest.raises(EchoError) as caught:
            ingest(box.ctx(ECHO_INGEST_TIMEOUT=str(TIMEOUT)), base + path)
        took = time.monotonic() - started
    assert caught.value.code == ExitCode.UNAVAILABLE, caught.value.message
    assert f"took longer than {DEADLINE:g} s" in caught.value.message
    assert DEADLINE - 0.1 <= took < DEADLINE + MARGIN, took
    assert box.tree_digest() == before


def test_the_cli_ends_with_exit_69_at_the_deadline(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    for key, value in box.env(ECHO_INGEST_TIMEOUT=str(TIMEOUT)).items():
        monkeypatch.setenv(key, value)
    before = box.tree_digest()
    with _dripping_server() as base:
        started = time.monotonic()
        run = run_main(["ingest", "--vault", str(box.vault), "--state-dir", str(box.state),
                        "--json", base + "/http10"], capsys, monkeypatch)
        took = time.monotonic() - started
    assert run.code == 69, run
    assert json.loads(run.out)["error"]["code"] == "unavailable"
    assert took < DEADLINE + CLI_MARGIN, took
    assert box.tree_digest() == before
