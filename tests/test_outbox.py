"""The offline outbox (SPEC §5.4): writes queue while the vault is down and replay once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import plugins.queue_outbox
from echo_core import hookimpl
from echo_core.context import EchoContext, create_context
from echo_core.entities import EntityStore
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.notes_io import append_line, put_note, set_frontmatter
from echo_core.ops.outbox import flush
from echo_core.plugins import create_host
from echo_core.protocols import BackendUnavailable
from echo_core.testing import PluginContract, QueueContract
from plugins.queue_outbox.outbox import OutboxQueue
from plugins.storage_fs.folder_storage import FolderStorage


class TestOutboxQueue(QueueContract):
    @pytest.fixture
    def queue(self, tmp_path: Path) -> OutboxQueue:
        return OutboxQueue(str(tmp_path))


class TestQueueOutboxPlugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> Any:
        return plugins.queue_outbox

    @pytest.fixture
    def plugin_name(self) -> str:
        return "queue_outbox"


class SwitchableStorage(FolderStorage):
    """A folder vault that behaves as unreachable while ``down`` is set."""

    down = False

    def __getattribute__(self, name: str) -> Any:
        if name in {"read", "read_many", "write", "write_unless_changed", "append_line", "exists", "delete", "list",
                    "stat", "lock", "ping"} and type(self).down:
            def unreachable(*args: Any, **kwargs: Any) -> Any:
                raise BackendUnavailable("connection refused (test outage)")
            return unreachable
        return super().__getattribute__(name)


class SwitchablePlugin:
    @hookimpl
    def register_storage(self, register: Any) -> None:
        register("switch", lambda url, options: SwitchableStorage(url.split("://", 1)[1]))


@pytest.fixture
def ctx(tmp_path: Path) -> EchoContext:
    SwitchableStorage.down = False
    env = {"HOME": str(tmp_path / "home"), "ECHO_CONFIG": str(tmp_path / "none.toml"),
           "ECHO_TODAY": "2026-03-01"}
    host = create_host(env=env, extra=[("switch_storage", SwitchablePlugin())])
    context = create_context(vault=f"switch://{tmp_path / 'vault'}", state_dir=str(tmp_path / "state"),
                             env=env, host=host)
    init_vault(context)
    return context


def entity_notes(ctx: EchoContext) -> list[str]:
    return sorted(e.path for e in EntityStore(ctx.storage).load().entities.values()
                  if not e.path.startswith("_agent/"))


def test_fifty_offline_captures_queue_then_land_exactly_once(ctx: EchoContext, tmp_path: Path) -> None:
    capture(ctx, CaptureRequest(title="Vantage Systems", kind="company", body="Vendor."))
    SwitchableStorage.down = True
    requests = [CaptureRequest(title=f"Topic {n}", kind="concept", body=f"Body {n}.") for n in range(44)]
    requests += [CaptureRequest(title="Vantage Systems", kind="company", body="Renewal in April."),
                 CaptureRequest(title="Vantage Systems", kind="company", body="New contact: Ada."),
                 CaptureRequest(title="Vantage Systems Inc", kind="company", body="would-be duplicate"),
                 CaptureRequest(title="call the bank"),
                 CaptureRequest(title="Identical Twin", kind="concept", body="same"),
                 CaptureRequest(title="Identical Twin", kind="concept", body="same")]
    assert len(requests) == 50
    results = [capture(ctx, r) for r in requests]
    assert {r.action for r in results} == {"queued"}
    assert len(ctx.queue.pending()) == 49  # the two identical captures share one record
    SwitchableStorage.down = False
    outcome = flush(ctx).data
    assert (outcome.synced, outcome.needs_attention, outcome.pending) == (48, 1, 0)
    flagged = [i for i in outcome.items if i.outcome == "needs_attention"]
    assert "Vantage Systems" in flagged[0].detail
    vault = tmp_path / "vault"
    vantage = (vault / "resources/companies/vantage-systems.md").read_text()
    assert vantage.count("Renewal in April.") == 1 and vantage.count("New contact: Ada.") == 1
    assert (vault / "resources/concepts/identical-twin.md").read_text().count("same") == 1
    assert not (vault / "resources/companies/vantage-systems-inc.md").exists()
    assert (vault / "inbox/captures/inbox.md").read_text().count("call the bank") == 1
    assert len(entity_notes(ctx)) == 1 + 44 + 1
    again = flush(ctx).data  # the flagged one is retried, still gated; nothing lands twice
    assert (again.synced, again.needs_attention) == (0, 1)
    assert vantage == (vault / "resources/companies/vantage-systems.md").read_text()


def test_replayed_capture_keeps_the_day_it_was_made(ctx: EchoContext, tmp_path: Path) -> None:
    capture(ctx, CaptureRequest(title="Kiwi", kind="concept", body="fruit"))
    SwitchableStorage.down = True
    capture(ctx, CaptureRequest(title="Kiwi", kind="concept", body="ripe now"))
    SwitchableStorage.down = False
    ctx.env = {**ctx.env, "ECHO_TODAY": "2026-03-09"}
    flush(ctx)
    assert "- 2026-03-01: ripe now" in (tmp_path / "vault/resources/concepts/kiwi.md").read_text()


def test_raw_writes_queue_and_replay(ctx: EchoContext, tmp_path: Path) -> None:
    SwitchableStorage.down = True
    assert put_note(ctx, "notes/a.md", "---\nstatus: draft\n---\n# A\n").action == "queued"
    assert append_line(ctx, "notes/a.md", "- line one").action == "queued"
    assert set_frontmatter(ctx, "notes/a.md", "status", "final").action == "queued"
    SwitchableStorage.down = False
    assert flush(ctx).data.synced == 3
    assert (tmp_path / "vault/notes/a.md").read_text() == "---\nstatus: final\n---\n# A\n- line one\n"


def test_flush_while_still_down_keeps_everything_queued(ctx: EchoContext) -> None:
    SwitchableStorage.down = True
    capture(ctx, CaptureRequest(title="Offline", kind="concept", body="x"))
    result = flush(ctx).data
    assert (result.synced, result.pending, result.reachable) == (0, 1, False)
    assert len(ctx.queue.pending()) == 1


def test_dry_run_does_not_queue(ctx: EchoContext) -> None:
    SwitchableStorage.down = True
    with pytest.raises(BackendUnavailable):
        capture(ctx, CaptureRequest(title="Offline", kind="concept", dry_run=True))
    assert ctx.queue.pending() == []


def test_torn_last_line_is_ignored(tmp_path: Path) -> None:
    queue = OutboxQueue(str(tmp_path))
    rid = queue.put({"op": "capture", "args": {"title": "A"}})
    with open(tmp_path / "outbox.ndjson", "ab") as handle:
        handle.write(b'{"kind": "record", "id": "torn", "op": "capt')
    assert [r["id"] for r in queue.pending()] == [rid]
    assert json.loads((tmp_path / "outbox.ndjson").read_bytes().split(b"\n")[0])["id"] == rid
