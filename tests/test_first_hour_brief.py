"""Issue 13, what a new user hits in the first hour - the brief, session-end and the agent
log (items 6, 9, 10, 19): preferences captured as semantic memory reach Fact / Pattern;
trimmed sections count truthfully; "sessions logged since" counts sessions after the
scope was set; session-end puts text after a known section under ## Log; the agent log
keeps every real event and doubles none on a replay of the same operation."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from echo_core.entities import EntityStore
from echo_core.models import CaptureRequest
from echo_core.notes import section_body
from echo_core.ops.capture import capture
from echo_core.ops.digest import TRUNCATED, render_digest, sections_text
from echo_core.ops.load import load, read_snapshot
from echo_core.ops.scope import set_scope, show_scope
from echo_core.ops.session_end import session_end
from tests.capture_kit import VaultBox, section
from tests.conftest import run_cli
from tests.test_load import PREFS, write_rich_vault

DAILY = "journal/daily/2026-03-01.md"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def _agent_log(box: VaultBox) -> list[str]:
    return [line for line in section(box.read(DAILY), "Agent Log").splitlines() if line.strip()]


def _end(box: VaultBox, hhmm: str, slug: str, **bundle: Any) -> Any:
    raw = {"slug": slug, "log_body": "## Goal\nwork", **bundle}
    env = session_end(box.ctx(ECHO_NOW=f"2026-03-01T{hhmm[:2]}:{hhmm[2:]}:00"), raw, apply=True)
    assert env.ok, env.message
    return env


# --- item 6: preferences captured as semantic memory reach the brief -------------------

def test_a_semantic_reflection_from_session_end_reaches_fact_pattern(box: VaultBox) -> None:
    _end(box, "0930", "prefs", reflect=[{"title": "Operator prefers pytest", "kind": "semantic",
                                         "body": "Use pytest, never unittest.",
                                         "confidence": 0.9}])
    digest = load(box.ctx(), brief=True).data.digest
    facts = digest.split("## Fact / Pattern\n", 1)[1].split("\n\n", 1)[0]
    assert facts == ("- Operator prefers pytest: Use pytest, never unittest. "
                     "([[operator-prefers-pytest]])")


def test_semantic_captures_are_listed_newest_first_and_superseded_ones_are_not(
        box: VaultBox) -> None:
    assert box.capture("Tabs over spaces", kind="semantic", body="Indent with tabs.",
                       today="2026-02-01").ok
    assert box.capture("Answers in English", kind="semantic", body="Reply in English.",
                       today="2026-02-20").ok
    assert box.capture("Old habit", kind="semantic", body="Was true once.",
                       status="superseded").ok
    digest = load(box.ctx(), brief=True).data.digest
    facts = digest.split("## Fact / Pattern\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert facts == ["- Answers in English: Reply in English. ([[answers-in-english]])",
                     "- Tabs over spaces: Indent with tabs. ([[tabs-over-spaces]])"]
    assert "Old habit" not in digest


def test_the_preferences_notes_own_facts_come_first(box: VaultBox) -> None:
    prefs = box.read(PREFS).replace("## Fact / Pattern\n", "## Fact / Pattern\n\n- Short answers\n")
    (box.vault / PREFS).write_text(prefs, encoding="utf-8")
    assert box.capture("Operator prefers pytest", kind="semantic", body="Use pytest.").ok
    digest = load(box.ctx(), brief=True).data.digest
    assert ("## Fact / Pattern\n- Short answers\n- Operator prefers pytest: Use pytest. "
            "([[operator-prefers-pytest]])") in digest


def test_an_empty_fact_pattern_says_how_a_preference_gets_there(box: VaultBox) -> None:
    digest = load(box.ctx(), brief=True).data.digest
    facts = digest.split("## Fact / Pattern\n", 1)[1].split("\n\n", 1)[0]
    assert "kind semantic" in facts and "--kind semantic" in facts


def test_many_semantic_notes_are_trimmed_last_with_a_count_that_adds_up(box: VaultBox) -> None:
    for i in range(30):
        assert box.capture(f"Preference number {i:02d}", kind="semantic",
                           body=f"Rule {i:02d} " + "x" * 60).ok
    snapshot = read_snapshot(box.ctx())
    full = render_digest(snapshot, brief=True, budget=100_000, full_budget=100_000)
    assert sum(f"Preference number {i:02d}" in sections_text(list(full)) for i in range(30)) == 30
    for budget in range(len(sections_text(list(full))), 300, -50):
        sections = {s.name: s for s in render_digest(snapshot, brief=True, budget=budget,
                                                      full_budget=budget)}
        prefs = sections["preferences"]
        if prefs.status == "truncated":
            break
    shown = prefs.text.count("([[preference-number-")
    hidden = re.search(r"\(truncated\) (\d+) more semantic notes? not shown", prefs.text)
    assert hidden is not None and 0 < shown < 30 and shown + int(hidden.group(1)) == 30
    # the agent log went first: its capture lines are summed up in one fixed line, so
    # nothing of it is left to cut before the semantic notes
    agent_log = sections["agent-log"]
    assert agent_log.status == "truncated" or (
        "captured today: created 30 notes" in agent_log.text
        and agent_log.text.count("\n- ") == 0), agent_log.text


def test_the_offline_brief_still_lists_semantic_notes(box: VaultBox) -> None:
    assert box.capture("Operator prefers pytest", kind="semantic", body="Use pytest.").ok
    load(box.ctx(), brief=True)
    box.vault.rename(box.root / "unplugged")
    env = load(box.ctx(), brief=True)
    assert env.action == "loaded-from-cache"
    assert "- Operator prefers pytest: Use pytest." in env.data.digest


def test_load_and_session_end_help_say_how_preferences_reach_the_brief(box: VaultBox) -> None:
    load_help = run_cli(["load", "--help"], env=box.env()).stdout
    end_help = run_cli(["session-end", "--help"], env=box.env()).stdout
    flat = " ".join(load_help.split())
    assert "Fact / Pattern shows" in flat and "capture of kind semantic" in flat
    assert "session-end reflection of kind semantic" in flat
    assert "kind semantic" in " ".join(end_help.split()) and "Fact / Pattern" in end_help


# --- item 9: trimming counts, sessions since the scope, plurals ------------------------

def test_trimmed_observations_never_say_last_0_and_their_counts_add_up(box: VaultBox) -> None:
    write_rich_vault(box)  # 14 observations, the last 10 shown
    snapshot = read_snapshot(box.ctx())
    full = len(sections_text(list(render_digest(snapshot, brief=True, budget=100_000,
                                                full_budget=100_000))))
    seen: set[int] = set()
    for budget in range(full, 300, -7):
        text = next(s.text for s in render_digest(snapshot, brief=True, budget=budget,
                                                  full_budget=budget) if s.name == "observations")
        assert "last 0" not in text
        shown = text.count("observation-")
        title = re.match(r"## Observations(?: \(last (\d+) of 14\))?\n", text)
        assert title is not None and int(title.group(1) or 0) == shown
        hidden = re.search(r"\(truncated\) (\d+) (?:older )?observations? not shown", text)
        if hidden is not None:
            assert shown + int(hidden.group(1)) == 14, text
        seen.add(shown)
    assert 0 in seen and 10 in seen and len(seen) > 3


def test_one_hidden_observation_is_counted_in_the_singular(box: VaultBox) -> None:
    long = "noticed in detail " * 12
    prefs = box.read(PREFS).replace("## Observations\n", f"## Observations\n\n- 2026-02-01: "
                                    f"first {long}\n- 2026-02-02: second {long}\n")
    (box.vault / PREFS).write_text(prefs, encoding="utf-8")
    snapshot = read_snapshot(box.ctx())
    full = len(sections_text(list(render_digest(snapshot, brief=True, budget=100_000,
                                                full_budget=100_000))))
    for budget in range(full, 200, -1):
        text = next(s.text for s in render_digest(snapshot, brief=True, budget=budget,
                                                  full_budget=budget) if s.name == "observations")
        if TRUNCATED in text:
            break
    assert "## Observations (last 1 of 2)" in text
    assert "(truncated) 1 older observation not shown" in text


def test_sessions_logged_since_count_only_sessions_after_the_scope_was_set(box: VaultBox) -> None:
    for hhmm, slug in (("0900", "one"), ("0910", "two"), ("0920", "three")):
        _end(box, hhmm, slug)
    assert set_scope(box.ctx(ECHO_NOW="2026-03-01T09:30:00"), "Ship recall").ok
    assert "0 sessions logged since" in show_scope(box.ctx()).message
    brief = load(box.ctx(), brief=True).data.digest
    assert "## Scope (updated 2026-03-01 09:30; 0 sessions logged since)" in brief
    _end(box, "1000", "four")
    assert "1 session logged since" in show_scope(box.ctx()).message
    assert "(updated 2026-03-01 09:30; 1 session logged since)" in load(
        box.ctx(), brief=True).data.digest


def test_a_session_end_that_sets_the_scope_is_not_counted_since_it() -> None:
    from echo_core.ops.scope import count_sessions_since

    logs = ["_agent/sessions/2026-03-01-0930-x.md", "_agent/sessions/2026-03-01-0931-y.md",
            "_agent/sessions/2026-02-28-2359-z.md"]
    assert count_sessions_since(logs, "2026-03-01T09:30:00") == 1  # same minute: not after
    assert count_sessions_since(logs, "2026-03-01") == 2  # a date only: that day and later
    assert count_sessions_since(logs, "") == 3


# --- item 10: session-end puts what is not a known section under ## Log -----------------

@pytest.mark.parametrize("body,goal,log", [
    ("## Goal\nShip recall\n\nThen I profiled the index.", "Ship recall",
     "Then I profiled the index."),
    ("## Goal\nShip recall\n\n## Notes\nfree text", "Ship recall", "### Notes\n\nfree text"),
    ("## Goal\nShip recall\n\n# Aside\nnot lost", "Ship recall", "### Aside\n\nnot lost"),
    ("Before\n\n## Log\nexplicit\n\n## Goal\nShip recall", "Ship recall", "Before\n\nexplicit"),
    ("## Goal\nShip recall\n- part two\n\n```\n## in code\n```",
     "Ship recall\n- part two\n\n```\n## in code\n```", None),
])
def test_text_after_a_known_section_goes_under_log(box: VaultBox, body: str, goal: str,
                                                   log: str | None) -> None:
    env = _end(box, "0930", "log-body", log_body=body)
    note = box.read(env.data.session_log)
    assert section_body(note, "## Goal") == goal
    if log is None:
        assert "## Log" not in note
    else:
        assert note.split("\n## Log\n", 1)[1].strip() == log


def test_decisions_as_a_loose_list_stay_in_their_section(box: VaultBox) -> None:
    body = ("## Decisions Made\n- BM25\n\n- porterlite\n  because it is small\n\n"
            "## Open Threads\n- tune k1\n\nAfterwards we had lunch.")
    env = _end(box, "0930", "lists", log_body=body)
    note = box.read(env.data.session_log)
    assert section(note, "Decisions Made").strip() == (
        "- BM25\n\n- porterlite\n  because it is small")
    assert section(note, "Open Threads").strip() == "- tune k1"
    assert section(note, "Log").strip() == "Afterwards we had lunch."


# --- item 19: the agent log keeps every real event, once -------------------------------

def test_two_real_updates_of_one_entity_on_one_day_are_both_logged(box: VaultBox) -> None:
    for body in ("first fact", "second fact", "third fact"):
        assert box.capture("Kappa Engine", kind="concept", body=body).ok
    assert _agent_log(box) == ["- 2026-03-01: created concept [[kappa-engine]]",
                               "- 2026-03-01: updated concept [[kappa-engine]]",
                               "- 2026-03-01: updated concept [[kappa-engine]]"]


def test_two_sessions_with_the_same_agent_log_line_are_both_logged(box: VaultBox) -> None:
    _end(box, "0900", "morning", agent_log_line="worked on recall")
    _end(box, "1400", "afternoon", agent_log_line="worked on recall")
    assert _agent_log(box) == ["- worked on recall", "- worked on recall"]
    _end(box, "1400", "afternoon", agent_log_line="worked on recall")  # the same session again
    assert _agent_log(box) == ["- worked on recall", "- worked on recall"]


def test_a_replayed_capture_operation_is_logged_once(box: VaultBox) -> None:
    assert box.capture("Kappa Engine", kind="concept", body="first").ok
    request = CaptureRequest(title="Kappa Engine", kind="concept", body="second")
    assert capture(box.ctx(), request, op_id="0123456789abcdef").action == "updated"
    assert capture(box.ctx(), request, op_id="0123456789abcdef").action == "unchanged"
    assert _agent_log(box).count("- 2026-03-01: updated concept [[kappa-engine]]") == 1


def test_a_capture_resumed_after_a_crash_is_logged_once(box: VaultBox,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    assert box.capture("Kappa Engine", kind="concept", body="first").ok

    class Killed(BaseException):
        """The process dies here (nothing catches it)."""

    def killed(self: EntityStore, *args: Any, **kwargs: Any) -> None:
        raise Killed("killed before the commit point")

    monkeypatch.setattr(EntityStore, "record", killed)
    request = CaptureRequest(title="Kappa Engine", kind="concept", body="second")
    with pytest.raises(Killed):
        capture(box.ctx(), request, op_id="fedcba9876543210")
    monkeypatch.undo()
    assert list((box.ctx().state_dir / "pending-writes").glob("*.json"))  # the intent is left
    assert capture(box.ctx(), request, op_id="fedcba9876543210").action == "unchanged"
    assert box.capture("Other Thing", kind="concept", body="later").ok
    assert _agent_log(box).count("- 2026-03-01: updated concept [[kappa-engine]]") == 1
    assert "second" in box.read("resources/concepts/kappa-engine.md")
