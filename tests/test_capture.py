"""capture (SPEC §2.1): create, update, inbox, gate, merge_into, force, dry-run, agent log,
validation and the entity index - checked on the files in the vault, not only the envelope."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import echo_core.entities
from echo_core.entities import JOURNAL_PATH, SNAPSHOT_PATH
from echo_core.errors import EchoError
from echo_core.ops.capture import content_hash
from tests.capture_kit import INIT_NOTES, VaultBox, section
from tests.conftest import REPO, run_cli


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


FIVE_LINE_BODY = ("Met at the Analytical Engine demo\n"
                  "she explained the Bernoulli program\n"
                  "Babbage was there too\n"
                  "they argued about the mill\n"
                  "last line of the update")


# --- create ---------------------------------------------------------------------------

@pytest.mark.parametrize(("kind", "folder", "status", "log_heading"), [
    ("person", "resources/people", "active", "Notes"),
    ("company", "resources/companies", "active", "Notes"),
    ("concept", "resources/concepts", "active", "Notes"),
    ("reference", "resources/references", "active", "Notes"),
    ("project", "projects/active", "active", "Log"),
    ("semantic", "_agent/memory/semantic", "active", "Observations"),
    ("episodic", "_agent/memory/episodic", "active", "Notes"),
    ("skill", "resources/skills", "active", "Notes"),
])
def test_create_writes_a_complete_note_in_the_kind_folder(
    box: VaultBox, kind: str, folder: str, status: str, log_heading: str
) -> None:
    env = box.capture("Orion Telescope", kind=kind, body="First light in March.\nSecond line.")
    path = f"{folder}/orion-telescope.md"
    assert env.ok and env.action == "created" and env.data.path == path
    text = box.read(path)
    fm = box.frontmatter(path)
    assert list(fm)[:5] == ["type", "status", "created", "updated", "tags"]
    assert fm["type"] == kind and fm["status"] == status
    assert fm["created"] == fm["updated"] == "2026-03-01"
    assert fm["tags"] == [kind]
    assert "expires" not in fm
    body = text.split("---\n", 2)[2]
    assert body.startswith("# Orion Telescope\n\nFirst light in March.\nSecond line.\n")
    assert f"\n## {log_heading}\n" in body and body.rstrip().endswith("## Related")
    assert text.endswith("\n") and "\r" not in text


@pytest.mark.parametrize(("kind", "folder", "status"), [
    ("meeting", "meetings", "complete"), ("decision", "decisions", "decided")])
def test_dated_kinds_get_a_date_prefixed_slug(box: VaultBox, kind: str, folder: str,
                                              status: str) -> None:
    today = box.capture("Roadmap Review", kind=kind, body="agenda")
    assert today.data.path == f"{folder}/2026-03-01-roadmap-review.md"
    earlier = box.capture("Budget Review", kind=kind, body="numbers", date="2026-02-20")
    assert earlier.data.path == f"{folder}/2026-02-20-budget-review.md"
    assert earlier.data.slug == "2026-02-20-budget-review"
    for path in (today.data.path, earlier.data.path):
        fm = box.frontmatter(path)
        assert fm["type"] == kind and fm["status"] == status
    assert box.frontmatter(earlier.data.path)["date"] == "2026-02-20"


def test_area_is_created_under_its_domain(box: VaultBox) -> None:
    env = box.capture("Home Network", kind="area", domain="systems", body="router, NAS")
    assert env.data.path == "areas/systems/home-network.md"
    assert box.frontmatter(env.data.path)["type"] == "area"
    assert "\n## Log\n" in box.read(env.data.path)


def test_working_memory_expires_after_fourteen_days(box: VaultBox) -> None:
    env = box.capture("Scratch Pad", kind="working", body="temp")
    assert env.data.path == "_agent/memory/working/scratch-pad.md"
    assert box.frontmatter(env.data.path)["expires"] == "2026-03-15"


def test_working_ttl_env_overrides_the_default(box: VaultBox) -> None:
    env = box.capture("Scratch Pad", kind="working", body="temp",
                      env={"ECHO_WORKING_TTL_DAYS": "3"})
    assert box.frontmatter(env.data.path)["expires"] == "2026-03-04"


def test_create_records_tags_aliases_and_sources(box: VaultBox) -> None:
    env = box.capture("Grace Hopper", kind="person", body="COBOL", tags=("navy", "person"),
                      aliases=("Amazing Grace",), sources=("https://example.org/gh",))
    fm = box.frontmatter(env.data.path)
    assert fm["tags"] == ["person", "navy"]
    assert fm["aliases"] == ["Amazing Grace"]
    assert fm["sources"] == ["https://example.org/gh"]
    assert box.entity("grace-hopper").aliases == ("Amazing Grace",)


def test_create_indexes_the_note_with_the_hash_of_its_final_text(box: VaultBox) -> None:
    env = box.capture("Ada Lovelace", kind="person", body="Mathematician")
    entity = box.index().get("ada-lovelace")
    assert entity is not None
    assert (entity.path, entity.kind, entity.title) == (env.data.path, "person", "Ada Lovelace")
    assert entity.h == content_hash(box.read(env.data.path))


def test_an_unindexed_note_at_its_slug_is_adopted_and_keeps_every_line(box: VaultBox) -> None:
    """SPEC §5.1: a note in a kind's folder is an entity, whoever wrote it — the capture
    lands in it (no ``-2`` duplicate) and the person's own text stays as it was."""
    mine = "# Ada Lovelace\n\nmy own hand-written note\n"
    (box.vault / "resources/people/ada-lovelace.md").write_text(mine)
    env = box.capture("Ada Lovelace", kind="person", body="captured")
    assert env.action == "updated" and env.data.path == "resources/people/ada-lovelace.md"
    text = box.read("resources/people/ada-lovelace.md")
    assert "# Ada Lovelace\n\nmy own hand-written note\n" in text
    assert "captured" in text
    assert set(box.captured()) == {"ada-lovelace"}
    assert not (box.vault / "resources/people/ada-lovelace-2.md").exists()


