"""``import --from DIR`` of an unzipped backup brings the note history in its
``.echo-history/``: the versions are merged into the vault's history (the state dir's, the
database's for PostgreSQL) so ``history`` and ``restore`` work after a restore; a merge
never drops or doubles a version, keeps the ring's 20 newest, leaves out the history of
notes the import left out, and skips (and reports) every hostile entry without writing
outside the history."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from echo_core import invoke
from echo_core.context import EchoContext, create_context
from echo_core.history import INDEX_NAME, RING_SIZE, NoteHistory, path_key
from echo_core.history_files import HISTORY_PREFIX
from echo_core.ops.backup import backup_vault
from echo_core.ops.vault_transfer import import_vault
from echo_core.ops.vault_transfer_io import NOTE_CAP
from tests.capture_kit import VaultBox, isolated_env
from tests.conftest import run_cli
from tests.postgres_kit import pg_schema_url, postgres_server

__all__ = ["pg_schema_url", "postgres_server"]  # fixtures

NOTE = "notes/plan.md"
TEXTS = ["# Plan\n\nfirst\n", "# Plan\n\nsecond\n", "# Plan\n\nthird\n"]


def _unzipped_backup(tmp_path: Path) -> Path:
    """A vault whose NOTE was written three times (two versions kept), backed up and
    unzipped into a folder."""
    box = VaultBox(tmp_path / "old").init()
    ctx = box.ctx()
    for text in TEXTS:
        ctx.vault.write_note(NOTE, text)
    env = backup_vault(ctx, out=str(tmp_path / "zips"))
    restored = tmp_path / "unzipped"
    with zipfile.ZipFile(env.data.path) as archive:
        archive.extractall(restored)
    return restored


def _log_lines(history: NoteHistory, path: str) -> int:
    data = history.files.read(f"{path_key(path)}/{INDEX_NAME}") or b""
    return len(data.splitlines())


def test_a_restore_from_a_backup_lists_and_restores_the_versions(tmp_path: Path) -> None:
    source = _unzipped_backup(tmp_path)
    new = VaultBox(tmp_path / "new")
    env = import_vault(new.ctx(), str(source))
    assert env.ok and env.data.history_versions == 2 and not env.data.history_skipped
    assert f"{HISTORY_PREFIX}/" not in env.data.hidden
    assert "note history: imported 2 version(s)" in env.message
    listed = invoke(new.ctx(), "history", {"path": NOTE})
    versions = listed.data.versions
    assert [v.headline for v in versions] == ["# Plan", "# Plan"]
    ctx = new.ctx()
    assert [ctx.history.text(NOTE, v) for v in versions] == TEXTS[1::-1]
    done = invoke(new.ctx(), "restore", {"path": NOTE, "version_id": versions[-1].version_id,
                                         "confirm": True})
    assert done.ok and new.read(NOTE) == TEXTS[0]


def test_importing_twice_adds_no_version(tmp_path: Path) -> None:
    source = _unzipped_backup(tmp_path)
    new = VaultBox(tmp_path / "new")
    import_vault(new.ctx(), str(source))
    lines = _log_lines(new.ctx().history, NOTE)
    again = import_vault(new.ctx(), str(source))
    assert again.data.history_versions == 0 and again.data.history_already == 2
    history = new.ctx().history
    assert _log_lines(history, NOTE) == lines == 2
    assert len(history.versions(NOTE)) == 2
    paths_log = (history.files.read("paths.ndjson") or b"").splitlines()
    assert paths_log == [json.dumps({"path": NOTE}).encode()]


def _ring(history: NoteHistory, texts: list[str], day: str) -> None:
    for n, text in enumerate(texts):
        history.keep(NOTE, text, saved_at=f"2024-{day}T10:{n:02d}:00+00:00")


def test_the_vaults_own_versions_stay_and_the_newest_fill_the_ring(tmp_path: Path) -> None:
    source = tmp_path / "folder"
    (source / "notes").mkdir(parents=True)
    (source / NOTE).write_text("# Plan\n\nnow\n")
    theirs = [f"# Theirs {n}\n" for n in range(RING_SIZE)]
    _ring(NoteHistory(source / HISTORY_PREFIX), theirs, "03-01")
    new = VaultBox(tmp_path / "new")
    ours = [f"# Ours {n}\n" for n in range(15)] + [theirs[0]]  # one text both hold
    _ring(new.ctx().history, ours, "02-01")
    env = import_vault(new.ctx(), str(source))
    history = new.ctx().history
    texts = [history.text(NOTE, v) for v in history.versions(NOTE)]
    assert len(texts) == RING_SIZE and set(ours) <= set(texts)
    assert texts[:4] == theirs[:-5:-1]  # the four newest of theirs fill the free places
    assert env.data.history_versions == 4 and env.data.history_already == 1
    assert len(env.data.history_skipped) == RING_SIZE - 5
    assert all("older than the 20 versions" in s.reason for s in env.data.history_skipped)
    again = import_vault(new.ctx(), str(source))
    assert again.data.history_versions == 0
    assert [history.text(NOTE, v) for v in new.ctx().history.versions(NOTE)] == texts


def test_the_history_of_a_note_the_import_skipped_is_not_imported(tmp_path: Path) -> None:
    source = tmp_path / "folder"
    (source / "notes").mkdir(parents=True)
    (source / "kept.md").write_text("# Kept\n")
    (source / NOTE).symlink_to(source / "kept.md")  # skipped: a link
    theirs = NoteHistory(source / HISTORY_PREFIX)
    theirs.keep(NOTE, "# Linked\n", saved_at="2024-03-01T10:00:00+00:00")
    theirs.keep("kept.md", "# Kept before\n", saved_at="2024-03-01T10:00:00+00:00")
    new = VaultBox(tmp_path / "new")
    env = import_vault(new.ctx(), str(source))
    assert [s.path for s in env.data.skipped] == [NOTE]
    assert env.data.history_versions == 1
    assert [s.reason.split(",")[0] for s in env.data.history_skipped] == [
        f"a version of {NOTE}"]
    assert new.ctx().history.versions(NOTE) == []
    assert len(new.ctx().history.versions("kept.md")) == 1


def _line(path: str, sha: str, saved_at: str = "2024-03-01T10:00:00+00:00") -> str:
    return json.dumps({"path": path, "version_id": sha[:12], "sha": sha,
                       "saved_at": saved_at, "size": 1, "headline": ""}) + "\n"


def test_hostile_history_entries_are_skipped_and_nothing_lands_outside(
        tmp_path: Path) -> None:
    source = tmp_path / "folder"
    source.mkdir()
    (source / "a.md").write_text("# A\n")
    theirs = NoteHistory(source / HISTORY_PREFIX)
    good = theirs.keep("a.md", "# A before\n", saved_at="2024-03-01T10:00:00+00:00")
    hist = source / HISTORY_PREFIX
    ring = hist / path_key("a.md")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ("f" * 64)).write_text("# secret\n")
    with open(ring / INDEX_NAME, "a", encoding="utf-8") as log:
        log.write("{not json\n")
        log.write(_line("a.md", "e" * 64))  # a version whose text is a huge file
        log.write(_line("a.md", "f" * 64))  # ... a symbolic link out of the folder
        log.write(_line("a.md", "d" * 64))  # ... bytes that are not its SHA-256
        log.write(_line("a.md", "c" * 64, saved_at="yesterday"))
    with open(ring / ("e" * 64), "wb") as huge:
        huge.truncate(NOTE_CAP + 10)
    (ring / ("f" * 64)).symlink_to(outside / ("f" * 64))
    (ring / ("d" * 64)).write_text("# not this\n")
    os.mkfifo(ring / ("9" * 64))  # a FIFO (opening it would block) ...
    with open(ring / INDEX_NAME, "a", encoding="utf-8") as log:
        log.write(_line("a.md", "9" * 64))
    evil = "../../etc/passwd"
    (hist / path_key(evil)).mkdir()
    (hist / path_key(evil) / INDEX_NAME).write_text(_line(evil, "b" * 64))
    (hist / path_key("x.md")).symlink_to(outside, target_is_directory=True)
    (hist / "evil.sh").write_text("rm -rf /\n")
    new = VaultBox(tmp_path / "new")
    env = import_vault(new.ctx(), str(source))
    assert env.ok and env.data.history_versions == 1
    reasons = {s.path: s.reason for s in env.data.history_skipped}
    where = f"{HISTORY_PREFIX}/{path_key('a.md')}"
    assert "2 line(s) not a version" in reasons[f"{where}/{INDEX_NAME}"]
    assert "line 2: not JSON" in reasons[f"{where}/{INDEX_NAME}"]
    assert "over 10,000,000 bytes" in reasons[f"{where}/{'e' * 64}"]
    assert "symbolic link" in reasons[f"{where}/{'f' * 64}"]
    assert "do not match its SHA-256" in reasons[f"{where}/{'d' * 64}"]
    assert "not a regular file" in reasons[f"{where}/{'9' * 64}"]
    assert "leaves the vault" in reasons[f"{HISTORY_PREFIX}/{path_key(evil)}/{INDEX_NAME}"]
    assert "symbolic link" in reasons[f"{HISTORY_PREFIX}/{path_key('x.md')}"]
    assert "not a note-history entry" in reasons[f"{HISTORY_PREFIX}/evil.sh"]
    assert sorted(p.name for p in outside.iterdir()) == ["f" * 64]
    history = new.ctx().history
    assert history.versions("a.md") == [good] and history.versions(evil) == []
    root = new.ctx().state_dir / "history"
    assert {p.name for p in root.iterdir()} == {path_key("a.md"), "paths.ndjson", ".staging"}


def test_a_history_folder_that_is_a_link_is_skipped(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    NoteHistory(elsewhere).keep("a.md", "# A before\n", saved_at="2024-03-01T10:00:00+00:00")
    source = tmp_path / "folder"
    source.mkdir()
    (source / "a.md").write_text("# A\n")
    os.symlink(elsewhere, source / HISTORY_PREFIX)
    new = VaultBox(tmp_path / "new")
    env = import_vault(new.ctx(), str(source))
    assert env.data.history_versions == 0
    assert [(s.path, "symbolic link" in s.reason) for s in env.data.history_skipped] == [
        (HISTORY_PREFIX, True)]
    assert new.ctx().history.versions("a.md") == []


def test_cli_import_reports_the_history_in_text_and_json(tmp_path: Path) -> None:
    source = _unzipped_backup(tmp_path)
    new = VaultBox(tmp_path / "new")
    args = ["import", "--from", str(source), "--vault", str(new.vault),
            "--state-dir", str(new.state)]
    done = run_cli([*args, "--json"], env=new.env())
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["history_versions"] == 2 and data["history_skipped"] == []
    again = run_cli(args, env=new.env())
    assert again.returncode == 0, again.stderr
    assert "note history: imported 0 version(s), 2 already there" in again.stdout
    helped = run_cli(["import", "--help"])
    assert ".echo-history/" in helped.stdout and "by hand" not in helped.stdout


@pytest.fixture
def pg_ctx(pg_schema_url: str, tmp_path: Path) -> Iterator[EchoContext]:
    ctx = create_context(vault=pg_schema_url, state_dir=str(tmp_path / "pg-state"),
                         env=isolated_env(tmp_path / "pg-home"))
    yield ctx
    close = getattr(ctx.vault.storage, "close", None)
    if close is not None:
        close()


def test_a_postgres_vault_gets_the_history_in_its_database(pg_ctx: EchoContext,
                                                           tmp_path: Path) -> None:
    source = _unzipped_backup(tmp_path)
    env = import_vault(pg_ctx, str(source))
    assert env.data.history_versions == 2
    again = import_vault(pg_ctx, str(source))
    assert again.data.history_versions == 0 and again.data.history_already == 2
    assert [pg_ctx.history.text(NOTE, v) for v in pg_ctx.history.versions(NOTE)] == TEXTS[1::-1]
    assert not (tmp_path / "pg-state" / "history").exists()


def test_a_rename_the_backup_recorded_is_followed_in_the_restored_vault(
        tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "old").init()
    ctx = box.ctx()
    for text in TEXTS:
        ctx.vault.write_note(NOTE, text)
    assert invoke(box.ctx(), "history", {"path": NOTE}).data.exists  # the check saw it
    os.rename(box.vault / NOTE, box.vault / "notes/roadmap.md")  # by hand
    assert invoke(box.ctx(), "history", {"path": "notes/roadmap.md"}).data.versions
    zipped = backup_vault(box.ctx(), out=str(tmp_path / "zips")).data.path
    with zipfile.ZipFile(zipped) as archive:
        assert f"{HISTORY_PREFIX}/renames.ndjson" in archive.namelist()
        archive.extractall(tmp_path / "unzipped")
    new = VaultBox(tmp_path / "new")
    assert import_vault(new.ctx(), str(tmp_path / "unzipped")).ok
    listed = invoke(new.ctx(), "history", {"path": "notes/roadmap.md"}).data.versions
    assert {v.path for v in listed} == {NOTE} and len(listed) == 2
    import_vault(new.ctx(), str(tmp_path / "unzipped"))  # again: the pair counted once
    assert new.ctx().history.renames() == [(NOTE, "notes/roadmap.md")]


def test_a_hostile_rename_log_is_skipped_pair_by_pair(tmp_path: Path) -> None:
    source = _unzipped_backup(tmp_path)
    (source / HISTORY_PREFIX / "renames.ndjson").write_text(
        json.dumps({"from": "../../etc/passwd", "to": "notes/x.md", "at": "2026"}) + "\n"
        + json.dumps({"from": NOTE, "to": "notes/kept.md", "at": "not a time"}) + "\n"
        + "{torn", "utf-8")
    new = VaultBox(tmp_path / "new")
    env = import_vault(new.ctx(), str(source))
    assert [s.path for s in env.data.history_skipped] == [f"{HISTORY_PREFIX}/renames.ndjson"]
    assert new.ctx().history.renames() == [(NOTE, "notes/kept.md")]
