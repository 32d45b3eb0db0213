"""Offline durability end to end on the Obsidian backend (SPEC §5.4): with the REST API
refusing connections, 50 captures queue; after recovery one flush lands each once."""

from __future__ import annotations

from pathlib import Path

from echo_core.context import create_context
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.outbox import flush
from tests.obsidian_fake import FakeObsidian
from tests.obsidian_kit import KEY, obsidian_fake  # noqa: F401 - fixture


def test_fifty_captures_queue_while_obsidian_is_down_and_land_once(
    obsidian_fake: FakeObsidian, tmp_path: Path,  # noqa: F811
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[backends.obsidian]\nkey = \"{KEY}\"\nlock_settle = 0.02\ntimeout = 2.0\n")
    env = {"HOME": str(tmp_path / "home"), "ECHO_CONFIG": str(config), "ECHO_TODAY": "2026-03-01",
           "OBSIDIAN_API_KEY": KEY}
    url = obsidian_fake.base_url.replace("http://", "obsidian+http://")
    ctx = create_context(vault=url, state_dir=str(tmp_path / "state"), env=env)
    init_vault(ctx)
    assert capture(ctx, CaptureRequest(title="Vantage Systems", kind="company", body="Vendor.")).ok
    obsidian_fake.refuse()
    requests = [CaptureRequest(title=f"Topic {n}", kind="concept", body=f"Body {n}.") for n in range(45)]
    requests += [CaptureRequest(title="Vantage Systems", kind="company", body="Renewal in April."),
                 CaptureRequest(title="Vantage Systems Inc", kind="company", body="would-be duplicate"),
                 CaptureRequest(title="call the bank"),
                 CaptureRequest(title="Twin", kind="concept", body="same"),
                 CaptureRequest(title="Twin", kind="concept", body="same")]
    results = [capture(ctx, r) for r in requests]
    assert [r.action for r in results] == ["queued"] * 50
    obsidian_fake.resume()
    outcome = flush(ctx).data
    assert (outcome.synced, outcome.needs_attention, outcome.pending) == (48, 1, 0)  # 49 records: the twins share one
    storage = ctx.vault.storage
    assert storage.read("resources/companies/vantage-systems.md").count("Renewal in April.") == 1
    assert storage.read("resources/concepts/twin.md").count("same") == 1
    assert not storage.exists("resources/companies/vantage-systems-inc.md")
    assert len([p for p in storage.list("resources/concepts") if p.endswith(".md") and "README" not in p]) == 46
    assert flush(ctx).data.synced == 0  # nothing lands twice