def test_a_note_at_the_slug_with_another_title_is_not_adopted(box: VaultBox) -> None:
    mine = "# Ada (the ship)\n\nnot the person\n"
    (box.vault / "resources/people/ada-lovelace.md").write_text(mine)
    env = box.capture("Ada Lovelace", kind="person", body="captured")
    assert env.action == "created" and env.data.path == "resources/people/ada-lovelace-2.md"
    assert box.read("resources/people/ada-lovelace.md") == mine


def test_a_slug_taken_by_another_kind_gets_a_unique_suffix(box: VaultBox) -> None:
    box.capture("Grace Hopper", kind="company", body="a company named after her")
    env = box.capture("Grace Hopper", kind="person", body="the admiral")
    assert env.action == "created"
    assert env.data.path == "resources/people/grace-hopper-2.md"
    assert set(box.captured()) == {"grace-hopper", "grace-hopper-2"}


# --- update ---------------------------------------------------------------------------

def test_update_appends_a_dated_bullet_with_the_whole_body_indented(box: VaultBox) -> None:
    box.capture("Ada Lovelace", kind="person", body="Mathematician")
    env = box.capture("Ada Lovelace", kind="person", body=FIVE_LINE_BODY, today="2026-03-05")
    assert env.ok and env.action == "updated" and env.data.path == "resources/people/ada-lovelace.md"
    notes = section(box.read(env.data.path), "Notes")
    assert notes.rstrip("\n").split("\n") == [
        "- 2026-03-05: Met at the Analytical Engine demo",
        "  she explained the Bernoulli program",
        "  Babbage was there too",
        "  they argued about the mill",
        "  last line of the update",
    ]
    assert box.entity_notes() == {"resources/people/ada-lovelace.md"}


def test_update_keeps_blank_lines_and_indentation_of_the_body(box: VaultBox) -> None:
    box.capture("Ada Lovelace", kind="person", body="Mathematician")
    env = box.capture("Ada Lovelace", kind="person", body="Summary\n\n  - nested point\nend")
    assert section(box.read(env.data.path), "Notes").rstrip("\n").split("\n") == [
        "- 2026-03-01: Summary", "", "    - nested point", "  end"]


