"""load's last-known-good cache (SPEC §4.1, §5.4): a successful load saves what it read;
with the backend unreachable the digest comes from that cache and says so; with no cache
the agent is told to proceed without memory."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from echo_core.ops.load import FROM_CACHE, load
from echo_core.protocols import BackendUnavailable
from echo_core.read_cache import FILE_NAME, FOLDER, ReadCache
from tests.capture_kit import VaultBox
from tests.conftest import run_cli
from tests.test_load import BRIEF_ORDER, PREFS, write_rich_vault

BANNER = FROM_CACHE.format(saved_at="2026-03-01T12:00:00")


@pytest.fixture
def rich(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    write_rich_vault(box)
    return box


def _go_offline(box: VaultBox) -> None:
    box.vault.rename(box.root / "unplugged")


def test_a_successful_load_saves_what_it_read(rich: VaultBox) -> None:
    ctx = rich.ctx()
    assert load(ctx, brief=True).action == "loaded"
    cached = ReadCache(ctx.state_dir / FOLDER).load()
    assert cached is not None and cached.saved_at == "2026-03-01T12:00:00"
    assert cached.notes[PREFS].text == (rich.vault / PREFS).read_text("utf-8")
    assert "_agent/sessions/2026-02-28-1700-recall-index.md" in cached.notes
    assert "_agent/sessions/2026-02-10-0900-older.md" in cached.listings["_agent/sessions"]


def test_an_unreachable_vault_loads_from_the_cache_and_says_so(rich: VaultBox) -> None:
    online = load(rich.ctx(), brief=True)
    _go_offline(rich)
    env = load(rich.ctx(ECHO_TODAY="2026-03-01"), brief=True)
    assert env.ok and env.action == "loaded-from-cache"
    data = env.data
    assert data.digest.startswith(BANNER + "\n\n")
    assert data.from_cache == "2026-03-01T12:00:00" and BANNER in env.message
    assert [s.name for s in data.sections] == ["offline", *BRIEF_ORDER]
    assert data.digest[len(BANNER) + 2:] == online.data.digest
    assert any("backend unavailable" in w for w in env.warnings)
    assert data.chars == len(data.digest) <= data.budget


def test_a_backend_failing_on_reads_also_falls_back_to_the_cache(rich: VaultBox) -> None:
    load(rich.ctx(), brief=True)
    ctx = rich.ctx()

    def down(path: str) -> str:
        raise BackendUnavailable("connection refused")

    ctx.storage.read = down  # type: ignore[method-assign]
    env = load(ctx, brief=True)
    assert env.ok and env.action == "loaded-from-cache"
    assert "(last 10 of 14)" in env.data.digest


def test_the_cached_digest_fits_small_and_full_budgets(rich: VaultBox) -> None:
    load(rich.ctx(), brief=False)
    _go_offline(rich)
    small = load(rich.ctx(ECHO_LOAD_BUDGET="200"), brief=True).data
    assert small.digest.startswith(BANNER) and small.chars <= 200
    full = load(rich.ctx(), brief=False).data
    assert full.digest.startswith(BANNER) and full.chars <= full.budget
    assert "## Full text: current context" in full.digest


def test_what_the_cache_never_saw_is_an_error_section(rich: VaultBox) -> None:
    load(rich.ctx(), brief=True)
    _go_offline(rich)
    env = load(rich.ctx(ECHO_TODAY="2026-03-02"), brief=True)  # tomorrow's daily note
    assert env.ok and env.action == "loaded-from-cache"
    status = {s.name: s.status for s in env.data.sections}
    assert status["agent-log"] == "error" and status["preferences"] == "ok"
    assert "not in the last-known-good cache" in env.data.digest


def test_a_failed_read_keeps_the_previous_cached_text(rich: VaultBox) -> None:
    good = (rich.vault / PREFS).read_text("utf-8")
    load(rich.ctx(), brief=True)
    (rich.vault / PREFS).write_bytes(b"\xff\xfe not utf-8")
    assert "unreadable: preferences" in load(rich.ctx(), brief=True).message
    ctx = rich.ctx()
    cached = ReadCache(ctx.state_dir / FOLDER).load()
    assert cached is not None and cached.notes[PREFS].text == good


def test_no_cache_means_proceed_without_memory(rich: VaultBox) -> None:
    _go_offline(rich)
    env = load(rich.ctx(), brief=True)
    assert not env.ok and env.action == "unreachable"
    assert "vault unreachable; proceed without memory" in env.message


def test_an_unreadable_cache_counts_as_none(rich: VaultBox) -> None:
    ctx = rich.ctx()
    load(ctx, brief=True)
    (ctx.state_dir / FOLDER / FILE_NAME).write_text("{broken", "utf-8")
    _go_offline(rich)
    assert load(rich.ctx(), brief=True).action == "unreachable"


def test_cli_load_offline_prints_the_cached_digest(isolated_env: dict[str, str],
                                                    rich: VaultBox) -> None:
    base = ["--vault", str(rich.vault), "--state-dir", str(rich.root / "cli-state")]
    assert run_cli(["load", "--brief", *base], env=isolated_env).returncode == 0
    _go_offline(rich)
    out = run_cli(["load", "--brief", *base], env=isolated_env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(FROM_CACHE.format(saved_at="2026-03-01T09:30:00"))
    assert "backend unavailable" in out.stderr
    data = json.loads(run_cli(["load", "--brief", "--json", *base], env=isolated_env).stdout)
    assert data["ok"] and data["action"] == "loaded-from-cache"
    assert data["from_cache"] == "2026-03-01T09:30:00"


def test_an_identical_save_is_skipped_and_any_change_is_written(tmp_path: Path) -> None:
    """A session start saving exactly what the cache holds does not rewrite it (20k
    session-log names re-encoded each time); a changed note, listing or failed read, a
    cache replaced by another process, or an hour later, writes again."""
    cache = ReadCache(tmp_path / "read-cache")
    notes: dict[str, str | None] = {"a.md": "A", "gone.md": None}
    listings = {"_agent/sessions": [f"_agent/sessions/s{i}.md" for i in range(50)]}
    assert cache.save(notes, saved_at="t1", listings=listings)
    assert not cache.save(notes, saved_at="t2", listings=listings)
    loaded = cache.load()
    assert loaded is not None and loaded.saved_at == "t1"
    assert cache.save({**notes, "a.md": "B"}, saved_at="t3", listings=listings)
    assert cache.save({**notes, "a.md": "B"}, saved_at="t4",
                      listings={"_agent/sessions": listings["_agent/sessions"][1:]})
    assert cache.save(notes, saved_at="t5", listings=listings, failed=["x.md"])
    assert cache.save(notes, saved_at="t6", listings=listings)
    assert not cache.save(notes, saved_at="t7", listings=listings)
    assert cache.save(notes, saved_at="t8", listings=listings, now=time.time() + 7200)
    text = cache.file.read_text("utf-8")
    cache.file.write_text(text.replace('"t8"', '"t9"'), "utf-8")  # replaced by another
    assert cache.save(notes, saved_at="t10", listings=listings)
    loaded = cache.load()
    assert loaded is not None and loaded.saved_at == "t10"
