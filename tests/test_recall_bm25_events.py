"""recall_bm25 keeps its index current from note events (DESIGN §2), end to end through
the core's capture and recall operations."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import plugins.recall_bm25
import plugins.stem_porterlite
import plugins.storage_fs
from echo_core.context import EchoContext, create_context
from echo_core.models import CaptureRequest, Note
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.recall import recall
from echo_core.plugins import create_host
from echo_core.testing import EventsContract


def _context(root: Path, recall_name: str = "bm25") -> EchoContext:
    home = root / "home"
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_DATA_HOME": str(home / ".local/share"),
           "XDG_STATE_HOME": str(home / ".local/state"), "ECHO_TODAY": "2026-03-01",
           "ECHO_STRICT_PLUGINS": "1"}
    if recall_name != "bm25":
        config = home / ".config" / "echo-memory"
        config.mkdir(parents=True)
        (config / "config.toml").write_text(f'recall = "{recall_name}"\n')
    host = create_host(load_entry_points=False, strict=True, env=env, extra=[
        ("storage_fs", plugins.storage_fs), ("stem_porterlite", plugins.stem_porterlite),
        ("recall_bm25", plugins.recall_bm25)])
    (root / "vault").mkdir(parents=True, exist_ok=True)
    return create_context(vault=str(root / "vault"), state_dir=str(root / "state"), env=env,
                          host=host)


class TestRecallBm25Events(EventsContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.recall_bm25

    @pytest.fixture
    def event_context(self, tmp_path: Path) -> EchoContext:
        return _context(tmp_path)

    @pytest.fixture
    def event_observer(self, event_context: EchoContext) -> Callable[[], Any]:
        return lambda: event_context.ranker.paths()  # type: ignore[attr-defined]


def test_a_captured_note_is_found_without_a_rebuild(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    init_vault(ctx)
    capture(ctx, CaptureRequest(title="Harbor Registry", kind="concept",
                                body="Container images live in harbor."))
    assert recall(ctx, "harbor").data.rebuilt_index
    env = capture(ctx, CaptureRequest(title="Cobalt Migration", kind="project",
                                      body="Moving cobalt next week."))
    assert env.ok
    found = recall(ctx, "cobalt migration")
    assert not found.data.rebuilt_index
    paths = [hit.path for hit in found.data.primary]
    assert paths and paths[0].endswith("cobalt-migration.md"), paths
    ctx.host.hook.on_note_deleted(path=paths[0], ctx=ctx)
    assert paths[0] not in [h.path for h in recall(ctx, "cobalt migration").data.primary]


def test_notes_outside_the_corpus_are_dropped(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    ranker = ctx.ranker
    note = Note(path="notes/a.md", text="cobalt", body="cobalt")
    ctx.host.hook.on_note_written(note=note, ctx=ctx)
    assert ranker.paths() == ["notes/a.md"]  # type: ignore[attr-defined]
    moved = Note(path="templates/a.md", text="cobalt", body="cobalt")
    ctx.host.hook.on_note_written(note=moved, ctx=ctx)
    assert ranker.paths() == ["notes/a.md"]  # type: ignore[attr-defined]


def test_events_are_ignored_when_another_ranker_is_configured(tmp_path: Path) -> None:
    ctx = _context(tmp_path, recall_name="other")
    assert ctx.config.recall == "other"
    note = Note(path="notes/a.md", text="cobalt", body="cobalt")
    ctx.host.hook.on_note_written(note=note, ctx=ctx)
    ctx.host.hook.on_note_deleted(path="notes/a.md", ctx=ctx)
    assert not (tmp_path / "state").exists() or not list((tmp_path / "state").rglob("bm25"))
    plugins.recall_bm25.on_note_written(note=note, ctx=None)  # no context: nothing to do