def test_capturing_the_same_update_twice_leaves_one_bullet(box: VaultBox) -> None:
    box.capture("Ada Lovelace", kind="person", body="Mathematician")
    first = box.capture("Ada Lovelace", kind="person", body=FIVE_LINE_BODY, today="2026-03-05")
    before = box.read(first.data.path)
    again = box.capture("Ada Lovelace", kind="person", body=FIVE_LINE_BODY, today="2026-03-05")
    assert again.ok and again.data.changed is False
    text = box.read(first.data.path)
    assert text == before
    assert text.count("- 2026-03-05: Met at the Analytical Engine demo") == 1
    assert text.count("last line of the update") == 1


def test_update_stamps_updated_and_keeps_created(box: VaultBox) -> None:
    env = box.capture("Ada Lovelace", kind="person", body="Mathematician")
    box.capture("Ada Lovelace", kind="person", body="Later fact", today="2026-03-09")
    fm = box.frontmatter(env.data.path)
    assert fm["created"] == "2026-03-01"
    assert fm["updated"] == "2026-03-09"


def test_update_uses_the_log_heading_of_the_kind(box: VaultBox) -> None:
    env = box.capture("Echo Memory", kind="project", body="start")
    box.capture("Echo Memory", kind="project", body="shipped capture", today="2026-03-02")
    assert section(box.read(env.data.path), "Log").strip() == "- 2026-03-02: shipped capture"


def test_update_with_a_date_uses_it_for_the_bullet(box: VaultBox) -> None:
    env = box.capture("Ada Lovelace", kind="person", body="Mathematician")
    box.capture("Ada Lovelace", kind="person", body="Born", date="1815-12-10")
    assert "- 1815-12-10: Born" in section(box.read(env.data.path), "Notes")


def test_merge_into_counts_a_different_name_and_learns_explicit_aliases(box: VaultBox) -> None:
    created = box.capture("Ada Lovelace", kind="person", body="Mathematician")
    env = box.capture("Ada King", kind="person", body="Countess", merge_into="ada-lovelace")
    assert env.action == "updated" and env.data.path == created.data.path
    # another name, not another spelling: one confirmation for sweep (SPEC §5.5)
    assert env.data.aliases_learned == ()
    assert "aliases" not in box.frontmatter(created.data.path)
    log = next((box.state / "vaults").glob("*/resolve-misses.ndjson")).read_text()
    assert '"event": "merge_into", "mention": "Ada King", "slug": "ada-lovelace"' in log
    env = box.capture("Ada King", kind="person", body="Analyst", merge_into="ada-lovelace",
                      aliases=("Ada King",))
    assert env.data.aliases_learned == ("Ada King",)
    assert box.entity("ada-lovelace").aliases == ("Ada King",)
    # the learned alias now resolves on its own, in any case
    again = box.capture("ada king", kind="person", body="Engines")
    assert again.action == "updated" and again.data.path == created.data.path
    assert box.frontmatter(created.data.path)["aliases"] == ["Ada King"]
    assert box.entity_notes() == {created.data.path}


def test_merge_into_learns_another_spelling_of_the_name_at_once(box: VaultBox) -> None:
    box.capture("Vantage Systems", kind="company", body="vendor")
    env = box.capture("Vantage Systems Inc.", kind="company", body="signed",
                      merge_into="vantage-systems")
    assert env.data.aliases_learned == ("Vantage Systems Inc.",)


@pytest.mark.parametrize("mention", [
    "ada-lovelace", "Ada Lovelace", "ADA LOVELACE", "ada lovelace", "Ada-Lovelace",
    "  Ada   Lovelace ", "ada_lovelace", "Countess of Lovelace", "countess-of-lovelace"])
def test_update_resolves_slug_alias_case_and_hyphen_variants(box: VaultBox, mention: str) -> None:
    created = box.capture("Ada Lovelace", kind="person", body="Mathematician",
                          aliases=("Countess of Lovelace",))
    env = box.capture(mention, kind="person", body="resolved by variant")
    assert env.ok and env.action == "updated" and env.data.path == created.data.path
    assert "- 2026-03-01: resolved by variant" in box.read(created.data.path)
    assert box.entity_notes() == {created.data.path}
    assert len(box.captured()) == 1


