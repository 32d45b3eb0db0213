"""``append`` before a trailing ``## Related`` section: the new line takes the ending of
the line it follows, and every other byte of the note stays as it was (mixed CRLF/LF
notes included). (Named for the allowed test-file pattern; it is about
``notes.before_trailing_related``.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.notes import before_trailing_related
from tests.cli_inproc import vault_runner


@pytest.mark.parametrize(("before", "after"), [
    (b"# A\r\nline1\n\r\n## Related\r\n- [[x]]\r\n",
     b"# A\r\nline1\n- new\n\r\n## Related\r\n- [[x]]\r\n"),
    (b"# A\nline1\r\n\n## Related\n- [[x]]\n",
     b"# A\nline1\r\n- new\r\n\n## Related\n- [[x]]\n"),
    (b"# A\r\nline1\r\n\r\n\r\n\n## Related\r\n- [[x]]\r\n",
     b"# A\r\nline1\r\n- new\r\n\r\n\r\n\n## Related\r\n- [[x]]\r\n"),
    (b"# A\nline1\n## Related\n- [[x]]\n", b"# A\nline1\n- new\n\n## Related\n- [[x]]\n"),
], ids=["lf-line-in-crlf-note", "crlf-line-in-lf-note", "several-blank-lines",
        "no-blank-line"])
def test_the_appended_line_changes_no_other_byte(before: bytes, after: bytes) -> None:
    assert before_trailing_related(before.decode(), "- new") == after.decode()


def test_cli_append_keeps_a_mixed_ending_note_byte_for_byte(
        isolated_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    run = vault_runner(tmp_path, capsys, monkeypatch)
    (run.vault / "mixed.md").write_bytes(b"# A\r\nline1\n\r\n## Related\r\n- [[x]]\r\n")
    assert run("append", "mixed.md", "- new").code == 0
    assert (run.vault / "mixed.md").read_bytes() == (
        b"# A\r\nline1\n- new\n\r\n## Related\r\n- [[x]]\r\n")
