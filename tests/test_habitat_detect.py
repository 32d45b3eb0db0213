"""Detect (issue 18 items 4, 5): failures distilled from the loom into the pattern
registry, idempotent scans, batches, and ``habitat flag`` routing a turn to a pattern.

The acceptance fixture ``tests/data/habitat/acceptance/2026-03-01.jsonl`` is one day of
the loom with three sessions: ``s-errors`` (three failing tool calls in a row, then a
successful one and a reply), ``s-loop`` (the same ``kubectl rollout status`` four times
with the same answer) and ``s-clean``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from echo_core.errors import EchoError, ExitCode
from plugins.habitat.loom import Loom
from plugins.habitat.paths import habitat_dir, loom_dir
from plugins.habitat.patterns import PATTERNS_FILE, PatternStore, pattern_store
from plugins.habitat.patterns_ops import flag_turn, list_patterns, show_pattern
from plugins.habitat.patterns_scan import scan
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.mcp_kit import call, make_server, with_client

FIXTURE = Path(__file__).parent / "data" / "habitat" / "acceptance"
NOW = "2026-03-01T12:00:00"
STREAK = ("20260301T090003000000-erro0003", "20260301T090004000000-erro0004",
          "20260301T090005000000-erro0005")
LOOP = ("20260301T090011000000-loop0011", "20260301T090012000000-loop0012",
        "20260301T090013000000-loop0013", "20260301T090014000000-loop0014")
ERRORS_PROMPT = "20260301T090002000000-erro0002"
CLEAN_PROMPT = "20260301T090018000000-clea0018"


def seeded(root: Path, fixture: Path = FIXTURE) -> VaultBox:
    """An initialised vault whose habitat loom holds the fixture's day files."""
    box = VaultBox(root).init()
    target = loom_dir(box.ctx())
    target.mkdir(parents=True, exist_ok=True)
    for day in fixture.glob("*.jsonl"):
        shutil.copy(day, target / day.name)
    return box


def ctx_of(box: VaultBox, now: str = NOW) -> Any:
    return box.ctx(ECHO_NOW=now, ECHO_TODAY=now[:10])


