"""The core keeps the ``bm25`` index current on note writes and deletions (issue 12:
a ranker implements ranking only), end to end through capture, recall and the vault."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import plugins.recall_bm25
import plugins.stem_porterlite
import plugins.storage_fs
from echo_core import hookimpl
from echo_core.context import EchoContext, create_context
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.recall import recall
from echo_core.plugins import create_host
from echo_core.testing.events_contract import EVENT_HOOKS
from echo_core.testing.plugin_contract import CONTRACT_PLUGIN_NAME, hooks_of, strict_host


class OtherRanker:
    """Registers ``other``: a plain ranker that keeps nothing."""

    @hookimpl
    def register_rankers(self, register: Any) -> None:
        class Nothing:
            def upsert(self, doc: Any) -> None: ...
            def remove(self, path: str) -> None: ...
            def search(self, terms: Any, limit: int) -> list[tuple[str, float]]:
                return []

        register("other", lambda tokenizer, state_dir: Nothing())


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
        ("recall_bm25", plugins.recall_bm25), ("other_ranker", OtherRanker())])
    (root / "vault").mkdir(parents=True, exist_ok=True)
    return create_context(vault=str(root / "vault"), state_dir=str(root / "state"), env=env,
                          host=host)


def _indexed(ctx: EchoContext) -> list[str]:
    return ctx.ranker.paths()  # type: ignore[attr-defined, no-any-return]


def test_bm25_implements_ranking_only_no_note_listeners() -> None:
    host = strict_host((CONTRACT_PLUGIN_NAME, plugins.recall_bm25))
    assert hooks_of(host, CONTRACT_PLUGIN_NAME) & set(EVENT_HOOKS) == set()


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
    ctx.vault.delete_note(paths[0])
    assert paths[0] not in _indexed(ctx)
    assert paths[0] not in [h.path for h in recall(ctx, "cobalt migration").data.primary]


def test_a_write_in_another_context_reaches_the_shared_index(tmp_path: Path) -> None:
    writer, reader = _context(tmp_path), _context(tmp_path)
    init_vault(writer)
    assert recall(reader, "cobalt").data.primary == ()
    writer.vault.write_note("notes/a.md", "# A\n\ncobalt\n")
    assert [h.path for h in recall(reader, "cobalt").data.primary] == ["notes/a.md"]


def test_notes_outside_the_corpus_are_dropped(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    ctx.vault.write_note("notes/a.md", "cobalt\n")
    assert _indexed(ctx) == ["notes/a.md"]
    ctx.vault.write_note("templates/a.md", "cobalt\n")
    assert _indexed(ctx) == ["notes/a.md"]


def test_writes_succeed_and_leave_bm25_alone_when_another_ranker_is_configured(
    tmp_path: Path,
) -> None:
    ctx = _context(tmp_path, recall_name="other")
    assert ctx.config.recall == "other"
    ctx.vault.write_note("notes/a.md", "cobalt\n")
    ctx.vault.delete_note("notes/a.md")
    assert not list((tmp_path / "state").rglob("bm25"))
