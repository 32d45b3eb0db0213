"""session-end re-run: applying the same bundle again changes nothing - no observation
repeating a proposal's own body, no second agent-log line - whether the first run
completed or failed part-way (the re-run then completes only what was missing)."""

from __future__ import annotations

from typing import Any

import pytest

import echo_core.ops.capture as capture_module
import echo_core.ops.session_end as session_end_module
from echo_core.ops.load import HEARTBEAT_PATH
from echo_core.ops.session_end import session_end
from tests.capture_kit import VaultBox, section
from tests.session_end_kit import (
    PYTEST,
    RENEWAL,
    TANTIVY,
    vantage_box,  # noqa: F401 - fixture box
)

NOW = {"ECHO_NOW": "2026-03-01T09:30:00"}
DAILY = "journal/daily/2026-03-01.md"
PYTEST_NOTE = "_agent/memory/semantic/operator-prefers-pytest.md"
COMPANY_NOTE = "resources/companies/vantage-systems.md"


def bundle(*proposals: dict[str, Any], scope: str | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {"slug": "s1", "log_body": "## Goal\nx", "reflect": list(proposals)}
    if scope is not None:
        raw["scope"] = scope
    return raw


def _contents(box: VaultBox) -> dict[str, bytes]:
    return {p.relative_to(box.vault).as_posix(): p.read_bytes()
            for p in sorted(box.vault.rglob("*")) if p.is_file()}


def _agent_log(box: VaultBox) -> list[str]:
    return [line for line in section(box.read(DAILY), "Agent Log").splitlines() if line]


def test_reapplying_the_same_bundle_changes_nothing(box: VaultBox) -> None:
    raw = bundle(PYTEST, RENEWAL, TANTIVY)
    first = session_end(box.ctx(**NOW), raw, apply=True)
    assert [o.classification for o in first.data.reflect] == ["created", "updated", "inbox"]
    before = _contents(box)
    again = session_end(box.ctx(**NOW), raw, apply=True)
    assert [o.classification for o in again.data.reflect] == ["unchanged"] * 3
    assert _contents(box) == before
    assert "## Observations\n\n" in box.read(PYTEST_NOTE)  # its body not repeated there
    assert box.read(COMPANY_NOTE).count("Renewal is in May.") == 1


def test_the_preview_of_an_applied_bundle_says_unchanged(box: VaultBox) -> None:
    raw = bundle(PYTEST, RENEWAL, TANTIVY)
    session_end(box.ctx(**NOW), raw, apply=True)
    preview = session_end(box.ctx(**NOW), raw, apply=False)
    assert [o.classification for o in preview.data.reflect] == ["unchanged"] * 3


def test_a_rerun_after_a_failure_past_the_reflections_adds_nothing_twice(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = bundle(PYTEST, RENEWAL, scope="Recall is done")
    previous = box.read(HEARTBEAT_PATH)

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("injected failure")

    monkeypatch.setattr(session_end_module, "set_scope", fail)
    with pytest.raises(RuntimeError, match="injected failure"):
        session_end(box.ctx(**NOW), raw, apply=True)
    assert box.read(HEARTBEAT_PATH) == previous and (box.vault / PYTEST_NOTE).is_file()
    landed = (box.read(PYTEST_NOTE), box.read(COMPANY_NOTE), _agent_log(box))
    monkeypatch.undo()
    env = session_end(box.ctx(**NOW), raw, apply=True)
    assert [o.classification for o in env.data.reflect] == ["unchanged", "unchanged"]
    assert (box.read(PYTEST_NOTE), box.read(COMPANY_NOTE), _agent_log(box)) == landed
    assert section(box.read("_agent/context/current-context.md"), "Scope").strip() == (
        "Recall is done")
    assert box.read(HEARTBEAT_PATH).startswith("_agent/sessions/2026-03-01-0930-s1.md @ ")


def test_a_rerun_after_a_failure_between_reflections_completes_the_rest_once(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = bundle(PYTEST, RENEWAL)
    real_capture = capture_module._capture_valid  # what every capture runs, validated

    def fail_on_renewal(ctx: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        if request.title == RENEWAL["title"] and not request.dry_run:
            raise RuntimeError("injected failure")
        return real_capture(ctx, request, *args, **kwargs)

    monkeypatch.setattr(capture_module, "_capture_valid", fail_on_renewal)
    with pytest.raises(RuntimeError, match="injected failure"):
        session_end(box.ctx(**NOW), raw, apply=True)
    monkeypatch.undo()
    assert "Renewal is in May." not in box.read(COMPANY_NOTE)
    env = session_end(box.ctx(**NOW), raw, apply=True)
    assert [o.classification for o in env.data.reflect] == ["unchanged", "updated"]
    assert "## Observations\n\n" in box.read(PYTEST_NOTE)
    assert box.read(COMPANY_NOTE).count("Renewal is in May.") == 1
    log = _agent_log(box)
    assert log == list(dict.fromkeys(log))  # no line twice
    assert sum("operator-prefers-pytest" in line for line in log) == 1
    assert box.read(HEARTBEAT_PATH).startswith("_agent/sessions/2026-03-01-0930-s1.md @ ")
