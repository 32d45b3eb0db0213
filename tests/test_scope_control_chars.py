"""``scope set`` (CLI, ``echo_set_scope``, a session-end bundle) refuses a scope holding a
control character other than a tab or line break, as a usage error naming ``scope`` and
with nothing written: a ``{"scope": "\\u0000"}`` wrote a raw NUL into
``_agent/context/current-context.md`` (and later into its Scope History), after which
grep called the note binary."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.scope import clean_scope, set_scope
from plugins.transport_mcp.server import EchoMcpServer
from tests.capture_kit import VaultBox
from tests.conftest import run_cli
from tests.mcp_kit import call, make_server, with_client

CONTEXT = "_agent/context/current-context.md"


@pytest.mark.parametrize("scope", ["\x00", "a\x00b", "ship it\n\x1b[2Jnow", "x\x07", "bell\x7f",
                                   "two\nlines\x0bhere"])
def test_set_scope_refuses_a_control_character_writing_nothing(tmp_path: Path,
                                                               scope: str) -> None:
    box = VaultBox(tmp_path).init()
    before = box.tree_digest()
    with pytest.raises(EchoError) as refused:
        set_scope(box.ctx(), scope)
    assert refused.value.code == ExitCode.USAGE
    assert refused.value.message.startswith("scope:"), refused.value.message
    assert "control character" in refused.value.message
    assert box.tree_digest() == before


def test_tabs_and_line_breaks_stay_allowed() -> None:
    assert clean_scope("first\tpart\r\nsecond part") == "first\tpart\nsecond part"


def test_cli_scope_set_from_stdin_refuses_a_nul(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    before = box.read(CONTEXT)
    done = run_cli(["scope", "set", "-", "--vault", str(box.vault)], env=box.env(),
                   stdin=b"ship\x00it\n")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "scope" in done.stderr and "control character" in done.stderr
    assert box.read(CONTEXT) == before and "\x00" not in box.read(CONTEXT)


def test_echo_set_scope_refuses_a_nul(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    before = box.tree_digest()
    server: EchoMcpServer = make_server(box)
    try:
        err, data, text = with_client(
            server, lambda client: call(client, "echo_set_scope", scope="\x00"))
    finally:
        server.runner.close()
    assert err, text
    assert "scope" in text and "control character" in text
    assert data.get("ok") is False
    assert box.tree_digest() == before
