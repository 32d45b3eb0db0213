"""``lint`` reports the entity index as stored, and says honestly what a note added by
hand means: not yet in the index, added by the next command that reads the notes; it
said "resolve and capture miss it" while both found the note (each catches up first)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

NOTE = ("---\ntype: concept\nstatus: active\ncreated: 2026-01-01\nupdated: 2026-01-01\n"
        "tags: [concept]\n---\n# Hand Made\n\ntext\n")
PATH = "resources/concepts/hand-made.md"


def test_a_note_added_by_hand_is_drift_said_truly(isolated_env: dict[str, str],
                                                  vault_dir: Path) -> None:
    env = {**isolated_env, "ECHO_VAULT": str(vault_dir)}
    assert run_cli(["init"], env=env).returncode == 0
    (vault_dir / PATH).write_text(NOTE, encoding="utf-8")
    [drift] = [f for f in json.loads(run_cli(["lint", "--json"], env=env).stdout)["findings"]
               if f["check"] == "index-drift"]
    assert drift["path"] == PATH and "miss it" not in drift["problem"]
    assert "next command that reads the notes adds it" in drift["problem"]
    resolved = json.loads(run_cli(["resolve", "Hand Made", "--json"], env=env).stdout)
    assert resolved["path"] == PATH
    after = json.loads(run_cli(["lint", "--json"], env=env).stdout)["findings"]
    assert not [f for f in after if f["check"] == "index-drift"]
