"""`doctor` complete (issue 14 item 5, SPEC §5.3): outbox depth, index freshness (the
indexes' ages, the last sweeps, a stale fast sweep warns) and plugin conflicts (one line
per name two plugins take, naming both and which one is used), every line ok / warn /
fail with a fix naming a verb that exists."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import attrs
import pytest

from echo_core import hookimpl
from echo_core.context import create_context
from echo_core.models import Envelope
from echo_core.operations import Operation
from echo_core.ops.doctor import Check, age_text, run_doctor
from echo_core.plugins import create_host
from tests.capture_kit import VaultBox


def checks_of(box: VaultBox, *extra: tuple[str, object], **env: str) -> list[Check]:
    host = create_host(env=box.env(**env), extra=list(extra))
    ctx = create_context(vault=str(box.vault), state_dir=str(box.state), env=box.env(**env),
                         host=host)
    return list(run_doctor(ctx).data.checks)


def named(checks: list[Check], name: str) -> Check:
    [check] = [c for c in checks if c.name == name]
    return check


def test_every_line_is_ok_warn_or_fail_and_each_warning_has_a_fix(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    for check in checks_of(box):
        assert check.status in ("ok", "warn", "fail"), check
        assert check.status == "ok" or check.fix, check


def test_doctor_shows_the_outbox_depth(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert named(checks_of(box), "outbox") == Check("outbox", "ok", "empty")
    queue = box.ctx().queue
    assert queue is not None
    for key in ("k1", "k2"):
        queue.put({"op": "capture", "args": {"title": f"Note {key}"}, "day": "2026-03-01",
                   "idempotency_key": key})
    outbox = named(checks_of(box), "outbox")
    assert (outbox.status, outbox.detail) == ("warn", "2 write(s) waiting")
    assert "`echo-memory flush`" in outbox.fix


def test_index_freshness_gives_the_age_of_both_indexes(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    box.capture("Ada Lovelace", kind="person", body="Wrote the first program.")
    freshness = named(checks_of(box), "index-freshness")
    assert freshness.status == "ok", freshness
    assert re.search(r"recall index updated \d+ s ago", freshness.detail), freshness.detail
    assert re.search(r"entity index updated \d+ s ago", freshness.detail), freshness.detail


def test_index_freshness_without_a_recall_index_says_the_first_recall_builds_it(
        tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    for path in sorted((box.ctx().state_dir / "recall").rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    detail = named(checks_of(box), "index-freshness").detail
    assert "no recall index yet (the first recall builds it)" in detail


def test_index_freshness_on_a_vault_never_swept_says_so(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    freshness = named(checks_of(box), "index-freshness")
    assert freshness.status == "ok", freshness
    assert freshness.detail.endswith("; no fast sweep recorded; no full sweep recorded")


def test_a_fast_sweep_older_than_the_limit_warns_with_the_sweep_verb(tmp_path: Path) -> None:
    from echo_core.ops.fast_sweep import record_sweep

    box = VaultBox(tmp_path).init()
    record_sweep(box.ctx(ECHO_NOW="2026-03-01T09:00:00"), "fast")
    fresh = named(checks_of(box, ECHO_NOW="2026-03-02T09:00:00"), "index-freshness")
    assert fresh.status == "ok", fresh
    assert "last fast sweep 24.0 h ago" in fresh.detail and "no full sweep recorded" in fresh.detail
    stale = named(checks_of(box, ECHO_NOW="2026-03-09T09:00:00"), "index-freshness")
    assert stale.status == "warn"
    assert "last fast sweep 8.0 d ago" in stale.detail
    assert "older than 7 days (ECHO_FAST_SWEEP_DAYS)" in stale.detail
    assert "`echo-memory sweep --fast`" in stale.fix
    relaxed = named(checks_of(box, ECHO_NOW="2026-03-09T09:00:00", ECHO_FAST_SWEEP_DAYS="10"),
                    "index-freshness")
    assert relaxed.status == "ok", relaxed


@pytest.mark.parametrize(("seconds", "text"), [(5, "5 s"), (600, "10 min"), (7200, "2.0 h"),
                                               (3 * 86400, "3.0 d")])
def test_ages_read_as_people_say_them(seconds: float, text: str) -> None:
    assert age_text(seconds) == text


class SameRanker:
    """Registers the ranker name "twin" (two of them clash)."""

    @hookimpl
    def register_rankers(self, register: Any) -> None:
        register("twin", object)


@attrs.frozen
class NoParams:
    """Nothing."""


def _nothing(ctx: Any, params: NoParams) -> Envelope[None]:
    return Envelope(True, "nothing", "nothing done")


class SameOperation:
    """Registers the operation "twin-op" (two of them clash)."""

    @hookimpl
    def register_operations(self, register: Any) -> None:
        register("twin-op", Operation("twin-op", "Do nothing.", "Do nothing.", NoParams,
                                      _nothing, cli=None))


def test_a_plugin_conflict_names_both_plugins_and_which_is_used(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    checks = checks_of(box, ("one", SameRanker()), ("two", SameRanker()),
                       ("first", SameOperation()), ("second", SameOperation()),
                       ECHO_STRICT_PLUGINS="")
    assert named(checks, "plugins").status == "fail"
    conflicts = {c.detail: c for c in checks if c.name == "plugin-conflict"}
    # pluggy calls the plugin added last first: its registration is the one kept
    ranker = ("ranker 'twin' is registered by plugin 'two' and plugin 'one'; in use: neither "
              "(recall and reindex fail until one is disabled)")
    operation = ("operation 'twin-op' is registered by plugin 'second' and plugin 'first'; "
                 "in use: 'second''s (its hook ran first), 'first''s is ignored")
    assert set(conflicts) == {ranker, operation}
    assert {c.status for c in conflicts.values()} == {"warn"}
    assert "ECHO_DISABLE_PLUGINS=one" in conflicts[ranker].fix
    assert "ECHO_DISABLE_PLUGINS=first" in conflicts[operation].fix  # the one ignored
    assert all("`echo-memory plugins`" in c.fix for c in conflicts.values())


def test_no_conflict_line_when_every_name_is_taken_once(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    checks = checks_of(box, ("one", SameRanker()))
    assert [c for c in checks if c.name == "plugin-conflict"] == []
    assert named(checks, "plugins").status == "ok"
