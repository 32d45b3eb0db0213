"""A flush against a flaky vault server goes on past a write that fails (SPEC §5.4): the
writes queued for other notes land, later writes for the failing note are held back and
land in order at the next flush, each exactly once; a server that is wholly unreachable
still stops the flush at once."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from echo_core.context import EchoContext
from echo_core.errors import EditedMeanwhile
from echo_core.models import CaptureRequest
from echo_core.ops import outbox
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.notes_io import append_line, put_note
from echo_core.ops.outbox import FlushResult, flush
from plugins.queue_outbox.outbox import OutboxQueue
from tests.obsidian_fake import FakeObsidian
from tests.obsidian_kit import KEY, obsidian_fake  # noqa: F401 - fixture
from tests.outbox_kit import make_obsidian_ctx, outbox_env  # noqa: F401 - fixture env


@pytest.fixture
def ctx(obsidian_fake: FakeObsidian, tmp_path: Path,  # noqa: F811
        env: dict[str, str]) -> EchoContext:
    context = make_obsidian_ctx(tmp_path, env, obsidian_fake.base_url, KEY)
    init_vault(context)
    return context


def queued_while_down(fake: FakeObsidian, *writes: Callable[[], Any]) -> list[str]:
    """Run ``writes`` with the server refusing connections; the outbox ids they got."""
    fake.refuse()
    envelopes = [write() for write in writes]
    fake.resume()
    assert [e.action for e in envelopes] == ["queued"] * len(writes)
    return [e.data.queued_id for e in envelopes]


def failing(fake: FakeObsidian, path: str) -> None:
    """Every request for the note ``path`` answers 503 (the server itself stays up)."""
    fake.inject("status", path=f"/vault/{path}", times=10_000, status=503)


def outcomes(result: FlushResult) -> dict[str, str]:
    """Record id -> ``synced`` / ``failed`` / ``held back`` / ``needs_attention``."""
    return {item.id: ("held back" if item.held_back else "failed")
            if item.outcome == "pending" else item.outcome for item in result.items}


def waiting(ctx: EchoContext) -> list[str]:
    """The ids of the records still in the outbox, oldest first."""
    return [str(record["id"]) for record in OutboxQueue(str(ctx.state_dir)).pending()]


def text(ctx: EchoContext, path: str) -> str | None:
    storage = ctx.vault.storage
    return storage.read(path) if storage.exists(path) else None


def test_a_write_that_keeps_failing_on_one_note_does_not_stop_writes_to_other_notes(
        ctx: EchoContext, obsidian_fake: FakeObsidian) -> None:  # noqa: F811
    ids = queued_while_down(
        obsidian_fake,
        lambda: append_line(ctx, "notes/a.md", "- a1"),
        lambda: capture(ctx, CaptureRequest(title="call the bank")),  # an inbox line
        lambda: append_line(ctx, "notes/b.md", "- b1"),
        lambda: put_note(ctx, "notes/c.md", "# C\n"))
    failing(obsidian_fake, "notes/a.md")
    for _ in range(2):  # the failing note fails again at the next flush: the rest stays landed
        result = flush(ctx)
        assert outcomes(result.data)[ids[0]] == "failed"
        assert (result.data.failed, result.data.held_back, result.data.reachable) == (1, 0, True)
        assert "1 failed, 0 held back" in result.message
    obsidian_fake.faults.clear()
    assert text(ctx, "notes/b.md") == "- b1\n" and text(ctx, "notes/c.md") == "# C\n"
    assert "call the bank" in (text(ctx, "inbox/captures/inbox.md") or "")
    assert text(ctx, "notes/a.md") is None
    assert waiting(ctx) == [ids[0]]


def test_a_later_write_to_the_failing_note_is_held_back_and_lands_in_order_next_flush(
        ctx: EchoContext, obsidian_fake: FakeObsidian) -> None:  # noqa: F811
    put_a, append_b, append_a = queued_while_down(
        obsidian_fake,
        lambda: put_note(ctx, "notes/a.md", "# A\n"),
        lambda: append_line(ctx, "notes/b.md", "- b1"),
        lambda: append_line(ctx, "notes/a.md", "- a2"))  # lost if it ran before the put
    failing(obsidian_fake, "notes/a.md")
    first = flush(ctx)
    assert outcomes(first.data) == {put_a: "failed", append_b: "synced", append_a: "held back"}
    assert (first.data.synced, first.data.pending, first.data.failed,
            first.data.held_back) == (1, 2, 1, 1)
    assert first.message.startswith("1 synced, 2 pending (1 failed, 1 held back)")
    obsidian_fake.faults.clear()
    assert text(ctx, "notes/a.md") is None and text(ctx, "notes/b.md") == "- b1\n"
    second = flush(ctx)
    assert outcomes(second.data) == {put_a: "synced", append_a: "synced"}
    assert text(ctx, "notes/a.md") == "# A\n- a2\n"


def test_a_capture_whose_notes_are_not_known_waits_behind_a_failed_write_with_all_after_it(
        ctx: EchoContext, obsidian_fake: FakeObsidian) -> None:  # noqa: F811
    ids = queued_while_down(
        obsidian_fake,
        lambda: append_line(ctx, "notes/a.md", "- a1"),
        lambda: append_line(ctx, "notes/b.md", "- b1"),
        lambda: capture(ctx, CaptureRequest(title="Kiwi", kind="concept", body="See a.")),
        lambda: append_line(ctx, "notes/c.md", "- c1"))
    failing(obsidian_fake, "notes/a.md")
    first = flush(ctx).data
    assert list(outcomes(first).values()) == ["failed", "synced", "held back", "held back"]
    obsidian_fake.faults.clear()
    assert text(ctx, "resources/concepts/kiwi.md") is None and text(ctx, "notes/c.md") is None
    assert list(outcomes(flush(ctx).data)) == [ids[0], ids[2], ids[3]]
    assert "See a." in (text(ctx, "resources/concepts/kiwi.md") or "")


def outbox_lines(ctx: EchoContext) -> list[dict[str, Any]]:
    path = OutboxQueue(str(ctx.state_dir)).path
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_two_flushes_against_a_server_failing_one_note_then_another_land_each_write_once(
        ctx: EchoContext, obsidian_fake: FakeObsidian) -> None:  # noqa: F811
    ids = queued_while_down(
        obsidian_fake,
        lambda: capture(ctx, CaptureRequest(title="Kiwi", kind="concept", body="Ripe fruit.")),
        lambda: put_note(ctx, "notes/a.md", "# A\n"),
        lambda: append_line(ctx, "notes/b.md", "- b1"),
        lambda: append_line(ctx, "notes/a.md", "- a2"),
        lambda: append_line(ctx, "notes/b.md", "- b2"))
    op_ids = {r["id"]: r["op_id"] for r in OutboxQueue(str(ctx.state_dir)).pending()
              if "op_id" in r}
    failing(obsidian_fake, "notes/a.md")
    flush(ctx)
    obsidian_fake.faults.clear()
    failing(obsidian_fake, "notes/b.md")  # the flaky server now fails the other note
    flush(ctx)
    obsidian_fake.faults.clear()
    assert waiting(ctx) == []
    assert text(ctx, "notes/a.md") == "# A\n- a2\n" and text(ctx, "notes/b.md") == "- b1\n- b2\n"
    assert (text(ctx, "resources/concepts/kiwi.md") or "").count("Ripe fruit.") == 1
    posts = [e for e in obsidian_fake.exchanges if e.method == "POST" and "notes/b.md" in e.target]
    assert len(posts) == 2  # each line sent once: nothing replayed twice
    lines = outbox_lines(ctx)
    assert [line["id"] for line in lines if line["kind"] == "record"] == ids  # queued once
    done = [line["id"] for line in lines if line["kind"] == "state"]
    assert sorted(done) == sorted(ids) and all(line["state"] == "done" for line in lines
                                               if line["kind"] == "state")
    assert ctx.entity_names.has_op(op_ids[ids[0]])  # the capture landed under its op id
    assert flush(ctx).data.synced == 0


def test_a_server_gone_during_the_flush_stops_it_at_once(
        ctx: EchoContext, obsidian_fake: FakeObsidian,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [f"notes/{name}.md" for name in "abcde"]
    ids = queued_while_down(obsidian_fake, *[
        (lambda p=p: append_line(ctx, p, "- line")) for p in paths])
    failing(obsidian_fake, "notes/a.md")
    tried: list[str] = []
    real = outbox.REPLAYERS["append"]

    def replay_append(context: Any, args: dict[str, Any], op_id: str, made: Any) -> Any:
        tried.append(args["path"])
        if args["path"] == "notes/c.md":
            obsidian_fake.refuse()  # the server goes away: connection refused from now on
        return real(context, args, op_id, made)

    monkeypatch.setitem(outbox.REPLAYERS, "append", replay_append)
    result = flush(ctx)
    assert tried == paths[:3]  # not one attempt per queued write
    assert outcomes(result.data) == {ids[0]: "failed", ids[1]: "synced", ids[2]: "failed",
                                     ids[3]: "held back", ids[4]: "held back"}
    assert result.ok and not result.data.reachable and "(vault unreachable)" in result.message
    obsidian_fake.resume()
    obsidian_fake.faults.clear()
    assert text(ctx, "notes/b.md") == "- line\n"
    assert waiting(ctx) == [ids[0], *ids[2:]]


def test_a_server_failing_every_write_while_it_answers_stops_the_flush_after_three(
        ctx: EchoContext, obsidian_fake: FakeObsidian,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [f"notes/{name}.md" for name in "abcde"]
    ids = queued_while_down(obsidian_fake, *[
        (lambda p=p: append_line(ctx, p, "- line")) for p in paths])
    for path in paths:
        failing(obsidian_fake, path)
    tried: list[str] = []
    real = outbox.REPLAYERS["append"]

    def replay_append(context: Any, args: dict[str, Any], op_id: str, made: Any) -> Any:
        tried.append(args["path"])
        return real(context, args, op_id, made)

    monkeypatch.setitem(outbox.REPLAYERS, "append", replay_append)
    result = flush(ctx)
    assert tried == paths[:outbox.FAILURES_IN_A_ROW]  # no long run of doomed requests
    assert list(outcomes(result.data).values()) == ["failed"] * 3 + ["held back"] * 2
    assert result.data.reachable and "failed 3 writes in a row" in result.message
    obsidian_fake.faults.clear()
    assert waiting(ctx) == ids


def test_a_write_meeting_a_persons_edit_holds_back_the_later_writes_to_that_note(
        ctx: EchoContext, obsidian_fake: FakeObsidian,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    put_a, append_a, append_b = queued_while_down(
        obsidian_fake,
        lambda: put_note(ctx, "notes/a.md", "# A\n"),
        lambda: append_line(ctx, "notes/a.md", "- a2"),
        lambda: append_line(ctx, "notes/b.md", "- b1"))
    real = outbox.REPLAYERS["put"]

    def edited(*_args: Any) -> Any:
        raise EditedMeanwhile("notes/a.md")

    monkeypatch.setitem(outbox.REPLAYERS, "put", edited)
    first = flush(ctx).data
    assert outcomes(first) == {put_a: "failed", append_a: "held back", append_b: "synced"}
    assert text(ctx, "notes/a.md") is None
    monkeypatch.setitem(outbox.REPLAYERS, "put", real)
    assert list(outcomes(flush(ctx).data).values()) == ["synced", "synced"]
    assert text(ctx, "notes/a.md") == "# A\n- a2\n"
