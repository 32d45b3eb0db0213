"""``echo_habitat_record`` / ``echo_habitat_fork`` (and ``habitat record|fork`` on the
CLI) refuse a session id holding a control character (``"s\\u0000"``, a line break, an
ESC) as a usage error naming ``session_id``, nothing recorded: such an id was written
raw into the habitat's day file. A ``../../pwn`` id is plain text: it is never part of
a path (day files are named by date), so it is recorded as given and no file appears
outside the loom."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.capture_kit import VaultBox
from tests.habitat_record_kit import box_at, loom_json, loom_of, raw_lines
from tests.mcp_kit import call, make_server, with_client

BAD_IDS = ["s\x00", "s\n1", "a\x1b[2Jb", "tab\there", "del\x7f"]


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return box_at(tmp_path / "box")


def _served(box: VaultBox, body: Any) -> Any:
    server = make_server(box)
    try:
        return with_client(server, body)
    finally:
        server.runner.close()


@pytest.mark.parametrize("session", BAD_IDS)
def test_record_refuses_a_session_id_with_a_control_character(box: VaultBox,
                                                              session: str) -> None:
    async def body(client: Client) -> list[tuple[bool, dict[str, Any], str]]:
        return [await call(client, "echo_habitat_record", session_id=session, text="x"),
                await call(client, "echo_habitat_record", session_id=session,
                           records=[{"text": "a"}, {"text": "b"}])]

    for is_error, data, text in _served(box, body):
        assert is_error, text
        assert data["error"]["code"] == "usage" and "session_id" in text
        assert "control character" in text
    assert raw_lines(loom_of(box.ctx())) == []


@pytest.mark.parametrize("session", BAD_IDS[:2])
def test_fork_refuses_a_session_id_with_a_control_character(box: VaultBox,
                                                            session: str) -> None:
    async def body(client: Client) -> tuple[bool, dict[str, Any], str]:
        first = await call(client, "echo_habitat_record", session_id="s1", text="start")
        assert not first[0], first
        return await call(client, "echo_habitat_fork", record_id=first[1]["ids"][0],
                          session_id=session, text="other way")

    is_error, data, text = _served(box, body)
    assert is_error and data["error"]["code"] == "usage" and "session_id" in text
    assert [r["text"] for r in loom_json(loom_of(box.ctx()))] == ["start"]


def test_a_dotted_session_id_is_only_text(box: VaultBox) -> None:
    before = {p for p in box.root.rglob("*") if p.is_file()}

    async def body(client: Client) -> tuple[bool, dict[str, Any], str]:
        return await call(client, "echo_habitat_record", session_id="../../pwn", text="x")

    is_error, data, text = _served(box, body)
    assert not is_error, text
    assert data["session_id"] == "../../pwn"
    assert [r["session_id"] for r in loom_json(loom_of(box.ctx()))] == ["../../pwn"]
    added = {p for p in box.root.rglob("*") if p.is_file()} - before
    assert not any("pwn" in str(p) for p in added), added
    assert not (box.root.parent / "pwn").exists()
