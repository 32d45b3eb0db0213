"""Verbs that rewrite a note from the text they read (``put``, ``patch``, ``restore``,
``set-frontmatter``, the inbox marks, ``heat``, lint's repairs, sweep's aliases) while
a person saves that note (SPEC §1.3: an edit takes no lock). The person's save is never
lost: a verb that plans from the text plans again on top of it, a verb that replaces the
whole text keeps the save in the note history first, and a verb that cannot plan again
leaves the note as the person saved it and says so. The save lands at the worst instant:
the verb's new text fsynced in its temp file, not yet renamed (``hand_edit_kit``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from echo_core.edit_retry import EDIT_ATTEMPTS
from echo_core.entities import content_hash
from echo_core.errors import EditedMeanwhile
from echo_core.ops.heat import PROMOTE_MIN_HITS, heat
from echo_core.ops.history import restore_note
from echo_core.ops.inbox_marks import mark_inbox
from echo_core.ops.notes_io import put_note, set_frontmatter
from echo_core.ops.patch import patch_note
from echo_core.ops.sweep.full import full_sweep
from echo_core.ops.telemetry import MISSES_FILE
from echo_core.vault import INBOX_PATH
from tests.capture_kit import VaultBox
from tests.hand_edit_kit import saved_by_hand_at_first_fsync

NOTE = "resources/concepts/durability.md"
BEFORE = "---\ntype: concept\n---\n# Durability\n\nfirst text\n\n## Log\n- one\n"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def _hand_line(n: int) -> str:
    return f"- added by hand ({n})\n"


def _saves_by_hand(box: VaultBox, path: str, monkeypatch: pytest.MonkeyPatch,
                   times: int = 1) -> list[int]:
    """A person appends a numbered line to ``path`` while each of the next ``times``
    writes of it sits in its temp file."""
    made: list[int] = []

    def save() -> None:
        made.append(len(made) + 1)
        with open(box.vault / path, "a", encoding="utf-8") as note:
            note.write(_hand_line(len(made)))

    saved_by_hand_at_first_fsync(monkeypatch, save, temp_of=Path(path).name, times=times)
    return made


def _kept(box: VaultBox, path: str) -> list[str]:
    """The texts the note history keeps for ``path``."""
    ctx = box.ctx()
    return [ctx.history.text(path, v) for v in ctx.history.versions(path)]


def test_a_put_meeting_a_hand_save_keeps_that_save_in_the_history(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    put_note(box.ctx(), NOTE, BEFORE)
    saves = _saves_by_hand(box, NOTE, monkeypatch)
    done = put_note(box.ctx(), NOTE, "# Durability\n\nthe agent's text\n")
    assert done.action == "written" and saves == [1]
    assert box.read(NOTE) == "# Durability\n\nthe agent's text\n"
    kept = _kept(box, NOTE)
    assert BEFORE + _hand_line(1) in kept  # the person's save, restorable
    assert BEFORE in kept and len(kept) == 2


def test_a_patch_meeting_a_hand_save_is_made_on_top_of_it(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    put_note(box.ctx(), NOTE, BEFORE)
    _saves_by_hand(box, NOTE, monkeypatch)
    done = patch_note(box.ctx(), NOTE, "append", "heading", "Log", "- two")
    assert done.action == "updated"
    text = box.read(NOTE)
    assert _hand_line(1) in text and text.count("- two") == 1
    assert "- one" in done.data.diff and _hand_line(1).strip() in done.data.diff


def test_a_restore_meeting_a_hand_save_keeps_that_save_in_the_history(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    put_note(box.ctx(), NOTE, BEFORE)
    put_note(box.ctx(), NOTE, "# Durability\n\nsecond text\n")
    _saves_by_hand(box, NOTE, monkeypatch)
    done = restore_note(box.ctx(), NOTE, "previous", confirm=True)
    assert done.action == "restored" and box.read(NOTE) == BEFORE
    assert "# Durability\n\nsecond text\n" + _hand_line(1) in _kept(box, NOTE)


def test_a_frontmatter_key_set_during_a_hand_save_is_set_on_the_saved_text(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    put_note(box.ctx(), NOTE, BEFORE)
    _saves_by_hand(box, NOTE, monkeypatch)
    assert set_frontmatter(box.ctx(), NOTE, "status", "active").ok
    text = box.read(NOTE)
    assert "status: active" in text and text.endswith(_hand_line(1))


def test_inbox_marks_made_during_a_hand_save_keep_the_line_the_person_added(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    waiting = "- 2026-03-01: call the bank"
    put_note(box.ctx(), INBOX_PATH, f"# Inbox\n\n{waiting}\n")
    _saves_by_hand(box, INBOX_PATH, monkeypatch)
    ctx = box.ctx()
    with ctx.vault.storage.lock():
        assert mark_inbox(ctx, {waiting: f"- ~~{waiting[2:]}~~ → done"}) == 1
    assert box.read(INBOX_PATH) == (f"# Inbox\n\n- ~~{waiting[2:]}~~ → done\n"
                                    + _hand_line(1))


def test_a_verb_meeting_a_hand_save_on_every_attempt_writes_nothing_and_keeps_each_save(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    put_note(box.ctx(), NOTE, BEFORE)
    _saves_by_hand(box, NOTE, monkeypatch, times=EDIT_ATTEMPTS)
    with pytest.raises(EditedMeanwhile) as refused:
        put_note(box.ctx(), NOTE, "the agent's text\n")
    assert NOTE in refused.value.message and "Run the operation again" in refused.value.message
    last = BEFORE + "".join(_hand_line(n) for n in range(1, EDIT_ATTEMPTS + 1))
    assert box.read(NOTE) == last  # the person's latest save stands
    kept = _kept(box, NOTE)  # and each earlier one is in the history
    assert all(BEFORE + "".join(_hand_line(n) for n in range(1, k)) in kept
               for k in range(1, EDIT_ATTEMPTS + 1))
    assert put_note(box.ctx(), NOTE, "the agent's text\n").action == "written"
    assert last in _kept(box, NOTE)


def test_heat_leaves_a_note_saved_by_hand_as_it_was_saved_and_says_so(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.operations.invoke import invoke

    made = box.capture("Ada Lovelace", kind="person", body="Wrote the first program.")
    path = made.data.path
    for _ in range(PROMOTE_MIN_HITS):
        assert invoke(box.ctx(), "recall", {"query": "first program", "limit": 1}).ok
    _saves_by_hand(box, path, monkeypatch)
    done = heat(box.ctx(), apply=True)
    assert done.action == "unchanged" and not done.data.promote
    [left] = done.data.skipped
    assert left.path == path and "was edited while this operation ran" in left.reason
    text = box.read(path)
    assert text.endswith(_hand_line(1)) and "always_load" not in text


def test_sweep_keeps_the_alias_proposal_of_a_note_saved_by_hand_for_the_next_sweep(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    path = box.capture("Vantage Systems", kind="company").data.path
    log = box.ctx().state_dir / MISSES_FILE
    line = json.dumps({"event": "merge_into", "mention": "VS Corp", "slug": "vantage-systems"})
    log.write_text(f"{line}\n{line}\n", encoding="utf-8")
    _saves_by_hand(box, path, monkeypatch)
    done = full_sweep(box.ctx(), apply=True)
    assert done.ok and not done.data.aliases
    assert "VS Corp" not in box.read(path) and box.read(path).endswith(_hand_line(1))
    assert log.read_text(encoding="utf-8").splitlines() == [line, line]  # not consumed
    monkeypatch.undo()
    again = full_sweep(box.ctx(), apply=True)
    assert [a.alias for a in again.data.aliases] == ["VS Corp"]
    text = box.read(path)
    assert "VS Corp" in text and _hand_line(1) in text


def test_lint_leaves_a_note_saved_by_hand_while_it_is_repaired_unrepaired(
        tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.ops.lint.run import lint
    from tests.lint_kit import PLANTED, box_like

    planted = box_like("planted", tmp_path, tmp_path_factory)
    babbage = PLANTED["incomplete-frontmatter"]
    _saves_by_hand(planted, babbage, monkeypatch)
    done = lint(planted.ctx(), fix=True, apply=True)
    assert [r.applied for r in done.data.repairs if r.path == babbage] == [False]
    assert planted.read(babbage).endswith(_hand_line(1))
    assert "status: active" not in planted.read(babbage)
    monkeypatch.undo()
    again = lint(planted.ctx(), fix=True, apply=True)
    assert [r.applied for r in again.data.repairs if r.path == babbage] == [True]
    assert planted.read(babbage).endswith(_hand_line(1))


def test_a_link_meeting_a_hand_save_links_both_notes_on_top_of_it(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.ops.resolve import link

    ada = box.capture("Ada Lovelace", kind="person", body="Wrote the first program.").data.path
    grace = box.capture("Grace Hopper", kind="person", body="Built a compiler.").data.path
    saves = _saves_by_hand(box, grace, monkeypatch)
    done = link(box.ctx(), "ada-lovelace", "grace-hopper")
    assert done.action == "linked" and saves == [1]
    assert _hand_line(1) in box.read(grace)
    assert box.read(grace).count("[[ada-lovelace]]") == 1
    assert box.read(ada).count("[[grace-hopper]]") == 1
    assert box.entity("grace-hopper").h == content_hash(box.read(grace))


def test_a_scope_set_during_a_hand_save_of_the_context_note_is_set_on_top_of_it(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.ops.scope import CONTEXT_PATH, set_scope

    set_scope(box.ctx(), "ship the importer")
    _saves_by_hand(box, CONTEXT_PATH, monkeypatch)
    done = set_scope(box.ctx(), "harden the importer")
    assert done.action == "updated" and done.data.previous == "ship the importer"
    text = box.read(CONTEXT_PATH)
    assert "harden the importer" in text and text.endswith(_hand_line(1))
    assert "ship the importer" in text  # moved to the Scope History


def test_an_agent_log_line_added_during_a_hand_save_of_the_daily_note_keeps_it(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    import datetime as _dt

    from echo_core.ops.daily import append_agent_log, daily_note_path

    day = _dt.date(2026, 3, 1)
    ctx = box.ctx()
    assert append_agent_log(ctx.vault, day, "- 2026-03-01: first")
    path = daily_note_path(day)
    _saves_by_hand(box, path, monkeypatch)
    assert append_agent_log(box.ctx().vault, day, "- 2026-03-01: second")
    text = box.read(path)
    assert _hand_line(1) in text and text.count("- 2026-03-01: second") == 1
    assert box.ctx().history.versions(path) == []  # agent-log lines keep no history


def test_evolve_meeting_a_hand_save_archives_the_saved_text(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.ops.evolve import ARCHIVE_FOLDER, evolve_note

    put_note(box.ctx(), NOTE, BEFORE)
    _saves_by_hand(box, NOTE, monkeypatch)
    done = evolve_note(box.ctx(), NOTE, "the team moved to Postgres",
                       "# Durability\n\nnow on Postgres\n")
    assert done.action == "written" and done.data.archive is not None
    assert "now on Postgres" in box.read(NOTE)
    assert _hand_line(1) in box.read(done.data.archive)
    assert len(list((box.vault / ARCHIVE_FOLDER).rglob("durability--*.md"))) == 1  # one, not two


def test_a_full_sweep_leaves_a_note_saved_by_hand_while_it_writes_it_and_says_so(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    bare = "resources/concepts/bare.md"
    (box.vault / bare).parent.mkdir(parents=True, exist_ok=True)
    (box.vault / bare).write_text("# Bare\n\nBody.\n", encoding="utf-8")
    _saves_by_hand(box, bare, monkeypatch)
    done = full_sweep(box.ctx(), apply=True)
    assert done.ok and any(bare in w and "edited while the sweep" in w for w in done.warnings)
    assert box.read(bare) == "# Bare\n\nBody.\n" + _hand_line(1)
    monkeypatch.undo()
    again = full_sweep(box.ctx(), apply=True)
    assert not again.warnings
    text = box.read(bare)
    assert text.startswith("---\n") and text.endswith("# Bare\n\nBody.\n" + _hand_line(1))


def test_decay_rewrites_the_links_of_a_note_saved_by_hand_on_top_of_that_save(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_sweep_decay import PLAN, _vault

    decaying = _vault(tmp_path)
    _saves_by_hand(decaying, PLAN, monkeypatch)
    done = full_sweep(decaying.ctx(), apply=True, decay=True, projects=("website-redesign",))
    assert done.ok and not done.warnings
    plan = decaying.read(PLAN)
    assert plan.endswith(_hand_line(1)) and "[[projects/on-hold/website-redesign]]" in plan
    assert "projects/active/website-redesign" not in plan


def test_a_project_saved_by_hand_while_decay_moves_it_moves_with_that_save(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_sweep_decay import STALE, _vault

    decaying = _vault(tmp_path)
    moved = "projects/on-hold/website-redesign.md"
    made: list[int] = []

    def save_old_path() -> None:  # while the new path's text sits in its temp file
        made.append(1)
        with open(decaying.vault / STALE, "a", encoding="utf-8") as note:
            note.write(_hand_line(1))

    saved_by_hand_at_first_fsync(monkeypatch, save_old_path, temp_of="website-redesign.md")
    done = full_sweep(decaying.ctx(), apply=True, decay=True, projects=("website-redesign",))
    assert done.ok and made == [1]
    assert not (decaying.vault / STALE).exists()
    text = decaying.read(moved)
    assert text.endswith(_hand_line(1)) and "status: on-hold" in text
    assert decaying.frontmatter(moved)["status"] == "on-hold"
    copies = sorted(p.name for p in (decaying.vault / "projects").rglob("website-redesign*"))
    assert copies == ["website-redesign.md"]  # one note, not one per folder
    monkeypatch.undo()
    again = full_sweep(decaying.ctx(), apply=True, decay=True, projects=("website-redesign",))
    assert again.ok and decaying.read(moved) == text  # nothing moved or doubled later


def test_decay_leaves_the_preferences_saved_by_hand_and_the_next_run_doubles_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.ops.sweep.decay_observations import PREFERENCES_PATH
    from tests.test_sweep_decay import ARCHIVE_2025, _vault

    decaying = _vault(tmp_path)
    _saves_by_hand(decaying, PREFERENCES_PATH, monkeypatch)
    done = full_sweep(decaying.ctx(), apply=True, decay=True)
    assert any(PREFERENCES_PATH in w and "edited while" in w for w in done.warnings)
    kept = decaying.read(PREFERENCES_PATH)
    assert kept.endswith(_hand_line(1)) and "observation number 0\n" in kept
    archived = decaying.read(ARCHIVE_2025)
    monkeypatch.undo()
    again = full_sweep(decaying.ctx(), apply=True, decay=True)
    assert again.ok and not again.warnings
    now = decaying.read(ARCHIVE_2025)  # the hand line is one more observation: one more
    assert now.startswith(archived)    # goes, and none is archived twice
    items = [line for line in now.splitlines() if line.startswith("- ")]
    assert len(items) == len(set(items))
    assert "observation number 0\n" not in decaying.read(PREFERENCES_PATH)
    assert _hand_line(1) in decaying.read(PREFERENCES_PATH)


def test_a_daily_note_a_person_creates_while_a_capture_logs_to_it_is_kept(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    import datetime as _dt

    from echo_core.ops import daily

    path = box.vault / daily.daily_note_path(_dt.date(2026, 3, 1))
    real = daily.render_template
    made: list[str] = []

    def created_by_hand_meanwhile(name: str, **values: str) -> str:
        text = real(name, **values)
        if not made:  # the capture found no daily note; the person saves one now
            made.append(str(path))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("# My own day\n\n- written by hand\n", encoding="utf-8")
        return text

    monkeypatch.setattr(daily, "render_template", created_by_hand_meanwhile)
    assert box.capture("Ada Lovelace", kind="person", body="Wrote the first program.").ok
    text = path.read_text(encoding="utf-8")
    assert made and text.startswith("# My own day\n\n- written by hand\n")
    assert text.count("ada-lovelace") == 1  # the agent log line, added once on top


def test_a_note_a_person_saves_where_a_capture_is_creating_one_is_kept_and_updated(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.ops import capture as capture_op

    real = capture_op._new_note_text
    made: list[Path] = []

    def saved_by_hand_there(ctx: Any, req: Any, route: Any, today: Any) -> str:
        text = real(ctx, req, route, today)
        if not made:  # the capture chose its path; the person saves a note there now
            made.append(box.vault / "resources/people/ada-lovelace.md")
            made[0].parent.mkdir(parents=True, exist_ok=True)
            made[0].write_text("# Ada Lovelace\n\nMy own note on her.\n", encoding="utf-8")
        return text

    monkeypatch.setattr(capture_op, "_new_note_text", saved_by_hand_there)
    done = box.capture("Ada Lovelace", kind="person", body="Wrote the first program.")
    assert done.ok and made and done.action == "updated"  # resolved again: that note
    kept = made[0].read_text(encoding="utf-8")
    assert "My own note on her." in kept and kept.count("Wrote the first program.") == 1
    assert [p.name for p in made[0].parent.glob("ada-lovelace*.md")] == ["ada-lovelace.md"]
    assert box.entity("ada-lovelace").path == "resources/people/ada-lovelace.md"


def test_a_note_a_link_reads_and_a_person_saves_before_it_is_staged_keeps_the_save(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.ops import links
    from echo_core.ops.resolve import link

    box.capture("Ada Lovelace", kind="person", body="Wrote the first program.")
    grace = box.capture("Grace Hopper", kind="person", body="Built a compiler.").data.path
    real = links.add_related
    saves: list[int] = []

    def saved_by_hand_first(text: str, target: str) -> tuple[str, bool]:
        if not saves and target.startswith("resources/people/ada"):  # grace's new text
            saves.append(1)
            with open(box.vault / grace, "a", encoding="utf-8") as note:
                note.write(_hand_line(1))
        return real(text, target)

    monkeypatch.setattr(links, "add_related", saved_by_hand_first)
    assert link(box.ctx(), "ada-lovelace", "grace-hopper").action == "linked" and saves
    text = box.read(grace)
    assert _hand_line(1) in text and text.count("[[ada-lovelace]]") == 1


def test_a_file_a_person_saves_where_one_is_created_if_absent_is_kept(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    path = "inbox/processing-log-2026-03-01.md"
    saved_by_hand_at_first_fsync(monkeypatch, lambda: (box.vault / path).write_text(
        "# My log\n", encoding="utf-8"), temp_of=Path(path).name)
    assert box.ctx().vault.create_if_absent(path, "# Processing log\n") is False
    assert box.read(path) == "# My log\n"
    assert box.ctx().vault.create_if_absent(path, "# Processing log\n") is False
