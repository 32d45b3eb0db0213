"""Supersession (SPEC §2.6): ``capture --supersedes`` of a note or a preference line, the
contradiction stop, and ``--ttl`` / ``--expires`` on working memory (SPEC §2.7)."""

from __future__ import annotations

import html as html_text
import re
from pathlib import Path

import pytest

from echo_core.actions import Action
from echo_core.errors import EchoError, ExitCode
from tests.capture_kit import VaultBox, related_targets

PREFS = "_agent/memory/semantic/operator-preferences.md"
OLD = "decisions/2026-03-01-deploy-on-fridays.md"
NEW = "decisions/2026-03-05-no-deploys-on-fridays.md"


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def _with_preferences(box: VaultBox, *lines: str) -> str:
    text = box.read(PREFS).replace("## Fact / Pattern\n",
                                   "## Fact / Pattern\n\n" + "".join(f"{ln}\n" for ln in lines))
    (box.vault / PREFS).write_text(text, encoding="utf-8")
    return text


def _decision_reversed(box: VaultBox) -> tuple[str, str]:
    assert box.capture("Deploy on Fridays", kind="decision", body="We deploy on Fridays.").ok
    before = box.read(OLD)
    env = box.capture("No deploys on Fridays", kind="decision", today="2026-03-05",
                      body="Stopped after the outage.", supersedes="2026-03-01-deploy-on-fridays")
    assert env.ok and env.action == Action.CREATED, env
    assert env.data.superseded == OLD
    return before, box.read(NEW)


def test_superseding_a_note_marks_it_links_both_ways_and_keeps_every_byte(box: VaultBox) -> None:
    before, new = _decision_reversed(box)
    old = box.read(OLD)
    assert old == before.replace(
        "date: 2026-03-01\n",
        "date: 2026-03-01\nsuperseded_by: \"[[2026-03-05-no-deploys-on-fridays]]\"\n"
        "superseded_at: 2026-03-05\n").replace(
        "status: decided\n", "status: superseded\n").replace(
        "## Related\n", "## Related\n- [[2026-03-05-no-deploys-on-fridays]]\n")
    assert new == (
        "---\ntype: decision\nstatus: decided\ncreated: 2026-03-05\nupdated: 2026-03-05\n"
        "tags: [decision]\ndate: 2026-03-05\nsupersedes: \"[[2026-03-01-deploy-on-fridays]]\"\n"
        "---\n# No deploys on Fridays\n\nStopped after the outage.\n\n## Notes\n\n"
        "## Related\n- [[2026-03-01-deploy-on-fridays]]\n")
    assert related_targets(old) == ["2026-03-05-no-deploys-on-fridays"]
    assert box.entity("2026-03-01-deploy-on-fridays").h != ""


def test_superseding_by_title_finds_the_note_and_a_rerun_changes_nothing(box: VaultBox) -> None:
    assert box.capture("Deploy on Fridays", kind="decision", body="We deploy on Fridays.").ok
    first = box.capture("No deploys on Fridays", kind="decision", today="2026-03-05",
                        supersedes="Deploy on Fridays")
    assert first.ok and first.data.superseded == OLD
    old, digest = box.read(OLD), box.tree_digest()
    again = box.capture("No deploys on Fridays", kind="decision", today="2026-03-05",
                        supersedes="Deploy on Fridays")
    assert again.ok and again.action == Action.UNCHANGED
    assert box.read(OLD) == old and box.tree_digest() == digest
    assert box.read(OLD).count("superseded_by") == 1


def test_a_note_superseded_by_another_is_not_superseded_again(box: VaultBox) -> None:
    _decision_reversed(box)
    with pytest.raises(EchoError) as err:
        box.capture("Deploys only on Mondays", kind="decision", today="2026-03-06",
                    supersedes="2026-03-01-deploy-on-fridays")
    assert err.value.code == ExitCode.USAGE
    assert "already superseded by [[2026-03-05-no-deploys-on-fridays]]" in err.value.message
    assert not (box.vault / "decisions/2026-03-06-deploys-only-on-mondays.md").exists()


def test_supersedes_naming_nothing_is_not_found_and_writes_nothing(box: VaultBox) -> None:
    digest = box.tree_digest()
    with pytest.raises(EchoError) as err:
        box.capture("Use Postgres", kind="decision", supersedes="no-such-note")
    assert err.value.code == ExitCode.NOT_FOUND
    assert box.tree_digest() == digest


def test_a_note_cannot_supersede_itself(box: VaultBox) -> None:
    assert box.capture("Kafka", kind="concept", body="A log.").ok
    with pytest.raises(EchoError) as err:
        box.capture("Kafka", kind="concept", body="A broker.", supersedes="kafka")
    assert "cannot supersede itself" in err.value.message


