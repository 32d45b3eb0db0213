"""``sweep --decay`` (SPEC §2.7, issue 16 item 3): a dry run changes no byte; ``--apply``
archives expired working notes (checkpoints too), moves Observations beyond 30 to their
yearly archive, proposes the stale project and moves it only when confirmed, keeps links
working; a second run does nothing; nothing is ever lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from echo_core.errors import EchoError
from echo_core.ops.recall import recall
from echo_core.ops.sweep import full_sweep
from echo_core.ops.sweep.decay_observations import PREFERENCES_PATH
from echo_core.ops.sweep.decay_working import with_archived_marker
from plugins.hooks_claude.checkpoint import write_checkpoint
from tests.capture_kit import TODAY, VaultBox
from tests.cli_inproc import vault_runner
from tests.hook_kit import payload, work_tools, write_transcript

WORKING = "_agent/memory/working/deploy-scratch.md"
FRESH_WORKING = "_agent/memory/working/fresh-scratch.md"
STALE = "projects/active/website-redesign.md"
FRESH = "projects/active/billing-rewrite.md"
PLAN = "resources/concepts/release-plan.md"
ARCHIVE_2025 = "_agent/memory/episodic/observations-archive-2025.md"
ARCHIVE_2026 = "_agent/memory/episodic/observations-archive-2026.md"


def _observations(n: int) -> list[str]:
    """``n`` items, the first 20 of 2025, one of them with an indented body line."""
    items = []
    for i in range(n):
        day = f"2025-12-{i + 1:02d}" if i < 20 else f"2026-01-{i - 19:02d}"
        items.append(f"- {day}: observation number {i}")
        if i == 1:
            items[-1] += "\n  with a second line kept with it"
    return items


def _preferences(box: VaultBox, items: list[str]) -> None:
    path = box.vault / PREFERENCES_PATH
    text = path.read_text("utf-8")
    head, _, _rest = text.partition("## Observations")
    path.write_text(head + "## Observations\n\n" + "\n".join(items) + "\n", "utf-8")


def _vault(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Deploy scratch", kind="working", body="Try the blue build.\n\nThen "
                       "the green one.", today="2026-02-01").ok  # expires 2026-02-15
    assert box.capture("Fresh scratch", kind="working", body="Still going.").ok
    assert box.capture("Website Redesign", kind="project", body="New site.",
                       today="2026-01-10").ok
    assert box.capture("Billing Rewrite", kind="project", body="Stripe.",
                       today="2026-02-20").ok
    (box.vault / PLAN).parent.mkdir(parents=True, exist_ok=True)
    (box.vault / PLAN).write_text(
        "# Release plan\n\nSee [[projects/active/website-redesign]] and "
        "[[projects/active/website-redesign.md|the redesign]], [[website-redesign]] and "
        "[Redesign](projects/active/website-redesign.md).\n", "utf-8")
    _preferences(box, _observations(33))
    assert full_sweep(box.ctx(), apply=True).ok  # the vault as sweep leaves it
    return box


def test_decay_dry_run_changes_no_byte_and_lists_every_decay(tmp_path: Path) -> None:
    box = _vault(tmp_path)
    before = box.tree_digest()
    env = full_sweep(box.ctx(), decay=True)
    assert box.tree_digest() == before
    decay = env.data.decay
    assert env.action == "dry-run"
    assert [w.path for w in decay.working] == [WORKING]
    assert [p.slug for p in decay.proposed] == ["website-redesign"]
    assert decay.moves == () and decay.links == ()
    assert [(o.archive, o.count) for o in decay.observations] == [(ARCHIVE_2025, 3)]


def test_decay_apply_archives_working_notes_and_observations_and_only_proposes_the_project(
        tmp_path: Path) -> None:
    box = _vault(tmp_path)
    working_before = box.read(WORKING)
    env = full_sweep(box.ctx(), apply=True, decay=True)
    assert env.ok and env.data.decay.changes == 1 + 3
    text = box.read(WORKING)
    assert box.frontmatter(WORKING)["status"] == "archived"
    body_before = working_before.split("# Deploy scratch\n\n", 1)[1]
    assert text.split("# Deploy scratch\n\n", 1)[1] == f"## Archived {TODAY}\n\n" + body_before
    assert box.frontmatter(FRESH_WORKING)["status"] == "active"
    # the project is only proposed: still where it was, still active
    assert box.frontmatter(STALE)["status"] == "active"
    assert [p.slug for p in env.data.decay.proposed] == ["website-redesign"]
    prefs = box.read(PREFERENCES_PATH)
    items = _observations(33)
    assert prefs.endswith("## Observations\n\n" + "\n".join(items[3:]) + "\n")
    archive = box.read(ARCHIVE_2025)
    assert archive.endswith("## Observations\n\n" + "\n".join(items[:3]) + "\n")
    assert box.frontmatter(ARCHIVE_2025)["type"] == "episodic"
    assert box.entity("observations-archive-2025").path == ARCHIVE_2025


def test_decay_second_run_does_nothing(tmp_path: Path) -> None:
    box = _vault(tmp_path)
    full_sweep(box.ctx(), apply=True, decay=True, projects=("website-redesign",))
    after = box.tree_digest()
    second = full_sweep(box.ctx(), apply=True, decay=True, projects=("website-redesign",))
    assert box.tree_digest() == after
    assert second.action == "unchanged" and second.data.decay.changes == 0
    assert second.data.decay.proposed == ()


def test_confirmed_stale_project_moves_on_hold_with_its_links_and_indexes(
        tmp_path: Path) -> None:
    box = _vault(tmp_path)
    before = box.read(STALE)
    env = full_sweep(box.ctx(), apply=True, decay=True, projects=("website-redesign",))
    moved = "projects/on-hold/website-redesign.md"
    assert not (box.vault / STALE).exists()
    assert box.read(moved) == before.replace("status: active", "status: on-hold")
    assert [m.to for m in env.data.decay.moves] == [moved]
    plan = box.read(PLAN)
    assert "[[projects/on-hold/website-redesign]]" in plan
    assert "[[projects/on-hold/website-redesign.md|the redesign]]" in plan
    assert "[[website-redesign]]" in plan  # by name: resolves wherever the note is
    assert "](projects/on-hold/website-redesign.md)" in plan
    assert "projects/active/website-redesign" not in plan
    assert box.entity("website-redesign").path == moved
    hits = recall(box.ctx(), "redesign new site").data.primary
    assert moved in [h.path for h in hits] and STALE not in [h.path for h in hits]
    assert box.frontmatter(FRESH)["status"] == "active"  # not stale: untouched


def test_a_project_whose_status_says_archived_moves_to_its_folder(tmp_path: Path) -> None:
    box = _vault(tmp_path)
    path = box.vault / FRESH
    path.write_text(path.read_text("utf-8").replace("status: active", "status: archived"),
                    "utf-8")
    before = path.read_text("utf-8")
    env = full_sweep(box.ctx(), apply=True, decay=True)
    assert box.read("projects/archived/billing-rewrite.md") == before
    assert not path.exists() and [m.status for m in env.data.decay.moves] == ["archived"]


def test_unknown_project_slug_exits_2_naming_projects_and_writes_nothing(
        tmp_path: Path) -> None:
    box = _vault(tmp_path)
    before = box.tree_digest()
    with pytest.raises(EchoError) as raised:
        full_sweep(box.ctx(), apply=True, decay=True, projects=("no-such-project",))
    assert raised.value.code == 2 and raised.value.message.startswith("projects:")
    assert box.tree_digest() == before


def test_killed_between_archive_and_preferences_neither_loses_nor_doubles(
        tmp_path: Path) -> None:
    box = _vault(tmp_path)
    items = _observations(33)
    archive = box.vault / ARCHIVE_2025
    full_sweep(box.ctx(), apply=True, decay=True)
    done = archive.read_text("utf-8")
    _preferences(box, items)  # as if killed after the archive was written
    full_sweep(box.ctx(), apply=True, decay=True)
    assert archive.read_text("utf-8") == done
    assert box.read(PREFERENCES_PATH).endswith("\n".join(items[3:]) + "\n")


def test_observations_go_to_the_archive_of_their_year_in_order(tmp_path: Path) -> None:
    box = _vault(tmp_path)
    items = _observations(55)  # 25 move: 20 of 2025, 5 of 2026
    _preferences(box, items)
    full_sweep(box.ctx(), apply=True, decay=True)
    assert box.read(ARCHIVE_2025).endswith("\n".join(items[:20]) + "\n")
    assert box.read(ARCHIVE_2026).endswith("## Observations\n\n" + "\n".join(items[20:25]) + "\n")
    assert box.read(PREFERENCES_PATH).endswith("\n".join(items[25:]) + "\n")


def test_the_archived_marker_goes_after_the_title_and_keeps_the_body() -> None:
    day = __import__("datetime").date(2026, 3, 1)
    assert with_archived_marker("---\na: 1\n---\n# T\n\nBody\n", day) == (
        "---\na: 1\n---\n# T\n\n## Archived 2026-03-01\n\nBody\n")
    assert with_archived_marker("---\na: 1\n---\nBody\r\n", day) == (
        "---\na: 1\n---\n## Archived 2026-03-01\n\nBody\r\n")
    assert with_archived_marker("# T", day) == "# T\n\n## Archived 2026-03-01\n"


def test_an_expired_checkpoint_is_archived(tmp_path: Path) -> None:
    box = _vault(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    transcript = write_transcript(tmp_path / "t.jsonl", "a1b2c3d4", project,
                                  tools=work_tools(project), prompts=["fix the deploy"])
    path = write_checkpoint(payload("PreCompact", "a1b2c3d4", transcript, project,
                                    trigger="auto", custom_instructions=""),
                            lambda: box.ctx(ECHO_TODAY="2026-02-01"))
    assert path is not None and box.frontmatter(path)["expires"] == "2026-02-15"
    env = full_sweep(box.ctx(), apply=True, decay=True)
    assert path in [w.path for w in env.data.decay.working]
    assert box.frontmatter(path)["status"] == "archived"


# --- the CLI -------------------------------------------------------------------------------


@pytest.fixture
def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        isolated_env: dict[str, str]) -> Any:
    return vault_runner(tmp_path, capsys, monkeypatch)


def test_cli_decay_json_has_its_own_section_and_bad_flags_exit_2(run: Any) -> None:
    done = run("sweep", "--decay", "--json")
    assert done.code == 0, done.err
    decay = json.loads(done.out)["decay"]
    assert set(decay) >= {"working", "moves", "proposed", "links", "observations", "skipped"}
    lone = run("sweep", "--projects", "x")
    assert lone.code == 2 and "projects:" in lone.err
    fast = run("sweep", "--decay", "--fast")
    assert fast.code == 2 and "decay:" in fast.err
    unknown = run("sweep", "--decay", "--apply", "--projects", "nope")
    assert unknown.code == 2 and "projects:" in unknown.err


def test_cli_sweep_help_teaches_decay_with_an_example(run: Any) -> None:
    done = run("sweep", "--help")
    assert "echo-memory sweep --decay --apply --projects" in done.out
