"""``echo_patch_note`` (SPEC §6.2 patch_note): the MCP face of ``patch`` — an invalid
heading is a not-found error listing the note's real headings; dry runs write nothing; a
second identical append changes nothing; bad arguments name the field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from echo_core.operations import parse_params
from echo_core.verbs.patch_verbs import PATCH
from plugins.transport_mcp.access import plan_for
from plugins.transport_mcp.server import EchoMcpServer
from tests.capture_kit import VaultBox
from tests.mcp_kit import ADA, call, make_server, seeded_box, with_client


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return seeded_box(tmp_path)


@pytest.fixture
def server(box: VaultBox) -> Iterator[EchoMcpServer]:
    built = make_server(box)
    yield built
    built.runner.close()


def test_an_invalid_heading_is_not_found_listing_the_real_headings(
        server: EchoMcpServer, box: VaultBox) -> None:
    before = box.tree_digest()
    err, data, text = with_client(server, lambda c: call(
        c, "echo_patch_note", path=ADA, operation="append", target_type="heading",
        target="Changelog", content="- x"))
    assert err and data["error"]["code"] == "not-found"
    assert "'# Ada Lovelace', '## Notes', '## Related'" in text
    assert "'# Ada Lovelace', '## Notes', '## Related'" in data["error"]["message"]
    assert box.tree_digest() == before


def test_patch_note_appends_once_and_keeps_the_prior_text(server: EchoMcpServer,
                                                          box: VaultBox) -> None:
    before = box.read(ADA)
    arguments = {"path": ADA, "operation": "append", "target_type": "heading",
                 "target": "Notes", "content": "- 2026-03-01: patched over MCP"}
    err, data, _ = with_client(server, lambda c: call(c, "echo_patch_note", **arguments))
    assert not err and data["action"] == "updated" and data["changed"] is True
    assert "+- 2026-03-01: patched over MCP" in data["diff"]
    once = box.read(ADA)
    assert once.startswith(before.split("## Related")[0].rstrip("\n"))
    err, data, _ = with_client(server, lambda c: call(c, "echo_patch_note", **arguments))
    assert not err and data["action"] == "unchanged" and box.read(ADA) == once
    [version] = box.ctx().history.versions(ADA)
    assert box.ctx().history.text(ADA, version) == before


def test_patch_note_dry_run_writes_nothing(server: EchoMcpServer, box: VaultBox) -> None:
    before = box.tree_digest()
    err, data, _ = with_client(server, lambda c: call(
        c, "echo_patch_note", path=ADA, operation="replace", target_type="field",
        target="status", content="archived", dry_run=True))
    assert not err and data["action"] == "dry-run" and "+status: archived" in data["diff"]
    assert box.tree_digest() == before


@pytest.mark.parametrize(("arguments", "field"), [
    ({"operation": "delete", "target_type": "heading", "target": "Notes", "content": "x"},
     "operation"),
    ({"operation": "append", "target_type": "section", "target": "Notes", "content": "x"},
     "target_type"),
    ({"operation": "append", "target_type": "heading", "target": "Notes", "content": ""},
     "content"),
    ({"operation": "append", "target_type": "heading", "content": "x"}, "target"),
    ({"operation": "append", "target_type": "field", "target": "status", "content": "x"},
     "target"),
])
def test_bad_arguments_name_the_field_and_write_nothing(
        server: EchoMcpServer, box: VaultBox, arguments: dict[str, object],
        field: str) -> None:
    before = box.tree_digest()
    err, data, text = with_client(server, lambda c: call(c, "echo_patch_note", path=ADA,
                                                         **arguments))
    assert err and data["error"]["code"] == "usage" and field in text
    assert box.tree_digest() == before


@pytest.mark.parametrize(("dry_run", "plan"), [(False, ("write", ADA)), (True, ("read", None))])
def test_a_patch_locks_its_note_unless_it_is_a_dry_run(dry_run: bool,
                                                       plan: tuple[str, str | None]) -> None:
    params = parse_params(PATCH.params, {"path": "./" + ADA, "operation": "append",
                                         "target_type": "heading", "target": "Notes",
                                         "content": "x", "dry_run": dry_run}, surface="mcp")
    planned = plan_for(PATCH, params)
    assert (planned.access, planned.lock_key) == plan
