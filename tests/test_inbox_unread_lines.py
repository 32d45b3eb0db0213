"""Inbox lines a person typed in another form are said, not skipped silently.

``triage list`` and the session brief counted only ``- YYYY-MM-DD: text`` lines: a
``*`` bullet, an Obsidian task, an undated line or an impossible date were never listed
or counted, and nothing said so. Now they are listed as not triaged (and counted in the
brief); struck lines and the inbox's own prose are not.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from echo_core.ops.load import load
from echo_core.ops.triage import list_inbox, unread_lines
from echo_core.vault import INBOX_PATH
from tests.capture_kit import VaultBox

TYPED = ("- 2026-02-27: dated dash item\n* 2026-02-28: star bullet item\n"
         "- [ ] 2026-02-28: task item\n- call the bank (no date)\n"
         "- 2026-02-30: impossible date\n- ~~2026-02-01: old~~ (processed 2026-02-02)\n")
OTHER = ["* 2026-02-28: star bullet item", "- [ ] 2026-02-28: task item",
         "- call the bank (no date)", "- 2026-02-30: impossible date"]


def test_lines_in_another_form_are_listed_as_not_triaged(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    inbox = box.vault / INBOX_PATH
    inbox.write_text(inbox.read_text() + TYPED)
    listed = list_inbox(box.ctx())
    assert [item.text for item in listed.data.items] == ["dated dash item"]
    assert list(listed.data.unread) == OTHER
    assert "4 lines not in the item form" in listed.message
    brief = load(box.ctx(), brief=True).data.digest
    assert "4 lines not in the item form" in brief


def test_the_inbox_prose_and_struck_lines_are_not_unread() -> None:
    text = "# Inbox\n\nQuick captures, one `- YYYY-MM-DD: text` line each.\n" \
           "- ~~2026-02-01: old~~\n- 2026-02-27: fine\n"
    assert unread_lines(text, _dt.date(2026, 3, 1)) == []
