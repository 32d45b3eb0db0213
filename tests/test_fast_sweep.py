"""``sweep --fast`` and the freshness check, in process (issue 14 items 2-3, SPEC §5.1):
the indexes follow the vault a person edits, reading only what changed."""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

import pytest

from echo_core.entities import JOURNAL_PATH
from echo_core.models import CaptureRequest
from echo_core.operations.invoke import invoke
from echo_core.ops.capture import capture
from echo_core.ops.fast_sweep import fast_sweep, in_shard, last_sweeps
from echo_core.ops.freshness import freshen
from echo_core.ops.recall import recall
from tests.capture_kit import VaultBox

PEOPLE = [f"Person {chr(65 + i)}{chr(97 + i)}lix Tor{i:02d}" for i in range(20)]


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def _entity_paths(box: VaultBox) -> set[str]:
    return {e.path for e in box.ctx().entities.load().entities.values()}


def _indexed(box: VaultBox) -> set[str]:
    ranker = box.ctx().ranker_upkeep.persistent
    assert ranker is not None
    return set(ranker.paths())


def _people(box: VaultBox) -> list[str]:
    paths = []
    for i, title in enumerate(PEOPLE):
        env = capture(box.ctx(), CaptureRequest(title=title, kind="person", body=f"word{i}x"))
        assert env.ok, env
        paths.append(env.data.path)
    return paths


def test_ten_notes_deleted_by_hand_leave_both_indexes_and_capture_anew(box: VaultBox) -> None:
    paths = _people(box)
    assert fast_sweep(box.ctx()).data.baseline
    for path in paths[:10]:
        (box.vault / path).unlink()
    done = fast_sweep(box.ctx()).data
    assert sorted(done.gone) == sorted(paths[:10])
    assert len(done.entities_removed) == 10
    assert not _entity_paths(box) & set(paths[:10])
    assert not _indexed(box) & set(paths[:10])
    for i, title in enumerate(PEOPLE[:10]):
        assert recall(box.ctx(), f"word{i}x").data.primary == ()
        again = capture(box.ctx(), CaptureRequest(title=title, kind="person", body="back"))
        assert again.ok and again.action == "created", again
        assert again.data.path == paths[i]
    assert set(paths) <= _entity_paths(box)
    assert fast_sweep(box.ctx()).data.gone == ()


def test_the_first_fast_sweep_makes_hand_written_notes_entities(box: VaultBox) -> None:
    folder = box.vault / "resources/concepts"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Zettel.md").write_text("plain text about slipboxes\n", "utf-8")
    (folder / "deep").mkdir()
    (folder / "deep/graph.md").write_text("---\naliases: Knowledge Graph\n---\n# Graphs\n",
                                          "utf-8")
    done = fast_sweep(box.ctx()).data
    assert done.baseline
    index = box.ctx().entities.load()
    assert [e.path for e in index.named("Zettel")] == ["resources/concepts/Zettel.md"]
    assert [e.kind for e in index.named("Knowledge Graph")] == ["concept"]
    assert [e.path for e in index.named("Graphs")] == ["resources/concepts/deep/graph.md"]
    assert [h.path for h in recall(box.ctx(), "slipboxes").data.primary] == [
        "resources/concepts/Zettel.md"]


def _day_for(path: str, *, inside: bool) -> str:
    day = _dt.date(2026, 3, 2)  # a Monday
    while in_shard(path, day.weekday()) is not inside:
        day += _dt.timedelta(days=1)
    return day.isoformat()


def test_an_edit_keeping_size_and_mtime_is_found_on_its_shard_day(box: VaultBox) -> None:
    path = _people(box)[0]
    fast_sweep(box.ctx())
    note = box.vault / path
    st = note.stat()
    text = note.read_text("utf-8")
    note.write_text(text.replace("word0x", "wordQx"), "utf-8")  # same size
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
    other_day = box.ctx(ECHO_TODAY=_day_for(path, inside=False))
    assert fast_sweep(other_day).data.changed == ()
    assert fast_sweep(box.ctx(ECHO_TODAY=_day_for(path, inside=True))).data.changed == (path,)
    assert [h.path for h in recall(box.ctx(), "wordQx").data.primary] == [path]


def test_all_shards_verifies_every_note(box: VaultBox) -> None:
    paths = _people(box)
    fast_sweep(box.ctx())
    done = fast_sweep(box.ctx(), all_shards=True).data
    assert done.verified == done.listed and done.changed == ()
    assert done.listed >= len(paths)


def test_a_touched_note_is_recorded_not_reindexed(box: VaultBox) -> None:
    path = _people(box)[0]
    fast_sweep(box.ctx())
    later = (box.vault / path).stat().st_mtime_ns + 5_000_000_000
    os.utime(box.vault / path, ns=(later, later))
    done = fast_sweep(box.ctx()).data
    assert (done.touched, done.changed, done.entities_put) == (1, (), ())
    assert fast_sweep(box.ctx()).data.touched == 0


