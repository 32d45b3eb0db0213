"""A replayed write keeps the day it was made, told explicitly: ``flush`` never changes
anything on the context (no ambient replay day), so ``ctx.today()`` stays the real today
for every other reader while the replay runs."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

import pytest

from echo_core import hookimpl
from echo_core.context import EchoContext, create_context
from echo_core.gating import GateContext
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.notes_io import append_line
from echo_core.ops.outbox import flush
from echo_core.plugins import create_host
from tests.test_outbox import SwitchablePlugin, SwitchableStorage

MADE = _dt.date(2026, 3, 1)
FLUSHED = _dt.date(2026, 3, 9)


class WatchingGate:
    """A gate that lets everything through and records what it saw of the day."""

    def __init__(self) -> None:
        self.seen: list[tuple[_dt.date | None, _dt.date, dict[str, Any]]] = []

    @hookimpl
    def gate_capture(self, request: CaptureRequest, ctx: Any) -> None:
        assert isinstance(ctx, GateContext)
        self.seen.append((getattr(ctx, "today", None), ctx.echo.today(), dict(vars(ctx.echo))))


@pytest.fixture
def watched(tmp_path: Path) -> tuple[EchoContext, WatchingGate]:
    SwitchableStorage.down = False
    gate = WatchingGate()
    env = {"HOME": str(tmp_path / "home"), "ECHO_CONFIG": str(tmp_path / "none.toml"),
           "ECHO_TODAY": MADE.isoformat()}
    host = create_host(env=env, extra=[("switch_storage", SwitchablePlugin()),
                                       ("watching_gate", gate)])
    ctx = create_context(vault=f"switch://{tmp_path / 'vault'}", state_dir=str(tmp_path / "state"),
                         env=env, host=host)
    init_vault(ctx)
    return ctx, gate


def test_replay_writes_the_queued_day_while_ctx_today_stays_real(
        watched: tuple[EchoContext, WatchingGate], tmp_path: Path) -> None:
    ctx, gate = watched
    SwitchableStorage.down = True
    assert capture(ctx, CaptureRequest(title="Standup", kind="meeting", body="Notes.")).action == "queued"
    assert append_line(ctx, "projects/active/log.md", "- offline line").action == "queued"
    SwitchableStorage.down = False
    ctx.env = {**ctx.env, "ECHO_TODAY": FLUSHED.isoformat()}
    before = dict(vars(ctx))

    result = flush(ctx).data

    assert (result.synced, result.pending, result.needs_attention) == (2, 0, 0)
    vault = tmp_path / "vault"
    note = vault / f"meetings/{MADE.isoformat()}-standup.md"
    assert note.is_file(), "a dated capture replays under the day it was made"
    assert f"date: {MADE.isoformat()}" in note.read_text()
    daily = (vault / f"journal/daily/{MADE.isoformat()}.md").read_text()
    assert "created meeting" in daily
    assert not (vault / f"journal/daily/{FLUSHED.isoformat()}.md").exists()
    # the gate was told the queued day, while the context kept the real one
    [(gate_day, ctx_day, during)] = gate.seen
    assert ctx_day == FLUSHED, "ctx.today() changed while the replay ran"
    # no attribute the context had before the flush was changed during the replay
    assert {k: v for k, v in during.items() if k in before} == before
    assert gate_day == MADE
    assert ctx.today() == FLUSHED and not hasattr(ctx, "replay_day")


def test_replay_that_meets_an_outage_stays_queued_and_is_not_queued_again(
        watched: tuple[EchoContext, WatchingGate]) -> None:
    ctx, _gate = watched
    SwitchableStorage.down = True
    capture(ctx, CaptureRequest(title="Kiwi", kind="concept", body="fruit"))
    assert len(ctx.queue.pending()) == 1
    original = SwitchableStorage.lock
    calls: list[int] = []

    def down_at_lock(self: SwitchableStorage, timeout: float = 10.0) -> Any:
        calls.append(1)
        if len(calls) == 2:  # flush's own check took the first; the replayed capture the second
            SwitchableStorage.down = True  # the vault goes away as the replay starts writing
        return original(self, timeout)

    SwitchableStorage.down = False
    try:
        SwitchableStorage.lock = down_at_lock  # type: ignore[method-assign]
        result = flush(ctx).data
    finally:
        SwitchableStorage.lock = original  # type: ignore[method-assign]
        SwitchableStorage.down = False
    assert (result.synced, result.pending) == (0, 1)
    assert result.items[0].detail == "vault went away during the flush"
    assert len(ctx.queue.pending()) == 1, "the replay raised instead of queueing a second record"
