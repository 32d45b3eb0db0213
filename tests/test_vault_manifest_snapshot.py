"""The manifest's snapshot file: a fast copy of the notes table that is never trusted
when the table changed after it was written, nor when it is torn."""

from __future__ import annotations

from pathlib import Path

from echo_core.vault_manifest import SNAPSHOT_SUFFIX, VaultManifest


def _manifest(tmp_path: Path) -> VaultManifest:
    manifest = VaultManifest(tmp_path)
    manifest.replace({"a.md": (1, 10, "h1"), "b.md": (2, 20, "h2")}, {"": 5}, baseline="x")
    return manifest


def test_the_snapshot_reads_back_what_the_table_holds(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path)
    first = manifest.snapshot()
    assert dict(first) == manifest.notes()
    assert (tmp_path / f"vault-manifest.sqlite{SNAPSHOT_SUFFIX}").exists()
    again = VaultManifest(tmp_path).snapshot()  # from the file, in a new process' view
    assert dict(again) == manifest.notes() and again.stamps == {"a.md": (1, 10), "b.md": (2, 20)}


def test_a_change_to_the_notes_makes_the_old_snapshot_unused(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path)
    manifest.snapshot()
    VaultManifest(tmp_path).update({"a.md": (3, 30, "h3"), "b.md": None})
    assert dict(manifest.snapshot()) == {"a.md": (3, 30, "h3")}


def test_facts_alone_keep_the_snapshot(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path)
    manifest.snapshot()
    snapshot = tmp_path / f"vault-manifest.sqlite{SNAPSHOT_SUFFIX}"
    before = snapshot.stat().st_mtime_ns
    manifest.update({}, {"": 6}, fast_sweep="y")
    manifest.snapshot()
    assert snapshot.stat().st_mtime_ns == before


def test_a_torn_or_foreign_snapshot_is_read_from_the_table(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path)
    snapshot = tmp_path / f"vault-manifest.sqlite{SNAPSHOT_SUFFIX}"
    manifest.snapshot()
    whole = snapshot.read_bytes()
    for bad in (whole[: len(whole) // 2], b"\x00garbage", b""):
        snapshot.write_bytes(bad)
        assert dict(VaultManifest(tmp_path).snapshot()) == manifest.notes()


def test_a_manifest_from_before_snapshots_gets_a_generation(tmp_path: Path) -> None:
    manifest = _manifest(tmp_path)
    db = manifest._connect()
    db.execute("DELETE FROM meta WHERE k = 'generation'")
    assert dict(manifest.snapshot()) == manifest.notes()
    assert manifest.get("generation")


def test_directly_in_lists_a_folders_own_notes_not_its_sub_folders(tmp_path: Path) -> None:
    """What the folder pass compares a listed folder with: its own notes only (a folder
    whose thousands of notes sit a level down costs no row of theirs)."""
    paths = ["top.md", "a/x.md", "a/y.md", "a/b/z.md", "a/b/c/w.md", "a0/v.md", "a-b/u.md",
             "ä/ü.md", "ä/ö/t.md", "a.md"]
    manifest = VaultManifest(tmp_path)
    manifest.replace({p: (1, 1, "h") for p in paths}, {"": 1}, baseline="x")
    for folder in ("", "a", "a/b", "a/b/c", "ä", "ä/ö", "a0", "absent"):
        want = sorted(p for p in paths if p.rpartition("/")[0] == folder)
        assert sorted(manifest.directly_in(folder)) == want, folder