def test_update_of_a_hand_edited_crlf_note_keeps_its_bytes(box: VaultBox) -> None:
    env = box.capture("Ada Lovelace", kind="person", body="Mathematician")
    path = box.vault / env.data.path
    edited = path.read_text().replace("status: active", "status: active  # keep me\nrating: 5")
    path.write_bytes(edited.replace("\n", "\r\n").encode())
    box.capture("Ada Lovelace", kind="person", body="first\nsecond", today="2026-03-04")
    raw = path.read_bytes().decode()
    assert raw.count("\r\n") == raw.count("\n"), "a bare LF crept into a CRLF note"
    expected = edited.replace("updated: 2026-03-01", "updated: 2026-03-04").replace(
        "## Notes\n", "## Notes\n- 2026-03-04: first\n  second\n")
    assert raw == expected.replace("\n", "\r\n")


def test_merge_into_with_another_kind_logs_under_the_entity_kind_heading(box: VaultBox) -> None:
    """The update block goes under the log heading of the entity's kind (a project's
    `## Log`), whatever --kind the merging capture named."""
    env = box.capture("Echo Memory", kind="project", body="start")
    out = box.capture("Echo Memory v2", kind="concept", body="merged in",
                      merge_into="echo-memory")
    assert out.action == "updated" and out.data.path == env.data.path
    text = box.read(env.data.path)
    assert "- 2026-03-01: merged in" in section(text, "Log")
    assert "## Notes" not in text


def test_a_capture_retried_with_the_same_body_adds_nothing(box: VaultBox) -> None:
    """A retry (after a timeout) of a capture that created or updated the note: the text
    is there already, so no dated bullet repeats it; a new fact still gets one."""
    assert box.capture("Seq Gadget", kind="concept", body="same body\nsecond line").action == (
        "created")
    note = "resources/concepts/seq-gadget.md"
    created = box.read(note)
    for _ in range(2):
        again = box.capture("Seq Gadget", kind="concept", body="same body\n  second line\n")
        assert again.action == "unchanged" and box.read(note) == created
    assert box.capture("Seq Gadget", kind="concept", body="new fact").action == "updated"
    updated = box.read(note)
    assert box.capture("Seq Gadget", kind="concept", body="new fact").action == "unchanged"
    assert box.read(note) == updated and updated.count("new fact") == 1
    assert box.capture("Seq Gadget", kind="concept", body="same").action == "updated"


# --- inbox ----------------------------------------------------------------------------

def test_capture_without_kind_appends_one_inbox_line_holding_the_whole_body(
        box: VaultBox) -> None:
    env = box.capture("call the bank", body="about the loan\n\n  second line kept  \n- third")
    assert env.ok and env.action == "inbox" and env.data.path == "inbox/captures/inbox.md"
    lines = box.read("inbox/captures/inbox.md").splitlines()
    assert lines[-1] == "- 2026-03-01: call the bank — about the loan / second line kept / - third"
    assert box.entity_notes() == set() and box.captured() == {}


def test_inbox_capture_is_idempotent(box: VaultBox) -> None:
    box.capture("call the bank", body="about the loan")
    before = box.read("inbox/captures/inbox.md")
    again = box.capture("call the bank", body="about the loan")
    assert again.ok and again.data.changed is False
    assert box.read("inbox/captures/inbox.md") == before
    assert before.count("call the bank") == 1


def test_inbox_capture_without_body_has_no_dash(box: VaultBox) -> None:
    box.capture("buy stamps")
    assert box.read("inbox/captures/inbox.md").splitlines()[-1] == "- 2026-03-01: buy stamps"


# --- gate, merge_into, force ----------------------------------------------------------

