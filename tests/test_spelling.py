"""Messages name arguments the way their caller types them (issue 13, item 15): the triage
preview said "add --apply" to a model calling ``echo_triage_inbox`` over MCP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from echo_core import CliParam, Operation, param, spell, spelled_for
from echo_core.operations.spelling import current_surface
from tests.mcp_kit import INBOX_TEXT, call, make_server, seeded_box, with_client


@attrs.frozen(kw_only=True)
class _Params:
    merge_into: str = param("", help="Slug to update.")
    confirm: bool = param(False, help="Really do it.", cli=CliParam(flag="--yes"))
    linked: bool = param(True, help="Follow links.", cli=CliParam(flag="--no-linked", negate=True))


_OP: Operation[Any] = Operation("demo", "Demo.", "Demo.", _Params, lambda ctx, p: None)


def test_each_surface_spells_an_argument_its_own_way() -> None:
    assert current_surface() == "core" and spell("apply") == "apply=True"
    with spelled_for("cli", _OP):
        assert current_surface() == "cli"
        assert spell("merge_into", "grace-hopper") == "--merge-into grace-hopper"
        assert spell("merge_into", "two words") == "--merge-into 'two words'"
        assert spell("confirm") == "--yes"  # the declared flag, not the field name
        assert spell("linked", False) == "--no-linked"
        assert spell("apply") == "--apply"  # undeclared: the field's own option
    with spelled_for("mcp", _OP):
        assert spell("merge_into", "grace-hopper") == 'merge_into: "grace-hopper"'
        assert spell("apply") == "apply: true"
    assert current_surface() == "core"


def test_triage_preview_over_mcp_names_the_apply_argument_not_a_cli_flag(tmp_path: Path) -> None:
    server = make_server(seeded_box(tmp_path))
    proposal = {"line": INBOX_TEXT, "title": "Babbage", "kind": "person"}

    async def body(client: Any) -> tuple[str, str]:
        _, _, listed = await call(client, "echo_triage_inbox")
        _, _, preview = await call(client, "echo_triage_inbox", proposals=[proposal])
        return listed, preview

    try:
        listed, preview = with_client(server, body)
    finally:
        server.runner.close()
    assert "--apply" not in preview and "apply: true" in preview, preview
    assert "echo-memory triage apply" not in listed and "echo_triage_inbox" in listed, listed


def test_triage_preview_on_the_cli_still_names_the_flag(tmp_path: Path) -> None:
    from echo_core.ops.triage import apply_proposals
    box = seeded_box(tmp_path)
    with spelled_for("cli", _OP):
        envelope = apply_proposals(box.ctx(), [{"line": INBOX_TEXT, "title": "Babbage",
                                                "kind": "person"}], apply=False)
    assert "run again with --apply to route" in envelope.message


def test_session_end_preview_over_mcp_names_the_apply_argument(tmp_path: Path) -> None:
    server = make_server(seeded_box(tmp_path))

    async def body(client: Any) -> str:
        _, _, text = await call(client, "echo_log_session", slug="demo",
                                log_body="## Goal\nShip it")
        return text

    try:
        text = with_client(server, body)
    finally:
        server.runner.close()
    assert "preview" in text and "apply: true" in text and "--apply" not in text, text
