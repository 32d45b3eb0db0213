"""The session-log listing ``load`` counts from, kept per machine while no folder under
``_agent/sessions`` changed (issue 15; ``echo_core.ops.session_logs``): the same listing
as ``storage.list``, and every log added, removed or renamed counted by the next load."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from echo_core.ops.load import load
from echo_core.ops.session_logs import FILE_NAME, session_logs
from plugins.storage_fs.folder_storage import FolderStorage
from tests.capture_kit import VaultBox

SESSIONS = "_agent/sessions"
HOUR_AGO_NS = time.time_ns() - 3600 * 10**9


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def _log(box: VaultBox, name: str) -> Path:
    path = box.vault / SESSIONS / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Session\n\n## Goal\nwork\n", "utf-8")
    return path


def _settle(box: VaultBox) -> None:
    """Date every folder under the sessions folder an hour back (as if nothing changed
    there lately), so a listing of it may be kept."""
    for folder in [box.vault / SESSIONS, *(p for p in (box.vault / SESSIONS).rglob("*")
                                          if p.is_dir())]:
        os.utime(folder, ns=(HOUR_AGO_NS, HOUR_AGO_NS))


def _logs(box: VaultBox) -> list[str]:
    """The listing ``load`` counts from, less init's README."""
    names = session_logs(box.ctx().vault.storage, _cache(box))
    return [n for n in names if not n.endswith("/README.md")]


def _cache(box: VaultBox) -> Path:
    return Path(box.ctx().state_dir) / FILE_NAME


def test_the_listing_is_what_storage_list_gives(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    outside = tmp_path / "outside.md"
    outside.write_text("x", "utf-8")
    sessions = root / SESSIONS
    (sessions / "2026" / "deep").mkdir(parents=True)
    (sessions / "empty").mkdir()
    (sessions / ".hidden-dir").mkdir()
    for rel in ("2026-03-01-0900-a.md", "2026/2026-02-01-0800-b.md", "2026/deep/c.md",
                ".hidden.md", ".hidden-dir/d.md", "notes.txt"):
        (sessions / rel).write_text("x", "utf-8")
    (root / "elsewhere").mkdir()
    (root / "elsewhere/inside.md").write_text("x", "utf-8")
    (sessions / "link-in.md").symlink_to(root / "elsewhere/inside.md")
    (sessions / "link-out.md").symlink_to(outside)
    (sessions / "link-dir").symlink_to(root / "elsewhere", target_is_directory=True)
    storage = FolderStorage(str(root))
    for prefix in (SESSIONS, "", "elsewhere", "_agent/missing"):
        names, folders = storage.list_tree(prefix)
        assert names == storage.list(prefix), prefix
    names, folders = storage.list_tree(SESSIONS)
    assert set(folders) == {SESSIONS, f"{SESSIONS}/2026", f"{SESSIONS}/2026/deep",
                            f"{SESSIONS}/empty"}
    assert storage.list_tree("_agent/missing") == ([], {"_agent/missing": None})


def test_logs_added_removed_or_renamed_are_counted_by_the_next_load(box: VaultBox) -> None:
    for hhmm in ("0800", "0810", "0820"):
        _log(box, f"2026-03-02-{hhmm}-s.md")
    (box.vault / SESSIONS / "older").mkdir()  # empty when listed
    _settle(box)
    counts = [_count(box)]
    assert _cache(box).exists()
    _log(box, "2026-03-03-0900-new.md")
    counts.append(_count(box))
    _settle(box)
    _count(box)  # kept again
    (box.vault / SESSIONS / "2026-03-02-0800-s.md").unlink()
    counts.append(_count(box))
    _settle(box)
    _count(box)
    (box.vault / SESSIONS / "2026-03-02-0810-s.md").rename(box.vault / SESSIONS / "renamed.md")
    counts.append(_count(box))
    _settle(box)
    _count(box)
    _log(box, "older/2026-03-04-0700-old.md")  # only the sub-folder's mtime moves
    counts.append(_count(box))
    assert counts == [3, 4, 3, 2, 3]


def _count(box: VaultBox) -> int:
    """Session logs the brief's scope line counts (init's scope date is 2026-03-01: the
    logs of that day and later)."""
    brief = load(box.ctx(), brief=True).data.digest
    since = next(line for line in brief.splitlines() if line.startswith("## Scope"))
    counted = int(since.split("; ")[1].split(" ")[0])
    assert counted == len([n for n in _logs(box) if n.rsplit("/", 1)[-1][:4].isdigit()])
    return counted


def test_a_kept_listing_stands_while_the_folder_stamps_do(box: VaultBox) -> None:
    _log(box, "2026-02-27-0800-s.md")
    _settle(box)
    assert _logs(box) == [f"{SESSIONS}/2026-02-27-0800-s.md"]
    _log(box, "2026-02-27-0900-t.md")
    _settle(box)  # a change that kept the folder's mtime is not seen: the stamp is the key
    assert _logs(box) == [f"{SESSIONS}/2026-02-27-0800-s.md"]
    os.utime(box.vault / SESSIONS, ns=(HOUR_AGO_NS + 10**9, HOUR_AGO_NS + 10**9))
    assert len(_logs(box)) == 2


def test_a_folder_that_just_changed_is_listed_again_next_time(box: VaultBox) -> None:
    _log(box, "2026-02-27-0800-s.md")  # the folder's mtime is now
    assert _logs(box) == [f"{SESSIONS}/2026-02-27-0800-s.md"]
    assert not _cache(box).exists()


def test_an_unreadable_cache_is_listed_again(box: VaultBox) -> None:
    _log(box, "2026-02-27-0800-s.md")
    _settle(box)
    _cache(box).write_bytes(b"\x00garbage")
    assert _logs(box) == [f"{SESSIONS}/2026-02-27-0800-s.md"]
    assert _logs(box) == [f"{SESSIONS}/2026-02-27-0800-s.md"]