def test_gate_stops_a_near_duplicate_via_the_cli(isolated_env: dict[str, str],
                                                 tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "b").init()
    box.capture("Vantage Systems", kind="company", body="vendor")
    before = box.tree_digest()
    out = run_cli(["capture", "Vantage Systems Inc", "--kind", "company", "--body", "dup",
                   "--vault", str(box.vault)], env=isolated_env)
    assert out.returncode == 76, out.stderr
    assert "vantage-systems" in out.stdout and "resources/companies/vantage-systems.md" in out.stdout
    assert "--merge-into vantage-systems" in out.stdout and "--force" in out.stdout
    assert box.tree_digest() == before
    assert not (box.vault / "resources/companies/vantage-systems-inc.md").exists()


def test_gate_json_envelope_lists_candidates(isolated_env: dict[str, str], tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "b").init()
    box.capture("Vantage Systems", kind="company", body="vendor")
    out = run_cli(["capture", "Vantage Systems Inc", "-k", "company", "--json",
                   "--vault", str(box.vault)], env=isolated_env)
    assert out.returncode == 76
    data = json.loads(out.stdout)
    assert data["ok"] is False and data["action"] == "duplicate-gate"
    assert [(c["slug"], c["path"]) for c in data["candidates"]] == [
        ("vantage-systems", "resources/companies/vantage-systems.md")]
    assert data["candidates"][0]["score"] >= 0.8
    assert box.entity_notes() == {"resources/companies/vantage-systems.md"}


def test_merge_into_updates_the_named_entity(box: VaultBox) -> None:
    box.capture("Vantage Systems", kind="company", body="vendor")
    env = box.capture("Vantage Systems Inc", kind="company", body="signed the contract",
                      merge_into="vantage-systems")
    assert env.ok and env.action == "updated"
    assert env.data.path == "resources/companies/vantage-systems.md"
    text = box.read(env.data.path)
    assert "- 2026-03-01: signed the contract" in section(text, "Notes")
    assert box.frontmatter(env.data.path)["aliases"] == ["Vantage Systems Inc"]
    assert box.entity_notes() == {"resources/companies/vantage-systems.md"}