def registry_rows(box: VaultBox) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every registry table (what "nothing doubled" is checked on)."""
    import sqlite3

    db = sqlite3.connect(habitat_dir(box.ctx()) / PATTERNS_FILE)
    try:
        return {t: sorted(db.execute(f"SELECT * FROM {t}").fetchall())
                for t in ("patterns", "occurrences", "evidence", "transitions", "batches")}
    finally:
        db.close()


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    return seeded(tmp_path)


def test_two_failing_sessions_and_a_clean_one_give_exactly_two_patterns(box: VaultBox) -> None:
    summary = scan(ctx_of(box))
    assert summary.records == 23 and summary.found == {"error_streak": 1, "stuck_loop": 1}
    patterns = {p.kind: p for p in pattern_store(ctx_of(box)).list()}
    assert set(patterns) == {"error_streak", "stuck_loop"}
    assert patterns["error_streak"].evidence == STREAK
    assert patterns["stuck_loop"].evidence == LOOP
    assert all(p.recurrence == 1 and p.status == "monitoring" for p in patterns.values())
    assert patterns["error_streak"].first_seen == "2026-03-01T09:00:03.000000"
    assert patterns["error_streak"].last_seen == "2026-03-01T09:00:05.000000"
    assert patterns["error_streak"].signature == (
        "error_streak|Bash|modulenotfounderror: no module named <s>")
    assert patterns["stuck_loop"].signature == (
        "stuck_loop|Bash|kubectl rollout status deploy<path> --timeout=#s")


def test_a_second_scan_of_the_same_records_adds_nothing(box: VaultBox) -> None:
    scan(ctx_of(box))
    before = registry_rows(box)
    again = scan(ctx_of(box, "2026-03-01T15:00:00"))
    assert (again.new_patterns, again.new_occurrences, again.new_evidence) == ((), 0, 0)
    assert registry_rows(box) == before


def test_flag_adds_evidence_to_the_pattern_holding_the_turn(box: VaultBox) -> None:
    scan(ctx_of(box))
    env = flag_turn(ctx_of(box), "s-errors", "1", "it should have read pyproject first")
    assert env.ok and env.action == "written" and not env.data.new_pattern
    flag_id = env.data.flag_id
    assert flag_id is not None
    pattern = pattern_store(ctx_of(box)).get(env.data.pattern_id)
    assert pattern is not None and pattern.kind == "error_streak"
    assert pattern.evidence == tuple(sorted((*STREAK, ERRORS_PROMPT, flag_id)))
    assert (pattern.flags, pattern.recurrence, pattern.status) == (1, 2, "actionable")
    flag = [r for r in Loom(loom_dir(ctx_of(box))).records() if r.kind == "flag"]
    assert [(f.id, f.refs, f.parent_id, f.session_id, f.agent_id, f.text) for f in flag] == [
        (flag_id, (ERRORS_PROMPT,), ERRORS_PROMPT, "s-errors", "operator",
         "it should have read pyproject first")]


def test_flag_on_a_turn_no_pattern_holds_opens_a_flagged_pattern(box: VaultBox) -> None:
    scan(ctx_of(box))
    env = flag_turn(ctx_of(box), "s-clean", CLEAN_PROMPT, "wrong docstring style")
    assert env.data.new_pattern
    pattern = pattern_store(ctx_of(box)).get(env.data.pattern_id)
    assert pattern is not None
    assert (pattern.kind, pattern.signature, pattern.status, pattern.severity) == (
        "flagged", "flagged|wrong docstring style", "actionable", "high")
    assert pattern.evidence == (CLEAN_PROMPT, env.data.flag_id)
    assert len(pattern_store(ctx_of(box)).list()) == 3


def test_flagging_the_same_turn_again_doubles_nothing(box: VaultBox) -> None:
    scan(ctx_of(box))
    flag_turn(ctx_of(box), "s-clean", "1", "wrong style")
    rows, records = registry_rows(box), list(Loom(loom_dir(ctx_of(box))).records())
    again = flag_turn(ctx_of(box), "s-clean", "1", "  wrong   style ")
    assert again.action == "unchanged" and again.data.flag_id is None
    assert registry_rows(box) == rows
    assert list(Loom(loom_dir(ctx_of(box))).records()) == records
    rescanned = scan(ctx_of(box))
    assert (rescanned.new_occurrences, rescanned.new_evidence) == (0, 0)


def test_a_flag_record_written_by_other_means_is_routed_by_the_next_scan(box: VaultBox) -> None:
    from plugins.habitat.record import Record

    ctx = ctx_of(box)
    flag = Record.new(ts=ctx.now(), kind="flag", agent_id="operator", session_id="s-loop",
                      text="", parent_id=LOOP[1], refs=(LOOP[1],))
    Loom(loom_dir(ctx)).append([flag])
    summary = scan(ctx)
    assert summary.found["flagged"] == 1
    loop = next(p for p in pattern_store(ctx).list() if p.kind == "stuck_loop")
    assert flag.id in loop.evidence and loop.flags == 1 and loop.status == "actionable"


def test_a_flag_killed_before_it_was_registered_is_registered_by_the_retry(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    import plugins.habitat.patterns_flag as flag_module

    def die(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(flag_module, "route_flag", die)
    with pytest.raises(KeyboardInterrupt):
        flag_turn(ctx_of(box), "s-clean", "1", "slow")
    monkeypatch.undo()
    env = flag_turn(ctx_of(box), "s-clean", "1", "slow")
    assert env.action == "written" and env.data.flag_id is None  # the loom's flag reused
    flags = [r for r in Loom(loom_dir(ctx_of(box))).records() if r.kind == "flag"]
    assert len(flags) == 1 and flags[0].id in env.data.evidence


@pytest.mark.parametrize(("session", "turn", "says"), [
    ("s-nope", "1", "no session 's-nope'"),
    ("s-clean", "2", "the session has 1 prompt(s)"),
    ("s-clean", "0", "the session has 1 prompt(s)"),
    ("s-clean", "20260301T090003000000-erro0003", "no record"),
    ("s-", "1", "a prefix needs 4+ characters"),
    ("s-er", "1", "names several sessions: s-errors, s-errors-2"),
])
def test_a_flag_naming_no_turn_is_not_found(box: VaultBox, session: str, turn: str,
                                            says: str) -> None:
    from plugins.habitat.record import Record

    Loom(loom_dir(ctx_of(box))).append([Record.new(
        ts=ctx_of(box).now(), kind="prompt", agent_id="agent-a", session_id="s-errors-2")])
    with pytest.raises(EchoError) as err:
        flag_turn(ctx_of(box), session, turn)
    assert err.value.code == ExitCode.NOT_FOUND and says in err.value.message
    assert not any(r.kind == "flag" for r in Loom(loom_dir(ctx_of(box))).records())


def test_a_session_prefix_names_the_session(box: VaultBox) -> None:
    env = flag_turn(ctx_of(box), "s-cle", "1", "")
    assert env.data.session_id == "s-clean"
    pattern = pattern_store(ctx_of(box)).get(env.data.pattern_id)
    assert pattern is not None and pattern.signature == f"flagged|{CLEAN_PROMPT}"


def test_moves_follow_the_lifecycle_and_are_kept(box: VaultBox) -> None:
    scan(ctx_of(box))
    loop = next(p for p in pattern_store(ctx_of(box)).list() if p.kind == "stuck_loop")
    with pytest.raises(EchoError) as err:
        show_pattern(ctx_of(box), loop.id, status="fixed")
    assert err.value.code == ExitCode.USAGE and "allowed: actionable, dismissed" in err.value.message
    env = show_pattern(ctx_of(box), loop.id[:6], status="dismissed", note="flaky cluster")
    assert env.data.moved and env.data.pattern.status == "dismissed"
    assert [(t.from_status, t.to_status, t.by, t.note) for t in env.data.transitions] == [
        ("", "monitoring", "habitat", env.data.transitions[0].note),
        ("monitoring", "dismissed", "operator", "flaky cluster")]
    assert [r.id for o in env.data.occurrences for r in o.records] == list(LOOP)
    assert env.data.occurrences[0].records[0].text.startswith("Bash ")


def test_listing_counts_patterns_per_status(box: VaultBox) -> None:
    env = list_patterns(ctx_of(box), scan=True, days=7, status=None)
    assert env.data.counts == {"monitoring": 2, "actionable": 0, "proposed_fix": 0,
                               "fixed": 0, "dismissed": 0}
    only = list_patterns(ctx_of(box), scan=False, days=7, status="actionable")
    assert only.data.patterns == () and only.data.scan is None


def test_a_scan_reads_only_its_window_of_days(box: VaultBox) -> None:
    assert scan(ctx_of(box, "2026-03-09T12:00:00"), days=7).records == 0
    assert scan(ctx_of(box, "2026-03-07T12:00:00"), days=7).records == 23


def test_no_registry_yet_lists_nothing_and_writes_nothing(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert list_patterns(ctx_of(box), scan=False, days=7, status=None).data.patterns == ()
    assert not (habitat_dir(box.ctx()) / PATTERNS_FILE).exists()
    assert PatternStore(tmp_path / "none.sqlite").batches() == []


def test_cli_scan_list_flag_and_batch(box: VaultBox, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    for key, value in box.env(ECHO_NOW=NOW).items():
        monkeypatch.setenv(key, value)
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    done = run_main(["habitat", "patterns", "--scan", *base], capsys, monkeypatch)
    assert done.code == 0, done.err
    assert "found error_streak 1, stuck_loop 1; 2 new pattern(s)" in done.out
    assert f"evidence: {', '.join(STREAK)}" in done.out
    done = run_main(["habitat", "flag", "s-errors", "1", "read", "the", "config", *base],
                    capsys, monkeypatch)
    assert done.code == 0 and "flagged prompt" in done.out, done.err
    done = run_main(["habitat", "batches", "--json", *base], capsys, monkeypatch)
    batches = json.loads(done.out)["batches"]
    assert [(b["id"], b["items"], b["size"], b["kinds"]) for b in batches] == [
        ("b0001", 3, 8, {"error_streak": 1, "flagged": 1, "stuck_loop": 1})]
    done = run_main(["habitat", "batch", "b0001", *base], capsys, monkeypatch)
    assert done.code == 0 and "No module named 'foo'" in done.out
    done = run_main(["habitat", "batch", "b0009", *base], capsys, monkeypatch)
    assert done.code == ExitCode.NOT_FOUND


def test_mcp_flag_and_patterns(box: VaultBox) -> None:
    server = make_server(box, env=box.env(ECHO_NOW=NOW))

    async def body(client: Any) -> None:
        failed, data, _ = await call(client, "echo_habitat_patterns", scan=True)
        assert not failed and len(data["patterns"]) == 2
        failed, data, text = await call(client, "echo_habitat_flag", session="s-loop",
                                        turn="1", note="give up after two polls")
        assert not failed and data["new_pattern"] is False, text
        assert LOOP[0] in data["evidence"] and data["flag_id"] in data["evidence"]
        failed, data, _ = await call(client, "echo_habitat_flag", session="s-x", turn="1")
        assert failed

    try:
        with_client(server, body)
    finally:
        server.runner.close()


def test_every_detect_reference_matches_its_declaration() -> None:
    from plugins.habitat.refs_detect import DETECT_REFS

    assert [ref.mismatch() for ref in DETECT_REFS] == [None] * len(DETECT_REFS)


def test_the_operator_proposes_a_fix_and_reports_its_outcome(box: VaultBox) -> None:
    scan(ctx_of(box))
    streak = next(p for p in pattern_store(ctx_of(box)).list() if p.kind == "error_streak")
    show_pattern(ctx_of(box), streak.id, status="actionable")
    env = show_pattern(ctx_of(box), streak.id, status="proposed_fix",
                       note="depend on foo-client, import foo_client")
    assert (env.data.pattern.status, env.data.pattern.fix) == (
        "proposed_fix", "depend on foo-client, import foo_client")
    env = show_pattern(ctx_of(box), streak.id, status="fixed", note="tests pass")
    assert (env.data.pattern.status, env.data.pattern.fix_outcome) == ("fixed", "tests pass")
    assert [t.to_status for t in env.data.transitions] == [
        "monitoring", "actionable", "proposed_fix", "fixed"]