def test_index_drift_is_repaired_whatever_the_manifest_says(box: VaultBox) -> None:
    paths = _people(box)
    fast_sweep(box.ctx())
    ctx = box.ctx()
    store = ctx.entities
    with ctx.vault.storage.lock():
        index = store.load()
        lost = index.by_path(paths[3])
        assert lost is not None
        bogus = lost.__class__(slug="ghost", path="resources/people/ghost.md", kind="person",
                               title="Ghost")
        store.apply([bogus], [lost.slug])
    done = fast_sweep(box.ctx()).data
    assert done.entities_put == (lost.slug,) and done.entities_removed == ("ghost",)
    assert box.ctx().entities.load().by_path(paths[3]) is not None


def test_a_second_fast_sweep_changes_nothing(box: VaultBox) -> None:
    _people(box)
    fast_sweep(box.ctx())
    journal = (box.vault / JOURNAL_PATH).read_bytes()
    done = fast_sweep(box.ctx()).data
    assert (done.new, done.changed, done.gone, done.entities_put) == ((), (), (), ())
    assert (box.vault / JOURNAL_PATH).read_bytes() == journal


def test_load_runs_a_fast_sweep_once_the_last_is_older_than_the_setting(box: VaultBox) -> None:
    invoke(box.ctx(ECHO_NOW="2026-03-01T09:00:00"), "load", {})
    first = last_sweeps(box.ctx())["fast"]
    assert first == _dt.datetime(2026, 3, 1, 9, 0)
    invoke(box.ctx(ECHO_NOW="2026-03-05T09:00:00"), "load", {})
    assert last_sweeps(box.ctx())["fast"] == first
    invoke(box.ctx(ECHO_NOW="2026-03-05T09:00:00", ECHO_FAST_SWEEP_DAYS="2"), "load", {})
    assert last_sweeps(box.ctx())["fast"] == _dt.datetime(2026, 3, 5, 9, 0)


def _generated(box: VaultBox, count: int) -> list[str]:
    paths = []
    for n in range(count):
        rel = f"resources/concepts/c{n // 500:02d}/note-{n:05d}.md"
        path = box.vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {n}\n\nfiller text {n} about topic{n % 97}\n", "utf-8")
        paths.append(rel)
    return paths


def test_on_a_large_vault_every_change_is_seen_by_the_next_session_start(box: VaultBox) -> None:
    """With no time for the rotating window, an in-place edit waits for the next
    session start (``load`` stats every note first; the SessionStart hook right after its
    answer: test_session_start_pass.py); a new note and a deletion change a folder's
    mtime and are seen at once."""
    paths = _generated(box, 3000)
    fast_sweep(box.ctx())
    edited = box.vault / paths[2500]
    folder_ns = edited.parent.stat().st_mtime_ns
    with edited.open("a", encoding="utf-8") as handle:
        handle.write("zanzibarish\n")
    os.utime(edited.parent, ns=(folder_ns, folder_ns))
    (box.vault / "resources/concepts/c01/fresh.md").write_text("# Fresh\n\nquokkaish\n", "utf-8")
    (box.vault / paths[10]).unlink()
    quick = box.ctx(ECHO_FRESH_BUDGET_MS="0")
    freshen(quick, 0.0)
    index = box.ctx().entities.load()
    assert [e.path for e in index.named("Fresh")] == ["resources/concepts/c01/fresh.md"]
    assert index.by_path(paths[10]) is None
    assert recall(box.ctx(), "zanzibarish").data.primary == ()  # not seen yet
    invoke(box.ctx(), "load", {})  # echo-memory load: every note stat-ed first
    assert [h.path for h in recall(box.ctx(), "zanzibarish").data.primary] == [paths[2500]]


def test_a_watcher_event_for_an_unchanged_note_writes_no_index(box: VaultBox) -> None:
    from echo_core.ops.vault_changes import sync_changed

    paths = _people(box)
    fast_sweep(box.ctx())
    journal = (box.vault / JOURNAL_PATH).read_bytes()
    assert sync_changed(box.ctx(), [paths[0]]).found == 0
    note = box.vault / paths[1]
    note.write_text(note.read_text("utf-8") + "\nextra kiwifruit\n", "utf-8")
    (box.vault / paths[2]).unlink()
    done = sync_changed(box.ctx(), [paths[0], paths[1], paths[2]])
    assert (done.changed, done.gone) == ((paths[1],), (paths[2],))
    assert [h.path for h in recall(box.ctx(), "kiwifruit").data.primary] == [paths[1]]
    assert (box.vault / JOURNAL_PATH).read_bytes() != journal
    again = fast_sweep(box.ctx()).data
    assert (again.new, again.changed, again.gone) == ((), (), ())


def test_after_a_full_sweep_the_fast_sweep_has_nothing_to_read(box: VaultBox) -> None:
    from echo_core.ops.sweep.full import full_sweep

    _people(box)
    (box.vault / "resources/concepts").mkdir(parents=True, exist_ok=True)
    (box.vault / "resources/concepts/bare.md").write_text("no frontmatter here\n", "utf-8")
    assert full_sweep(box.ctx(), apply=True).ok
    assert last_sweeps(box.ctx())["full"] is not None
    done = fast_sweep(box.ctx()).data
    assert not done.baseline
    assert (done.new, done.changed, done.gone, done.touched) == ((), (), (), 0)
