"""``echo_reflect(proposals, apply)`` over MCP (SPEC §6.2): a preview changes nothing,
apply routes through capture and reports gated items as data (not an error), an invalid
proposal is an error naming the field, a second apply changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client

from tests.capture_kit import VaultBox
from tests.mcp_kit import FULL_TOOLS, call, make_server, seeded_box, with_client

PROPOSALS = [
    {"title": "Use pytest, not unittest", "kind": "semantic",
     "body": "The operator prefers pytest.", "confidence": 0.9},
    {"title": "Ada Lovelase", "kind": "person", "body": "Met at the demo.",
     "confidence": 0.9},
    {"title": "Try a faster linter", "body": "Idea from the review.", "confidence": 0.3},
]


def _classes(data: dict[str, Any]) -> list[str]:
    return [item["classification"] for item in data["items"]]


def test_echo_reflect_is_a_full_profile_tool() -> None:
    assert "echo_reflect" in FULL_TOOLS


def test_echo_reflect_preview_apply_and_again(tmp_path: Path) -> None:
    box: VaultBox = seeded_box(tmp_path)
    server = make_server(box)

    async def body(client: Client) -> None:
        before = box.tree_digest()
        error, data, text = await call(client, "echo_reflect", proposals=PROPOSALS)
        assert not error and data["action"] == "dry-run"
        assert _classes(data) == ["create", "gated", "inbox"]
        assert "apply: true" in text
        assert box.tree_digest() == before

        error, data, text = await call(client, "echo_reflect", proposals=PROPOSALS, apply=True)
        assert not error and data["ok"] is True and data["action"] == "reflected"
        assert _classes(data) == ["created", "gated", "inbox"]
        gated = data["items"][1]
        assert gated["candidates"][0]["slug"] == "ada-lovelace"
        assert (box.vault / "_agent/memory/semantic/use-pytest-not-unittest.md").exists()
        after = box.tree_digest()

        error, data, _ = await call(client, "echo_reflect", proposals=PROPOSALS, apply=True)
        assert not error and _classes(data) == ["unchanged", "gated", "unchanged"]
        assert box.tree_digest() == after

    try:
        with_client(server, body)
    finally:
        server.runner.close()


def test_echo_reflect_invalid_proposal_is_an_error_naming_the_field(tmp_path: Path) -> None:
    box: VaultBox = seeded_box(tmp_path)
    server = make_server(box)

    async def body(client: Client) -> None:
        before = box.tree_digest()
        bad = [PROPOSALS[0], {**PROPOSALS[2], "confidence": 7}]
        error, _, text = await call(client, "echo_reflect", proposals=bad, apply=True)
        assert error and "proposals[1].confidence" in text
        error, _, text = await call(client, "echo_reflect",
                                    proposals=[{**PROPOSALS[0], "kind": "spaceship"}],
                                    apply=True)
        assert error and "proposals[0].kind" in text
        error, _, text = await call(client, "echo_reflect", proposals=PROPOSALS,
                                    transcript="/etc/passwd")
        assert error and "transcript" in text
        assert box.tree_digest() == before

    try:
        with_client(server, body)
    finally:
        server.runner.close()
