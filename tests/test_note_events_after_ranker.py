"""``on_note_written`` / ``on_note_deleted`` fire after the core has updated the active
ranker, as the hookspec says (a listener searching the index finds the note it hears
of); the core fired them first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from echo_core import hookimpl
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.recall import recall
from tests.test_ranker_faults_write import FaultyPlugin, make_ctx


class OrderPlugin(FaultyPlugin):
    """The ``faulty`` ranker (no fault) that logs its changes, and a listener logging
    the events, in one order."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []

    def factory(self, tokenizer: Any, state_dir: str) -> Any:
        ranker = super().factory(tokenizer, state_dir)
        upsert, remove, order = ranker.upsert, ranker.remove, self.order

        def logged_upsert(doc: Any) -> None:
            upsert(doc)
            order.append(f"ranker {doc.path}")

        def logged_remove(path: str) -> None:
            remove(path)
            order.append(f"ranker-gone {path}")

        ranker.upsert, ranker.remove = logged_upsert, logged_remove
        return ranker

    @hookimpl
    def on_note_written(self, note: Any, ctx: Any) -> None:
        self.order.append(f"event {note.path}")

    @hookimpl
    def on_note_deleted(self, path: str, ctx: Any) -> None:
        self.order.append(f"event-gone {path}")


def test_listeners_hear_of_a_note_after_the_ranker_has_it(tmp_path: Path) -> None:
    plugin = OrderPlugin()
    ctx = make_ctx(tmp_path, plugin)
    made = capture(ctx, CaptureRequest(title="Ada Lovelace", kind="person", body="Notes."))
    assert made.ok
    path = str(made.data.path)  # type: ignore[union-attr]
    assert recall(ctx, "Ada").ok  # the ranker is built: later writes reach it at once
    plugin.order.clear()
    ctx.vault.write_note(path, (tmp_path / "vault" / path).read_text("utf-8") + "\nMore.\n")
    assert plugin.order == [f"ranker {path}", f"event {path}"]
    plugin.order.clear()
    ctx.vault.delete_note(path)
    assert plugin.order == [f"ranker-gone {path}", f"event-gone {path}"]
