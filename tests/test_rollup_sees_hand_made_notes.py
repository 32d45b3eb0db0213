"""``rollup`` counts a note a person made by hand without waiting for a sweep: it now
lets the indexes catch up first, as recall and resolve do; the note was left out of
"created" until some other command had indexed it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

NOTE = ("---\ntype: concept\nstatus: active\ncreated: 2026-03-01\nupdated: 2026-03-01\n"
        "tags: [concept]\n---\n# Hand Made\n\ntext\n")


def test_a_hand_made_note_is_in_the_rollup_at_once(isolated_env: dict[str, str],
                                                   vault_dir: Path) -> None:
    env = {**isolated_env, "ECHO_VAULT": str(vault_dir)}
    assert run_cli(["init"], env=env).returncode == 0
    (vault_dir / "resources/concepts/hand-made.md").write_text(NOTE, encoding="utf-8")
    done = run_cli(["rollup", "--date", "2026-03-01", "--json"], env=env)
    assert done.returncode == 0, done.stderr
    created = [n["path"] for n in json.loads(done.stdout)["created"]]
    assert "resources/concepts/hand-made.md" in created
