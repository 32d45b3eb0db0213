"""Note history and restore (SPEC §5.6): versions kept before overwrites, the ring, content
addressing, capture's section updates, restore with preview and undo, the CLI verbs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.history import RING_SIZE, NoteHistory, headline
from echo_core.history_files import STAGING_DIR
from echo_core.ops.history import note_history, restore_note
from echo_core.ops.notes_io import append_line, put_note, set_frontmatter
from tests.capture_kit import VaultBox
from tests.conftest import run_cli

NOTE = "resources/concepts/durability.md"
V1 = "---\r\ntype: concept\r\n---\r\n# Durability v1\r\n\r\nCafé — first text\r\nno newline"
V2 = "---\ntype: concept\n---\n# Durability v2\n\nsecond text\n"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def _note_folders(root: Path) -> list[Path]:
    """The per-note folders of a local history (not its temp files' staging folder)."""
    return [p for p in root.iterdir() if p.is_dir() and p.name != STAGING_DIR]


def _ids(box: VaultBox, path: str = NOTE) -> list[str]:
    return [v.version_id for v in box.ctx().history.versions(path)]


# --- the store ------------------------------------------------------------------------

def test_overwriting_a_note_keeps_its_prior_text(box: VaultBox) -> None:
    put_note(box.ctx(), NOTE, V1)
    assert _ids(box) == []  # a new note replaces nothing
    put_note(box.ctx(), NOTE, V2)
    ctx = box.ctx()
    [version] = ctx.history.versions(NOTE)
    assert ctx.history.text(NOTE, version) == V1
    assert version.size == len(V1.encode("utf-8")) and version.headline == "# Durability v1"
    assert version.saved_at == "2026-03-01T12:00:00"


def test_writing_the_same_text_keeps_no_version(box: VaultBox) -> None:
    put_note(box.ctx(), NOTE, V1)
    box.ctx().vault.write_note(NOTE, V1)
    assert _ids(box) == []


def test_identical_content_is_stored_once(box: VaultBox) -> None:
    for text in (V1, V2, V1, V2, V1):
        put_note(box.ctx(), NOTE, text)
    versions = box.ctx().history.versions(NOTE)
    assert len(versions) == 2  # V1 and V2, each once
    ring = next((box.state / "vaults").iterdir()) / "history"
    [folder] = _note_folders(ring)
    assert sorted(p.name for p in folder.iterdir() if p.name != "versions.ndjson") == sorted(
        v.sha for v in versions)
    assert box.ctx().history.text(NOTE, versions[0]) == V2  # re-kept: newest again


def test_the_ring_keeps_the_newest_twenty(box: VaultBox) -> None:
    ctx = box.ctx()
    for i in range(RING_SIZE + 6):
        ctx.vault.write_note(NOTE, f"# version {i}\n")
    versions = ctx.history.versions(NOTE)
    assert len(versions) == RING_SIZE
    texts = [ctx.history.text(NOTE, v) for v in versions]
    assert texts == [f"# version {i}\n" for i in range(RING_SIZE + 4, 4, -1)]  # newest first
    root = ctx.history.files.root  # type: ignore[attr-defined]  # a folder vault: local
    [folder] = _note_folders(root)
    assert len(list(folder.iterdir())) == RING_SIZE + 1  # blobs + versions.ndjson


def test_frontmatter_edits_are_versioned_and_appends_are_not(box: VaultBox) -> None:
    put_note(box.ctx(), NOTE, V2)
    append_line(box.ctx(), NOTE, "- appended")
    assert _ids(box) == []
    before = box.read(NOTE)
    set_frontmatter(box.ctx(), NOTE, "status", "active")
    [version] = box.ctx().history.versions(NOTE)
    assert box.ctx().history.text(NOTE, version) == before


def test_delete_keeps_the_last_text(box: VaultBox) -> None:
    put_note(box.ctx(), NOTE, V1)
    box.ctx().vault.delete_note(NOTE)
    assert not (box.vault / NOTE).exists()
    [version] = box.ctx().history.versions(NOTE)
    restore_note(box.ctx(), NOTE, version.version_id, confirm=True)
    assert (box.vault / NOTE).read_bytes() == V1.encode("utf-8")


def test_a_capture_update_versions_the_prior_text(box: VaultBox) -> None:
    created = box.capture("Ada Lovelace", kind="person", body="Mathematician")
    path = created.data.path
    before = box.read(path)
    updated = box.capture("Ada Lovelace", kind="person", body="wrote the first program",
                          today="2026-03-05")
    assert updated.action == "updated" and box.read(path) != before
    ctx = box.ctx()
    assert ctx.history.text(path, ctx.history.versions(path)[0]) == before


def test_entity_index_writes_are_not_versioned(box: VaultBox) -> None:
    box.capture("Ada Lovelace", kind="person", body="Mathematician")
    box.capture("Grace Hopper", kind="person", body="Admiral")
    ctx = box.ctx()
    assert ctx.history.versions("_agent/index/entities.json") == []


def test_torn_lines_are_skipped_and_damaged_blobs_never_served(tmp_path: Path) -> None:
    history = NoteHistory(tmp_path)
    first = history.keep(NOTE, V1, saved_at="t1")
    [folder] = _note_folders(tmp_path)
    with open(folder / "versions.ndjson", "a", encoding="utf-8") as log:
        log.write('{"path": "torn')  # a crash mid-append
    assert history.versions(NOTE) == [first]
    (folder / first.sha).write_bytes(b"damaged")
    with pytest.raises(EchoError) as info:
        history.text(NOTE, first)
    assert info.value.code == ExitCode.NOT_FOUND and "damaged" in info.value.message
    history.keep(NOTE, V1, saved_at="t2")  # keeping the text again repairs its blob
    assert history.text(NOTE, history.versions(NOTE)[0]) == V1


def test_the_log_is_compacted_and_orphaned_blobs_removed(tmp_path: Path) -> None:
    history = NoteHistory(tmp_path, ring_size=3)
    history.keep(NOTE, "orphan", saved_at="t0")
    [folder] = _note_folders(tmp_path)
    (folder / "versions.ndjson").write_text("", "utf-8")  # its line lost, its blob left
    for i in range(7):
        history.keep(NOTE, f"text {i % 4}", saved_at=f"t{i + 1}")
    lines = (folder / "versions.ndjson").read_text("utf-8").splitlines()
    assert len(lines) == 3  # compacted to the ring after the 7th line
    assert [history.text(NOTE, v) for v in history.versions(NOTE)] == [
        "text 2", "text 1", "text 0"]
    assert len([p for p in folder.iterdir() if p.name != "versions.ndjson"]) == 3


def test_headline_skips_frontmatter() -> None:
    assert headline(V1) == "# Durability v1"
    assert headline("\n\nplain first line\n# later\n") == "# later"
    assert headline("just text\n") == "just text"
    assert headline("") == ""


# --- ops ------------------------------------------------------------------------------

def test_restore_without_confirm_previews_a_diff_and_changes_nothing(box: VaultBox) -> None:
    put_note(box.ctx(), NOTE, V1)
    put_note(box.ctx(), NOTE, V2)
    [vid] = _ids(box)
    env = restore_note(box.ctx(), NOTE, vid[:6], confirm=False)
    assert env.ok and env.action == "preview" and not env.data.restored
    assert "-# Durability v2" in env.data.diff and "+# Durability v1" in env.data.diff
    assert (box.vault / NOTE).read_bytes() == V2.encode()
    assert _ids(box) == [vid]


def test_restore_brings_back_the_exact_bytes_and_can_be_undone(box: VaultBox) -> None:
    put_note(box.ctx(), NOTE, V1)
    put_note(box.ctx(), NOTE, V2)
    [vid] = _ids(box)
    env = restore_note(box.ctx(), NOTE, vid, confirm=True)
    assert env.ok and env.action == "restored" and env.data.restored
    assert (box.vault / NOTE).read_bytes() == V1.encode("utf-8")
    newest = box.ctx().history.versions(NOTE)[0]  # the text the restore replaced
    assert box.ctx().history.text(NOTE, newest) == V2
    restore_note(box.ctx(), NOTE, newest.version_id, confirm=True)
    assert (box.vault / NOTE).read_bytes() == V2.encode("utf-8")
    again = restore_note(box.ctx(), NOTE, newest.version_id, confirm=True)
    assert again.action == "unchanged" and not again.data.restored


def test_unknown_path_and_version_are_not_found(box: VaultBox) -> None:
    with pytest.raises(EchoError) as info:
        note_history(box.ctx(), "nowhere/missing.md")
    assert info.value.code == ExitCode.NOT_FOUND and "nowhere/missing.md" in info.value.message
    with pytest.raises(EchoError) as info:
        restore_note(box.ctx(), "nowhere/missing.md", "abcd", confirm=True)
    assert info.value.code == ExitCode.NOT_FOUND and "nowhere/missing.md" in info.value.message
    put_note(box.ctx(), NOTE, V1)
    put_note(box.ctx(), NOTE, V2)
    with pytest.raises(EchoError) as info:
        restore_note(box.ctx(), NOTE, "ffff0000", confirm=True)
    assert info.value.code == ExitCode.NOT_FOUND and "'ffff0000'" in info.value.message
    assert _ids(box)[0] in info.value.message


def test_history_of_a_note_never_overwritten_is_empty_not_an_error(box: VaultBox) -> None:
    put_note(box.ctx(), NOTE, V1)
    env = note_history(box.ctx(), NOTE)
    assert env.ok and env.data.versions == () and env.data.exists


# --- CLI end to end -------------------------------------------------------------------

def test_cli_put_put_history_restore(isolated_env: dict[str, str], tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "b").init()
    base = ["--vault", str(box.vault), "--state-dir", str(tmp_path / "state")]
    v1, v2 = V1.encode("utf-8"), V2.encode("utf-8")
    assert run_cli(["put", NOTE, "-", *base], env=isolated_env, stdin=v1).returncode == 0
    assert run_cli(["put", NOTE, "-", *base], env=isolated_env, stdin=v2).returncode == 0

    listed = run_cli(["history", NOTE, *base], env=isolated_env)
    assert listed.returncode == 0, listed.stderr
    assert "# Durability v1" in listed.stdout
    data = json.loads(run_cli(["history", NOTE, "--json", *base], env=isolated_env).stdout)
    [version] = data["versions"]
    vid = version["version_id"]
    assert vid in listed.stdout and version["size"] == len(v1)

    preview = run_cli(["restore", NOTE, vid, *base], env=isolated_env)
    assert preview.returncode == 0, preview.stderr
    assert "-# Durability v2" in preview.stdout and "+# Durability v1" in preview.stdout
    assert "--yes" in preview.stdout
    assert (box.vault / NOTE).read_bytes() == v2

    done = run_cli(["restore", NOTE, vid, "--yes", *base], env=isolated_env)
    assert done.returncode == 0, done.stderr
    assert (box.vault / NOTE).read_bytes() == v1
    listed = json.loads(run_cli(["history", NOTE, "--json", *base], env=isolated_env).stdout)
    assert [v["headline"] for v in listed["versions"]] == ["# Durability v2", "# Durability v1"]


def test_cli_unknown_path_or_version_exits_44(isolated_env: dict[str, str], tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "b").init()
    base = ["--vault", str(box.vault), "--state-dir", str(tmp_path / "state")]
    out = run_cli(["history", "notes/ghost.md", *base], env=isolated_env)
    assert out.returncode == 44 and "notes/ghost.md" in out.stderr
    run_cli(["put", NOTE, "-", *base], env=isolated_env, stdin=b"# a\n")
    run_cli(["put", NOTE, "-", *base], env=isolated_env, stdin=b"# b\n")
    out = run_cli(["restore", NOTE, "beef1234", "--yes", *base], env=isolated_env)
    assert out.returncode == 44 and "beef1234" in out.stderr
    assert (box.vault / NOTE).read_bytes() == b"# b\n"


def test_each_kept_version_sweeps_what_a_killed_write_left_for_any_note(
        tmp_path: Path) -> None:
    """A temp file of a dead writer (a capture killed mid-write, whatever note it was
    for) goes with the next version kept of any note, even one whose blob is already
    there (no blob written); a live writer's stays; a write leaves nothing staged."""
    from echo_core.tempfiles import host_tag, temp_name

    history = NoteHistory(tmp_path)
    history.keep("notes/a.md", V1, saved_at="t1")
    history.keep("notes/b.md", V2, saved_at="t2")
    staging = tmp_path / STAGING_DIR
    assert list(staging.iterdir()) == []
    live = staging / temp_name("x")  # this process: alive
    live.write_bytes(b"being written")
    for kept, text in (("notes/b.md", "a new text"), ("notes/a.md", V1)):  # V1: stored
        dead = staging / f".{'0' * 64}.{host_tag()}-999999999-{'ab' * 6}.tmp"  # no such pid
        dead.write_bytes(b"half a blob")
        history.keep(kept, text, saved_at="t3")
        assert sorted(staging.iterdir()) == [live]
        assert history.text(kept, history.versions(kept)[0]) == text
