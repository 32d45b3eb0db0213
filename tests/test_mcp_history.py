"""``echo_note_history`` and ``echo_restore_note`` (SPEC §6.2, §5.6): the versions kept of
a note over MCP, and a restore that only previews until ``confirm`` is true."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from echo_core.operations import parse_params
from echo_core.ops.notes_io import put_note
from echo_core.verbs.history_verbs import RESTORE
from plugins.transport_mcp.access import plan_for
from plugins.transport_mcp.server import EchoMcpServer
from tests.capture_kit import VaultBox
from tests.mcp_kit import call, make_server, with_client

NOTE = "resources/concepts/durability.md"
V1 = "---\ntype: concept\n---\n# Durability\n\nfirst text\n"
V2 = "---\ntype: concept\n---\n# Durability\n\nsecond text, damaged\n"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    put_note(box.ctx(), NOTE, V1)
    put_note(box.ctx(), NOTE, V2)
    return box


@pytest.fixture
def server(box: VaultBox) -> Iterator[EchoMcpServer]:
    built = make_server(box)
    yield built
    built.runner.close()


def test_note_history_lists_the_kept_versions(server: EchoMcpServer, box: VaultBox) -> None:
    err, data, text = with_client(server, lambda c: call(c, "echo_note_history", path=NOTE))
    assert not err and data["path"] == NOTE and data["exists"] is True
    [version] = data["versions"]
    assert box.ctx().history.text(NOTE, box.ctx().history.find(NOTE, version["version_id"])) == V1
    assert version["version_id"] in text and "echo_restore_note" in text
    assert "echo-memory restore" not in text


def test_note_history_of_nothing_is_not_found(server: EchoMcpServer) -> None:
    err, data, _ = with_client(server, lambda c: call(c, "echo_note_history",
                                                      path="resources/concepts/none.md"))
    assert err and data["error"]["code"] == "not-found"


def test_restore_without_confirm_previews_and_writes_nothing(server: EchoMcpServer,
                                                             box: VaultBox) -> None:
    before = box.tree_digest()
    err, data, text = with_client(server, lambda c: call(c, "echo_restore_note", path=NOTE,
                                                         version_id="previous"))
    assert not err and data["action"] == "preview" and data["restored"] is False
    assert "-second text, damaged\n+first text\n" in data["diff"]
    assert "confirm: true" in text and "--yes" not in text
    assert box.tree_digest() == before


def test_restore_with_confirm_restores_and_can_be_undone(server: EchoMcpServer,
                                                         box: VaultBox) -> None:
    err, data, _ = with_client(server, lambda c: call(c, "echo_restore_note", path=NOTE,
                                                      version_id="previous", confirm=True))
    assert not err and data["action"] == "restored" and data["restored"] is True
    assert box.read(NOTE) == V1
    err, data, _ = with_client(server, lambda c: call(c, "echo_restore_note", path=NOTE,
                                                      version_id="previous", confirm=True))
    assert not err and box.read(NOTE) == V2


@pytest.mark.parametrize(("arguments", "code", "field"), [
    ({"path": NOTE, "version_id": "ffffffff"}, "not-found", None),
    ({"path": NOTE}, "usage", "version_id"),
    ({"path": NOTE, "version": "previous"}, "usage", "version"),
    ({"path": "../outside.md", "version_id": "previous", "confirm": True}, "usage", None),
])
def test_restore_errors_name_the_problem_and_write_nothing(
        server: EchoMcpServer, box: VaultBox, arguments: dict[str, object], code: str,
        field: str | None) -> None:
    before = box.tree_digest()
    err, data, text = with_client(server, lambda c: call(c, "echo_restore_note", **arguments))
    assert err and data["error"]["code"] == code
    if field is not None:
        assert field in text
    assert box.tree_digest() == before


@pytest.mark.parametrize(("arguments", "plan"), [
    ({"path": NOTE, "version_id": "previous"}, ("read", None)),
    ({"path": "./" + NOTE, "version_id": "previous", "confirm": True}, ("write", NOTE)),
])
def test_restore_is_a_read_until_confirmed_then_a_write_locking_the_note(
        arguments: dict[str, object], plan: tuple[str, str | None]) -> None:
    planned = plan_for(RESTORE, parse_params(RESTORE.params, arguments, surface="mcp"))
    assert (planned.access, planned.lock_key) == plan
