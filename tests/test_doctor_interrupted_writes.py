"""doctor names an interrupted write by what it is: any operation that keeps an intent
(capture, ingest, evolve, restore, resolve) may leave one, not only a capture."""

from __future__ import annotations

from pathlib import Path

from echo_core import invoke
from tests.capture_kit import VaultBox


def test_an_interrupted_write_is_not_called_a_capture(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    ctx = box.ctx()
    intents = ctx.state_dir / "pending-writes"
    intents.mkdir(parents=True, exist_ok=True)
    (intents / "ingest-op.json").write_text("{}", "utf-8")
    checks = invoke(ctx, "doctor", {}).data.checks
    found = [c for c in checks if c.name == "interrupted-writes"]
    assert found and "1 write(s) interrupted part-way" in found[0].detail, found
    assert "capture(s)" not in found[0].detail
