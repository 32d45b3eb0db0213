"""``fm``'s JSON-VALUE is JSON a user gave us: one nested deeper than the decoder goes, or
an integer longer than Python converts, is a usage error naming the value, and the note
is not touched.

The parser is ``_parse_value`` in ``echo_core/verbs/note_verbs.py``, which reads through
``echo_core.user_json.parse_user_json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.errors import ExitCode
from tests.cli_inproc import vault_runner


@pytest.mark.parametrize("value", ["[" * 3000 + "]" * 3000, "9" * 5000], ids=["deep", "huge"])
def test_fm_hostile_json_value_is_a_usage_error_and_writes_nothing(
        isolated_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    (run.vault / "n.md").write_text("# n\n", encoding="utf-8")
    done = run("fm", "n.md", "--json", "k", value)
    assert done.code == ExitCode.USAGE, done
    assert "not valid JSON" in json.loads(done.out)["error"]["message"]
    assert (run.vault / "n.md").read_text(encoding="utf-8") == "# n\n"
