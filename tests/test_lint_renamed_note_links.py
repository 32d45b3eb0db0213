"""``lint`` reports a link a note renamed by hand left behind.

``charles-babbage.md`` renamed to ``babbage-charles.md``: ``[[charles-babbage]]`` still
resolved through the entity's title ("Charles Babbage"), so lint was clean while
Obsidian, which follows file names, showed the link unresolved. A link a person writes
by title (``[[Charles Babbage]]``) is still taken as resolving, as before.
"""

from __future__ import annotations

from pathlib import Path

from echo_core.ops.index_sync import sync_paths
from tests.capture_kit import VaultBox
from tests.lint_kit import run

OLD = "resources/people/charles-babbage.md"
NEW = "resources/people/babbage-charles.md"


def test_a_link_by_a_renamed_notes_old_file_name_is_broken(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    box.capture("Ada Lovelace", kind="person", body="x")
    box.capture("Charles Babbage", kind="person", body="Worked with Ada Lovelace.")
    (box.vault / "notes").mkdir()
    (box.vault / "notes/by-title.md").write_text("See [[Charles Babbage]].\n")
    (box.vault / OLD).rename(box.vault / NEW)
    sync_paths(box.ctx(), [OLD, NEW, "notes/by-title.md"])
    broken = [f for f in run(box).findings if f.check == "broken-wikilink"]
    assert {f.path for f in broken} >= {"resources/people/ada-lovelace.md"}
    ada = next(f for f in broken if f.path == "resources/people/ada-lovelace.md")
    assert "[[charles-babbage]]" in ada.problem and NEW in ada.problem
    assert ada.fix == "write [[babbage-charles]] instead"
    assert not [f for f in broken if f.path == "notes/by-title.md"]
