"""A queued capture the duplicate gate stops on replay (SPEC §5.4) is flagged "needs
attention" once, not once per flush or load, and the person who settled it clears it with
``flush --dismiss ID``: the record is marked done without a replay and the outbox file
keeps a line saying so. Everything else queued still replays exactly once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from echo_core.config import state_dir_for
from echo_core.context import EchoContext
from echo_core.errors import EchoError, ExitCode
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.doctor import run_doctor
from echo_core.ops.init import init_vault
from echo_core.ops.load import load
from echo_core.ops.outbox import FlushBusy, FlushResult, flush, flush_lock
from echo_core.ops.outbox_queue import queue_capture
from echo_core.protocols import BackendUnavailable
from plugins.queue_outbox.outbox import OutboxQueue
from tests.outbox_kit import make_ctx, outbox_env  # noqa: F401 - fixture env

REPO = Path(__file__).resolve().parent.parent
GATED = CaptureRequest(title="Grace Hoper", kind="person", body="gated fact one")


@pytest.fixture
def ctx(tmp_path: Path, env: dict[str, str]) -> EchoContext:
    context = make_ctx(tmp_path, env)
    init_vault(context)
    made = capture(context, CaptureRequest(title="Grace Hopper", kind="person", body="x"))
    assert made.action == "created", made.message
    return context


def outbox(tmp_path: Path) -> OutboxQueue:
    vault = tmp_path / "vault"
    return OutboxQueue(str(state_dir_for(str(tmp_path / "state"), f"file:{vault.resolve()}")))


def queue_offline(tmp_path: Path, env: dict[str, str], *requests: CaptureRequest) -> list[str]:
    """Queue ``requests`` as a capture meeting an outage does; their record ids."""
    offline = make_ctx(tmp_path, env)
    ids = []
    for request in requests:
        envelope = queue_capture(offline, request, BackendUnavailable("test outage"))
        assert envelope.action == "queued", envelope.message
        ids.append(envelope.data.queued_id)
    return ids


def occurrences(tmp_path: Path, needle: str) -> int:
    return sum(p.read_text(encoding="utf-8").count(needle)
               for p in (tmp_path / "vault").rglob("*.md"))


def outbox_lines(tmp_path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in
            outbox(tmp_path).path.read_text(encoding="utf-8").splitlines()]


def counts(result: FlushResult) -> tuple[int, int, int]:
    return (result.synced, result.pending, result.needs_attention)


def run_cli(args: list[str], env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from plugins.cli_start import run; run()",
                           *args, "--vault", str(tmp_path / "vault"),
                           "--state-dir", str(tmp_path / "state")],
                          env=env, cwd=REPO, capture_output=True, text=True, timeout=60,
                          check=False)


def test_a_gated_record_is_flagged_once_however_often_flush_and_load_run(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str]) -> None:
    queue_offline(tmp_path, env, GATED)
    assert counts(flush(make_ctx(tmp_path, env)).data) == (0, 0, 1)
    flagged = outbox(tmp_path).path.read_bytes()
    for _ in range(3):
        assert counts(flush(make_ctx(tmp_path, env)).data) == (0, 0, 1)
        assert "1 needs attention" in load(make_ctx(tmp_path, env), brief=True).data.outbox
    assert outbox(tmp_path).path.read_bytes() == flagged, "a state line per flush/load"
    states = [line for line in outbox_lines(tmp_path) if line["kind"] == "state"]
    assert [s["state"] for s in states] == ["needs_attention"]


def test_dismissing_a_settled_gated_record_clears_it_and_keeps_a_state_line(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str]) -> None:
    (rid,) = queue_offline(tmp_path, env, GATED)
    first = flush(make_ctx(tmp_path, env)).data
    assert counts(first) == (0, 0, 1)
    reason = first.items[0].detail
    assert "grace-hopper" in reason
    settled = capture(make_ctx(tmp_path, env), CaptureRequest(
        title="Grace Hoper", kind="person", body="gated fact one", merge_into="grace-hopper"))
    assert settled.action == "updated", settled.message
    assert counts(flush(make_ctx(tmp_path, env)).data) == (0, 0, 1)  # still gated on replay

    dismissed = flush(make_ctx(tmp_path, env), dismiss=[rid])
    assert dismissed.ok and dismissed.message == "0 synced, 0 pending, 0 need attention, 1 dismissed"
    assert (dismissed.data.dismissed, [i.outcome for i in dismissed.data.items]) == (1, ["dismissed"])

    assert counts(flush(make_ctx(tmp_path, env)).data) == (0, 0, 0)
    assert outbox(tmp_path).pending() == []
    loaded = load(make_ctx(tmp_path, env), brief=True).data
    assert loaded.outbox == "flushed: 0 synced, 0 pending, 0 need attention"
    assert "outbox:" not in loaded.digest
    check = next(c for c in run_doctor(make_ctx(tmp_path, env)).data.checks if c.name == "outbox")
    assert (check.status, check.detail) == ("ok", "empty")
    assert occurrences(tmp_path, "gated fact one") == 1, "dismissed, never replayed"
    record, *states = outbox_lines(tmp_path)
    assert (record["kind"], record["id"]) == ("record", rid)  # the record is kept, not deleted
    assert [s["state"] for s in states] == ["needs_attention", "done"]
    audit = str(states[-1]["detail"])
    assert audit.startswith("dismissed 2026-03-01T10:00:00 by `echo-memory flush --dismiss`")
    assert audit.endswith(reason)


def test_dismiss_then_the_rest_replays_exactly_once(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str]) -> None:
    gated, _ = queue_offline(tmp_path, env, GATED, CaptureRequest(
        title="Alan Turing", kind="person", body="lands once"))
    assert counts(flush(make_ctx(tmp_path, env), dismiss=()).data) == (1, 0, 1)
    again = queue_offline(tmp_path, env, CaptureRequest(title="Alan Turing", kind="person",
                                                        body="second fact lands once"))
    result = flush(make_ctx(tmp_path, env), dismiss=[gated]).data
    assert (counts(result), result.dismissed) == ((1, 0, 0), 1)
    assert [i.id for i in result.items if i.outcome == "synced"] == again
    assert counts(flush(make_ctx(tmp_path, env)).data) == (0, 0, 0)
    assert occurrences(tmp_path, "lands once") == 2  # each fact once
    assert occurrences(tmp_path, "gated fact one") == 0


def test_dismiss_checks_every_id_before_dismissing_any(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str]) -> None:
    (gated,) = queue_offline(tmp_path, env, GATED)
    flush(make_ctx(tmp_path, env))
    with pytest.raises(EchoError) as unknown:
        flush(make_ctx(tmp_path, env), dismiss=[gated, "0123456789abcdef"])
    assert unknown.value.code == ExitCode.NOT_FOUND
    assert "Nothing was dismissed" in unknown.value.message
    assert [r["state"] for r in outbox(tmp_path).pending()] == ["needs_attention"]


def test_a_record_still_waiting_for_the_vault_cannot_be_dismissed(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str]) -> None:
    (waiting,) = queue_offline(tmp_path, env, CaptureRequest(
        title="Alan Turing", kind="person", body="waits for the vault"))
    with pytest.raises(EchoError) as refused:
        flush(make_ctx(tmp_path, env), dismiss=[waiting])
    assert refused.value.code == ExitCode.USAGE
    assert [r["id"] for r in outbox(tmp_path).pending()] == [waiting]
    assert counts(flush(make_ctx(tmp_path, env)).data) == (1, 0, 0)
    assert occurrences(tmp_path, "waits for the vault") == 1


def test_dismiss_waits_for_a_flush_in_progress(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str]) -> None:
    (gated,) = queue_offline(tmp_path, env, GATED)
    flush(make_ctx(tmp_path, env))
    other = make_ctx(tmp_path, env)
    with flush_lock(other, 0), pytest.raises(FlushBusy):
        flush(make_ctx(tmp_path, env), wait=0, dismiss=[gated])
    assert [r["state"] for r in outbox(tmp_path).pending()] == ["needs_attention"]


def test_flush_cli_names_the_dismiss_step_and_keeps_its_exit_codes(
        ctx: EchoContext, tmp_path: Path, env: dict[str, str]) -> None:
    (gated,) = queue_offline(tmp_path, env, GATED)
    shown = run_cli(["flush"], env, tmp_path)
    assert shown.returncode == 0, shown
    assert f"`echo-memory flush --dismiss {gated}`" in shown.stdout
    helped = run_cli(["flush", "--help"], env, tmp_path)
    assert "--dismiss ID" in helped.stdout and "needs attention" in helped.stdout

    unknown = run_cli(["flush", "--dismiss", "feedfacefeedface", "--json"], env, tmp_path)
    assert unknown.returncode == 44, unknown
    assert json.loads(unknown.stdout)["error"]["code"] == "not-found"

    cleared = run_cli(["flush", "--dismiss", gated, "--json"], env, tmp_path)
    assert cleared.returncode == 0, cleared
    data = json.loads(cleared.stdout)
    assert (data["dismissed"], data["needs_attention"]) == (1, 0)
    assert [(i["id"], i["outcome"]) for i in data["items"]] == [(gated, "dismissed")]
    after = run_cli(["flush"], env, tmp_path)
    assert after.stdout.strip() == "0 synced, 0 pending, 0 need attention"
