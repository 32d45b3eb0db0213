"""Recovering an interrupted capture never files its planned title against a note a
person wrote at that path meanwhile.

Recovery leaves such a note as it is (a conflict), but it used to commit the planned
entity anyway: the planned title then resolved to the person's note, the person's own
title did not resolve, and the next capture of the planned title appended into their
note. Now the index takes the note as the person left it.
"""

from __future__ import annotations

import json
from pathlib import Path

from echo_core.ops import write_intent
from echo_core.ops.resolve import resolve
from echo_core.ops.write_intent import recover_pending
from tests.capture_kit import VaultBox

PATH = "resources/concepts/widget-plan.md"
PERSON = ("---\ntype: concept\nstatus: active\ncreated: 2026-03-01\nupdated: 2026-03-01\n"
          "tags: [concept]\n---\n# My Own Thoughts\n\nPERSON TEXT\n")


def test_a_conflicted_note_is_indexed_as_the_person_left_it(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    box.capture("Seed", kind="concept", body="seed")
    folder = box.ctx().state_dir / write_intent.INTENT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "0123456789abcdef.json").write_text(json.dumps({
        "op_id": "0123456789abcdef",
        "writes": [{"path": PATH, "text": "# Widget Plan\n\nagent body\n", "prior_sha": None}],
        "entities": [{"slug": "widget-plan", "aliases": [], "h": "0", "kind": "concept",
                      "path": PATH, "title": "Widget Plan"}]}), encoding="utf-8")
    (box.vault / PATH).write_text(PERSON, encoding="utf-8")
    recovered = recover_pending(box.ctx())
    assert recovered.conflicts == (PATH,)
    assert (box.vault / PATH).read_text(encoding="utf-8") == PERSON
    assert box.entity("widget-plan").title == "My Own Thoughts"
    found = resolve(box.ctx(), "My Own Thoughts").data
    assert found.match and found.path == PATH
    again = box.capture("Widget Plan", kind="concept", body="agent fact")
    assert again.action == "duplicate-gate"  # the name is the person's note's: asked, not merged
    assert (box.vault / PATH).read_text(encoding="utf-8") == PERSON