def test_merge_into_an_unknown_slug_exits_44_and_writes_nothing(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    box = VaultBox(tmp_path / "b").init()
    box.capture("Vantage Systems", kind="company", body="vendor")
    before = box.tree_digest()
    out = run_cli(["capture", "Vantage Systems Inc", "-k", "company", "--body", "x",
                   "--merge-into", "no-such-company", "--vault", str(box.vault)],
                  env=isolated_env)
    assert out.returncode == 44, (out.stdout, out.stderr)
    assert "no-such-company" in out.stderr
    assert box.tree_digest() == before


def test_force_creates_past_the_gate(box: VaultBox) -> None:
    box.capture("Vantage Systems", kind="company", body="vendor")
    env = box.capture("Vantage Systems Inc", kind="company", body="a different firm", force=True)
    assert env.ok and env.action == "created"
    assert env.data.path == "resources/companies/vantage-systems-inc.md"
    assert box.entity_notes() == {"resources/companies/vantage-systems.md",
                                  "resources/companies/vantage-systems-inc.md"}
    assert "vendor" in box.read("resources/companies/vantage-systems.md")
    assert "a different firm" not in box.read("resources/companies/vantage-systems.md")


def test_force_with_an_existing_title_creates_a_second_note_with_suffix_2(box: VaultBox) -> None:
    """Two different people named John Smith: --force must create, not update the first
    (SPEC §2.2 "`force` creates")."""
    first = box.capture("John Smith", kind="person", body="the plumber")
    original = box.read(first.data.path)
    env = box.capture("John Smith", kind="person", body="the astronomer", force=True)
    assert env.ok and env.action == "created", env
    assert env.data.path == "resources/people/john-smith-2.md"
    assert box.read(first.data.path) == original
    assert "the astronomer" in box.read("resources/people/john-smith-2.md")
    assert set(box.captured()) == {"john-smith", "john-smith-2"}


# --- dry-run --------------------------------------------------------------------------

@pytest.mark.parametrize(("title", "fields", "action", "path"), [
    ("Acme Robotics", {"kind": "company", "body": "new"}, "dry-run:create",
     "resources/companies/acme-robotics.md"),
    ("vantage systems", {"kind": "company", "body": "more"}, "dry-run:update",
     "resources/companies/vantage-systems.md"),
    ("Vantage Systems Ltd", {"kind": "company", "body": "dup"}, "dry-run:duplicate-gate", None),
    ("call the bank", {"body": "loan"}, "dry-run:inbox", "inbox/captures/inbox.md"),
    ("Weekly Sync", {"kind": "meeting", "body": "agenda"}, "dry-run:create",
     "meetings/2026-03-01-weekly-sync.md"),
])
def test_dry_run_writes_nothing_and_reports_the_outcome(
    box: VaultBox, title: str, fields: dict[str, Any], action: str, path: str | None
) -> None:
    box.capture("Vantage Systems", kind="company", body="vendor")
    before = box.tree_digest()
    env = box.capture(title, dry_run=True, **fields)
    assert env.ok and env.action == action
    if path is not None:
        assert env.data.path == path
    if action == "dry-run:duplicate-gate":
        assert env.data.would_gate and env.data.candidates[0]["slug"] == "vantage-systems"
    assert box.tree_digest() == before


def test_dry_run_via_cli_writes_nothing(isolated_env: dict[str, str], tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "b").init()
    before = box.tree_digest()
    out = run_cli(["capture", "Ada Lovelace", "-k", "person", "--body", "x", "--dry-run",
                   "--json", "--vault", str(box.vault)], env=isolated_env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["action"] == "dry-run:create"
    assert box.tree_digest() == before


# --- agent log ------------------------------------------------------------------------

def test_agent_log_records_creates_and_updates_in_the_daily_note(box: VaultBox) -> None:
    assert not (box.vault / "journal/daily/2026-03-01.md").exists()
    box.capture("Ada Lovelace", kind="person", body="Mathematician")
    box.capture("Weekly Sync", kind="meeting", body="agenda")
    daily = box.read("journal/daily/2026-03-01.md")
    assert box.frontmatter("journal/daily/2026-03-01.md")["type"] == "daily"
    assert "# 2026-03-01" in daily
    assert section(daily, "Agent Log").strip().split("\n") == [
        "- 2026-03-01: created person [[ada-lovelace]]",
        "- 2026-03-01: created meeting [[2026-03-01-weekly-sync]]",
    ]
    box.capture("Ada Lovelace", kind="person", body="Later", today="2026-03-02")
    later = box.read("journal/daily/2026-03-02.md")
    assert section(later, "Agent Log").strip() == "- 2026-03-02: updated person [[ada-lovelace]]"
    assert box.read("journal/daily/2026-03-01.md") == daily


def test_agent_log_keeps_a_users_daily_note(box: VaultBox) -> None:
    path = box.vault / "journal/daily/2026-03-01.md"
    path.write_text("# My day\n\nwoke up early\n")
    box.capture("Ada Lovelace", kind="person", body="Mathematician")
    text = path.read_text()
    assert text.startswith("# My day\n\nwoke up early\n")
    assert section(text, "Agent Log").strip() == "- 2026-03-01: created person [[ada-lovelace]]"


def test_inbox_and_unchanged_captures_add_no_agent_log_line(box: VaultBox) -> None:
    box.capture("Ada Lovelace", kind="person", body="Mathematician")
    box.capture("Ada Lovelace", kind="person", body="Analyst")
    daily = box.vault / "journal/daily/2026-03-01.md"
    before = (daily.read_bytes(), daily.stat().st_mtime_ns)
    assert box.capture("Ada Lovelace", kind="person", body="Analyst").data.changed is False
    box.capture("call the bank", body="loan")
    assert (daily.read_bytes(), daily.stat().st_mtime_ns) == before
    assert section(daily.read_text(), "Agent Log").strip().split("\n") == [
        "- 2026-03-01: created person [[ada-lovelace]]",
        "- 2026-03-01: updated person [[ada-lovelace]]",
    ]


# --- validation -----------------------------------------------------------------------

INVALID = [
    ("empty-title", "", {"kind": "person"}, "title"),
    ("blank-title", "   ", {"kind": "person"}, "title"),
    ("multiline-title", "Ada\nLovelace", {"kind": "person"}, "title"),
    ("long-title", "x" * 201, {"kind": "person"}, "title"),
    ("unknown-kind", "Ada", {"kind": "wizard"}, "kind"),
    ("bad-date", "Sync", {"kind": "meeting", "date": "2026-13-01"}, "date"),
    ("not-a-date", "Sync", {"kind": "meeting", "date": "yesterday"}, "date"),
    ("area-no-domain", "Home Network", {"kind": "area"}, "domain"),
    ("area-bad-domain", "Home Network", {"kind": "area", "domain": "garden"}, "domain"),
    ("force-and-merge", "Ada", {"kind": "person", "force": True, "merge_into": "ada"}, "force"),
    ("merge-without-kind", "Ada", {"merge_into": "ada"}, "kind"),
    ("two-word-status", "Ada", {"kind": "person", "status": "very active"}, "status"),
    ("multiline-tag", "Ada", {"kind": "person", "tags": ("a\nb",)}, "tags"),
    ("multiline-alias", "Ada", {"kind": "person", "aliases": ("Ada\nKing",)}, "aliases"),
]


@pytest.mark.parametrize(("title", "fields", "field"), [c[1:] for c in INVALID],
                         ids=[c[0] for c in INVALID])
def test_invalid_capture_is_exit_2_naming_the_field_and_writes_nothing(
    box: VaultBox, title: str, fields: dict[str, Any], field: str
) -> None:
    before = box.tree_digest()
    with pytest.raises(EchoError) as caught:
        box.capture(title, body="x", **fields)
    assert caught.value.code == 2
    assert field in caught.value.message
    assert box.tree_digest() == before


@pytest.mark.parametrize(("args", "field"), [
    (["", "-k", "person"], "title"),
    (["Ada", "-k", "wizard"], "kind"),
    (["Sync", "-k", "meeting", "--date", "2026-02-30"], "date"),
    (["Home Network", "-k", "area"], "domain"),
])
def test_invalid_capture_via_cli_exits_2_naming_the_field(
    isolated_env: dict[str, str], tmp_path: Path, args: list[str], field: str
) -> None:
    box = VaultBox(tmp_path / "b").init()
    before = box.tree_digest()
    out = run_cli(["capture", *args, "--body", "x", "--vault", str(box.vault)], env=isolated_env)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert field in out.stderr
    assert box.tree_digest() == before


def test_capture_into_an_uninitialised_vault_is_exit_78(tmp_path: Path) -> None:
    box = VaultBox(tmp_path)
    with pytest.raises(EchoError) as caught:
        box.capture("Ada Lovelace", kind="person", body="x")
    assert caught.value.code == 78
    assert list(box.vault.iterdir()) == []


# --- the entity index -----------------------------------------------------------------

def _mixed_operations(box: VaultBox) -> None:
    box.capture("Ada Lovelace", kind="person", body="Mathematician")
    box.capture("Charles Babbage", kind="person", body="Worked with Ada Lovelace.")
    box.capture("ada lovelace", kind="person", body="update", today="2026-03-02")
    box.capture("Ada King", kind="person", body="alias", merge_into="ada-lovelace",
                aliases=("Ada King",))
    box.capture("Vantage Systems", kind="company", body="vendor")
    box.capture("Vantage Systems Inc", kind="company", body="gated")
    box.capture("Vantage Systems Inc", kind="company", body="forced", force=True)
    box.capture("Weekly Sync", kind="meeting", body="agenda")
    box.capture("Weekly Sync", kind="meeting", body="agenda", date="2026-02-22")
    box.capture("Home Network", kind="area", domain="systems", body="router")
    box.capture("Scratch Pad", kind="working", body="temp")
    box.capture("Acme Robotics", kind="company", body="dry", dry_run=True)
    box.capture("call the bank", body="loan")


def test_index_has_exactly_one_entry_per_note_after_mixed_operations(box: VaultBox) -> None:
    _mixed_operations(box)
    entities = box.captured()
    paths = [e.path for e in entities.values()]
    assert len(paths) == len(set(paths))
    assert set(paths) == box.entity_notes()
    assert len(entities) == 8
    for entity in box.index().entities.values():  # every entry, init's included
        assert (box.vault / entity.path).is_file(), entity
        assert entity.slug == Path(entity.path).stem
        assert entity.h == content_hash(box.read(entity.path)), entity.slug


def test_index_survives_a_fresh_process(box: VaultBox) -> None:
    _mixed_operations(box)
    code = ("import json, sys\n"
            "from plugins.storage_fs.folder_storage import FolderStorage\n"
            "from echo_core.entities import EntityStore, entity_to_json\n"
            "index = EntityStore(FolderStorage(sys.argv[1])).load()\n"
            "print(json.dumps({s: entity_to_json(e) for s, e in index.entities.items()}))\n")
    out = subprocess.run([sys.executable, "-c", code, str(box.vault)], capture_output=True,
                         check=False, text=True, cwd=REPO, timeout=60, env=box.env())
    assert out.returncode == 0, out.stderr
    fresh = json.loads(out.stdout)
    here = {s: echo_core.entities.entity_to_json(e) for s, e in box.index().entities.items()}
    assert fresh == here
    assert {s for s, e in fresh.items() if e["path"] not in INIT_NOTES} == set(box.captured())
    assert len(box.captured()) == 8
    assert fresh["ada-lovelace"]["aliases"] == ["Ada King"]


def test_resolve_in_a_fresh_cli_process_finds_a_learned_alias(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    box = VaultBox(tmp_path / "b").init()
    box.capture("Ada Lovelace", kind="person", body="Mathematician")
    box.capture("Ada King", kind="person", body="alias", merge_into="ada-lovelace",
                aliases=("Ada King",))
    out = run_cli(["resolve", "ada king", "--json", "--vault", str(box.vault)], env=isolated_env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["slug"] == "ada-lovelace" and data["path"] == "resources/people/ada-lovelace.md"


def test_journal_is_compacted_into_the_snapshot(box: VaultBox,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(echo_core.entities, "COMPACT_AFTER", 3)
    people = {"ada-lovelace": "Ada Lovelace", "grace-hopper": "Grace Hopper",
              "alan-turing": "Alan Turing", "edsger-dijkstra": "Edsger Dijkstra",
              "barbara-liskov": "Barbara Liskov", "donald-knuth": "Donald Knuth"}
    # six journal lines in all (any init wrote count too): compaction after the 3rd and 6th
    journal = box.vault / JOURNAL_PATH
    journaled = len(journal.read_text().splitlines()) if journal.exists() else 0
    slugs = list(people)[: len(people) - journaled]
    for slug in slugs:
        assert box.capture(people[slug], kind="person", body="pioneer").action == "created"
    assert box.read(JOURNAL_PATH).strip() == ""
    snapshot = json.loads(box.read(SNAPSHOT_PATH))
    assert snapshot["schema_version"] == 1
    assert set(box.captured()) == set(slugs)
    assert set(snapshot["entities"]) == set(box.index().entities) >= set(slugs)
    assert snapshot["entities"]["ada-lovelace"]["path"] == "resources/people/ada-lovelace.md"
    # a later write goes to the journal again, and a fresh reader sees snapshot + journal
    box.capture("Ada Lovelace", kind="person", body="Analyst", today="2026-03-02")
    assert len(box.read(JOURNAL_PATH).splitlines()) == 1
    assert set(box.captured()) == set(slugs)
    ada = box.entity("ada-lovelace")
    assert ada.h == content_hash(box.read("resources/people/ada-lovelace.md"))
    assert ada.h != snapshot["entities"]["ada-lovelace"]["h"]


def test_capturing_operator_preferences_updates_the_note_init_created(box: VaultBox) -> None:
    """init writes _agent/memory/semantic/operator-preferences.md; a semantic capture of
    that title must update it (its `## Observations`), not create operator-preferences-2."""
    env = box.capture("Operator Preferences", kind="semantic", body="prefers tabs")
    assert env.action == "updated", env
    assert env.data.path == "_agent/memory/semantic/operator-preferences.md"
    assert not (box.vault / "_agent/memory/semantic/operator-preferences-2.md").exists()
    observations = section(box.read(env.data.path), "Observations")
    assert "- 2026-03-01: prefers tabs" in observations
