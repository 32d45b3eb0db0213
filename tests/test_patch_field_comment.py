"""``patch --field``: a value with `` #`` in it is kept whole (written quoted), not cut
where YAML would start a comment; YAML values without a comment still read as typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.frontmatter import parse_frontmatter
from echo_core.ops.patch import patched_text
from echo_core.ops.patch_targets import field_value
from tests.cli_inproc import vault_runner

NOTE = "---\r\ntopic: old\r\ntags: [a]\r\n---\r\n# N\r\n"


@pytest.mark.parametrize("typed", [
    "Meeting #3 notes", "Fix for issue #42", "urgent # high", "ends with #",
    "tab\t#here", "[a, b] # why", "null # not yet",
])
def test_a_field_value_with_a_comment_mark_is_kept_whole(typed: str) -> None:
    assert field_value(typed) == typed
    after = patched_text("n.md", NOTE, "replace", "field", "topic", typed)
    assert parse_frontmatter(after)[0]["topic"] == typed
    assert after.replace(after.split("\r\n")[1], "topic: old", 1) == NOTE  # one line changed


@pytest.mark.parametrize(("typed", "value"), [
    ("issue#42", "issue#42"), ('"quoted #1"', "quoted #1"), ('["a #b", c]', ["a #b", "c"]),
    ("[a, b]", ["a", "b"]), ("on-hold", "on-hold"), ("12", 12),
])
def test_a_field_value_without_a_comment_still_reads_as_typed(typed: str, value: object) -> None:
    assert field_value(typed) == value


def test_patch_cli_keeps_a_hash_in_a_field_and_in_a_list_item(
        isolated_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    (run.vault / "n.md").write_bytes(NOTE.encode())
    assert run("patch", "n.md", "--op", "replace", "--field", "topic",
               "Meeting #3 notes").code == 0
    assert run("patch", "n.md", "--op", "append", "--field", "tags", "urgent # high").code == 0
    front = parse_frontmatter((run.vault / "n.md").read_text(encoding="utf-8"))[0]
    assert front["topic"] == "Meeting #3 notes"
    assert front["tags"] == ["a", "urgent # high"]
