"""Importing a plain folder of notes into a new vault says the vault needs ``init``
(every verb refused it as "not an echo-memory vault" with nothing said at import), and
``init`` then makes it a vault keeping every imported file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def test_a_plain_folder_imported_into_a_new_vault_says_to_init(
        isolated_env: dict[str, str], tmp_path: Path) -> None:
    source, vault = tmp_path / "plain", tmp_path / "vault"
    (source / "sub").mkdir(parents=True)
    (source / "sub/ok.md").write_text("# ok\n")
    env = {**isolated_env, "ECHO_VAULT": str(vault)}
    done = run_cli(["import", "--from", str(source), "--json"], env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["not_a_vault"] is True and "echo-memory init" in result["message"]
    assert run_cli(["init"], env=env).returncode == 0
    assert (vault / "sub/ok.md").read_text() == "# ok\n"
    assert run_cli(["ls", "sub"], env=env).stdout.strip() == "sub/ok.md"