def test_dry_run_says_what_it_would_supersede_and_writes_nothing(box: VaultBox) -> None:
    assert box.capture("Deploy on Fridays", kind="decision").ok
    digest = box.tree_digest()
    env = box.capture("No deploys on Fridays", kind="decision", today="2026-03-05",
                      supersedes="2026-03-01-deploy-on-fridays", dry_run=True)
    assert env.ok and env.action == Action.DRY_RUN_CREATE
    assert f"would mark {OLD} superseded" in env.message
    assert box.tree_digest() == digest


def test_the_gate_does_not_stop_a_capture_on_the_note_it_supersedes(box: VaultBox) -> None:
    assert box.capture("Billing Service", kind="concept").ok
    gated = box.capture("Billing Services", kind="concept")
    assert gated.action == Action.DUPLICATE_GATE  # the typo gate, without supersedes
    env = box.capture("Billing Services", kind="concept", supersedes="billing-service")
    assert env.ok and env.action == Action.CREATED, env


def test_a_preference_line_is_struck_in_place_and_the_new_line_appended(box: VaultBox) -> None:
    before = _with_preferences(box, "- Always use unittest for tests",
                               "- 2026-02-01: Prefer tabs over spaces")
    env = box.capture("Use pytest for tests", kind="semantic",
                      supersedes="always use unittest for tests")
    assert env.ok and env.action == Action.UPDATED and env.data.path == PREFS
    env = box.capture("Prefer spaces over tabs", kind="semantic", today="2026-03-02",
                      body="Four of them.", supersedes="tabs over spaces")
    assert env.ok, env
    text = box.read(PREFS)
    assert text == before.replace(
        "- Always use unittest for tests\n",
        "- ~~Always use unittest for tests~~ (superseded 2026-03-01)\n").replace(
        "- 2026-02-01: Prefer tabs over spaces\n",
        "- ~~2026-02-01: Prefer tabs over spaces~~ (superseded 2026-03-02)\n"
        "- Use pytest for tests\n- 2026-03-02: Prefer spaces over tabs — Four of them.\n"
    ).replace("updated: 2026-03-01", "updated: 2026-03-02")
    # no byte of an old line is lost: each is inside its strike
    assert "~~Always use unittest for tests~~" in text
    assert not (box.vault / "_agent/memory/semantic/use-pytest-for-tests.md").exists()


def test_superseding_a_preference_line_twice_changes_nothing(box: VaultBox) -> None:
    _with_preferences(box, "- Always use unittest for tests")
    assert box.capture("Use pytest", kind="semantic", supersedes="Always use unittest for tests").ok
    digest = box.tree_digest()
    again = box.capture("Use pytest", kind="semantic", supersedes="Always use unittest for tests")
    assert again.ok and again.action == Action.UNCHANGED
    assert box.tree_digest() == digest


def test_a_line_matching_several_preferences_asks_for_the_whole_line(box: VaultBox) -> None:
    _with_preferences(box, "- Use tabs in Go", "- Use tabs in Makefiles")
    digest = box.tree_digest()
    with pytest.raises(EchoError) as err:
        box.capture("Use spaces", kind="semantic", supersedes="use tabs")
    assert err.value.code == ExitCode.USAGE and "matches 2 preference lines" in err.value.message
    assert box.tree_digest() == digest


def test_a_missing_preference_line_is_not_found_listing_the_lines(box: VaultBox) -> None:
    _with_preferences(box, "- Use tabs in Go")
    with pytest.raises(EchoError) as err:
        box.capture("Use spaces", kind="semantic", supersedes="prefer vim")
    assert err.value.code == ExitCode.NOT_FOUND and "'- Use tabs in Go'" in err.value.message


def test_only_a_semantic_capture_supersedes_a_preference_line(box: VaultBox) -> None:
    _with_preferences(box, "- Use tabs in Go")
    with pytest.raises(EchoError) as err:
        box.capture("Use spaces", kind="concept", supersedes="Use tabs in Go")
    assert err.value.code == ExitCode.NOT_FOUND and "kind semantic" in err.value.message


def test_a_contradicting_preference_stops_and_proposes_the_supersession(box: VaultBox) -> None:
    _with_preferences(box, "- Always use unittest for tests")
    digest = box.tree_digest()
    env = box.capture("Never use unittest", kind="semantic", body="pytest only.")
    assert not env.ok and env.action == Action.CONTRADICTION
    assert env.data.contradictions[0]["line"] == "- Always use unittest for tests"
    assert env.data.contradictions[0]["supersedes"] == "Always use unittest for tests"
    assert "--supersedes 'Always use unittest for tests'" in env.message
    assert box.tree_digest() == digest
    forced = box.capture("Never use unittest", kind="semantic", force=True)
    assert forced.ok and forced.action == Action.CREATED


def test_a_contradicting_semantic_note_is_proposed_by_its_slug(box: VaultBox) -> None:
    assert box.capture("Always squash merges", kind="semantic").ok
    env = box.capture("Never squash merges", kind="semantic", dry_run=True)
    assert env.action == Action.DRY_RUN_CONTRADICTION
    assert env.data.contradictions[0]["supersedes"] == "always-squash-merges"
    env = box.capture("Never squash merges", kind="semantic", supersedes="always-squash-merges")
    assert env.ok and env.action == Action.CREATED
    # a superseded note no longer counts as held: the same statement passes now
    env = box.capture("Avoid squash merges", kind="semantic", dry_run=True)
    assert env.action == Action.DRY_RUN_CREATE, env


def test_lines_that_agree_or_are_struck_are_no_contradiction(box: VaultBox) -> None:
    _with_preferences(box, "- ~~Always use unittest~~ (superseded 2026-02-01)",
                      "- Always use pytest")
    env = box.capture("Use pytest with -n 2", kind="semantic")
    assert env.ok and env.action == Action.CREATED
    env = box.capture("Never use unittest", kind="semantic")
    assert env.ok and env.action == Action.CREATED


def test_ttl_and_expires_set_a_working_note_expiry(box: VaultBox) -> None:
    env = box.capture("Scratch plan", kind="working", ttl_days=3)
    assert str(box.frontmatter(env.data.path)["expires"]) == "2026-03-04"
    env = box.capture("Other plan", kind="working", expires="2026-04-01")
    assert str(box.frontmatter(env.data.path)["expires"]) == "2026-04-01"
    default = box.capture("Third plan", kind="working")
    assert str(box.frontmatter(default.data.path)["expires"]) == "2026-03-15"
    renewed = box.capture("Scratch plan", kind="working", today="2026-03-03", ttl_days=10)
    assert renewed.action == Action.UPDATED
    assert str(box.frontmatter(renewed.data.path)["expires"]) == "2026-03-13"


@pytest.mark.parametrize(("fields", "field"), [
    ({"kind": "concept", "ttl_days": 3}, "ttl_days"),
    ({"kind": "working", "ttl_days": 0}, "ttl_days"),
    ({"kind": "working", "ttl_days": 3, "expires": "2026-04-01"}, "ttl_days"),
    ({"kind": "working", "expires": "next week"}, "expires"),
    ({"supersedes": "kafka"}, "kind"),
    ({"kind": "concept", "supersedes": "a\nb"}, "supersedes"),
])
def test_bad_lifecycle_arguments_name_the_field_and_write_nothing(
        box: VaultBox, fields: dict[str, object], field: str) -> None:
    digest = box.tree_digest()
    with pytest.raises(EchoError) as err:
        box.capture("Scratch plan", **fields)
    assert err.value.code == ExitCode.USAGE and err.value.message.startswith(f"{field}:")
    assert box.tree_digest() == digest


def test_a_reflect_proposal_contradicting_a_preference_is_gated_not_written(
        box: VaultBox) -> None:
    from echo_core.ops.session_end import session_end

    _with_preferences(box, "- Always use unittest for tests")
    raw = {"slug": "testing", "log_body": "## Goal\nTests", "reflect": [
        {"title": "Never use unittest", "kind": "semantic", "body": "pytest only.",
         "confidence": 0.9}]}
    env = session_end(box.ctx(ECHO_NOW="2026-03-01T09:30:00"), raw, apply=True)
    outcome = env.data.reflect[0]
    assert outcome.classification == "gated", outcome
    assert not (box.vault / "_agent/memory/semantic/never-use-unittest.md").exists()


def test_a_triaged_item_contradicting_a_preference_is_gated_and_keeps_waiting(
        box: VaultBox) -> None:
    from echo_core.ops.triage import apply_proposals, list_inbox

    _with_preferences(box, "- Always use unittest for tests")
    assert box.capture("never use unittest").ok  # an inbox line
    line = "- 2026-03-01: never use unittest"
    proposals = [{"line": line, "title": "Never use unittest", "kind": "semantic"}]
    preview = apply_proposals(box.ctx(), proposals, apply=False)
    assert [o.classification for o in preview.data.items] == ["gated"]
    applied = apply_proposals(box.ctx(), proposals, apply=True)
    assert [o.classification for o in applied.data.items] == ["gated"]
    assert [i.line for i in list_inbox(box.ctx()).data.items] == [line]


@pytest.mark.parametrize("line", ["Keep builds in C:\\build\\", "Swap ~~old~~ wording"])
def test_a_preference_line_ending_in_a_backslash_or_holding_tildes_stays_one_strike(
        box: VaultBox, line: str) -> None:
    from markdown_it import MarkdownIt

    _with_preferences(box, f"- {line}")
    assert box.capture("New rule", kind="semantic", supersedes=line).ok
    struck = next(ln for ln in box.read(PREFS).splitlines() if "(superseded" in ln)
    html = MarkdownIt("commonmark").enable("strikethrough").render(struck)
    shown = re.fullmatch(r"<ul>\n<li><s>(.*)</s> \(superseded 2026-03-01\)</li>\n</ul>\n", html)
    assert shown is not None and "<s>" not in shown.group(1), html
    assert html_text.unescape(shown.group(1)) == line
    digest = box.tree_digest()
    again = box.capture("New rule", kind="semantic", supersedes=line)
    assert again.ok and again.action == Action.UNCHANGED
    assert box.tree_digest() == digest
