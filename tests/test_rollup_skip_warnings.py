"""``rollup`` never passes over what may belong in the period in silence: a session log
whose name does not start with a real day, a note whose frontmatter cannot be read, that
gives a date key twice with one value in the period, or that was modified in the period
without a date, is named in one warning per reason (a count and the first paths). A
note whose file time is older than the period is not read, and the text says so."""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

import pytest

from echo_core.ops.rollup import rollup
from tests.capture_kit import VaultBox
from tests.cli_inproc import CliRun, run_main

WEEK = "2026-03-10"  # ISO week 2026-W11: 2026-03-09 .. 2026-03-15
IN_WEEK = _dt.datetime(2026, 3, 11, 12, tzinfo=_dt.UTC).timestamp()
OLD = _dt.datetime(2020, 1, 1, tzinfo=_dt.UTC).timestamp()
SESSION = "---\ntype: session\n---\n# Session {0}\n\n## Goal\ngoal {0}\n"
BAD_SESSIONS = ("2026-02-30-1200-bad-date.md", "2026-3-10-1200-short-date.md",
                "session-no-date.md")
CONCEPTS = "resources/concepts"
SHOWN_SKIPPED = 3  # paths a skip warning names before "and N more"


def _write(box: VaultBox, path: str, text: str, mtime: float | None = None) -> str:
    (box.vault / path).parent.mkdir(parents=True, exist_ok=True)
    (box.vault / path).write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(box.vault / path, (mtime, mtime))
    return path


def _warning(warnings: tuple[str, ...], words: str) -> str:
    [found] = [w for w in warnings if words in w]
    return found


def _cli(box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
         *args: str) -> CliRun:
    for key, value in box.env(ECHO_TODAY=WEEK).items():
        monkeypatch.setenv(key, value)
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    return run_main(["rollup", *base, *args], capsys, monkeypatch)


def test_session_logs_without_a_real_day_in_their_name_are_named_in_a_warning(
        tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()  # init writes _agent/sessions/README.md: not a log
    for name in (*BAD_SESSIONS, "2026-03-10-0900-good.md"):
        _write(box, f"_agent/sessions/{name}", SESSION.format(name))
    env = rollup(box.ctx(), "week", WEEK)
    assert [s.path for s in env.data.sessions] == ["_agent/sessions/2026-03-10-0900-good.md"]
    said = _warning(env.warnings, "session log(s)")
    assert said.startswith("rollup skipped 3 session log(s)") and "README" not in said
    assert all(f"_agent/sessions/{name}" in said for name in BAD_SESSIONS)
    assert "YYYY-MM-DD-HHMM-<slug>.md" in said


def test_a_long_skip_list_shows_the_first_paths_and_how_many_more(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    for n in range(SHOWN_SKIPPED + 2):
        _write(box, f"_agent/sessions/log-{n}.md", SESSION.format(n))
    said = _warning(rollup(box.ctx(), "week", WEEK).warnings, "session log(s)")
    assert said.startswith(f"rollup skipped {SHOWN_SKIPPED + 2} session log(s)")
    assert "_agent/sessions/log-0.md" in said and "log-3.md" not in said
    assert " and 2 more;" in said


def test_notes_whose_dates_cannot_be_read_are_named_by_reason(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    unclosed = _write(box, f"{CONCEPTS}/unclosed.md",
                      "---\ntype: concept\ncreated: 2026-03-13\n# Unclosed\n")
    dup = _write(box, f"{CONCEPTS}/dup.md",
                 "---\ntype: concept\ncreated: 2026-03-10\ncreated: 2026-01-01\n---\n# Dup\n")
    _write(box, f"{CONCEPTS}/dup-old.md",  # neither value in the week: nothing to say
           "---\ntype: concept\ncreated: 2025-03-10\ncreated: 2026-01-01\n---\n# Dup old\n")
    bare = _write(box, f"{CONCEPTS}/bare.md", "# Bare, edited this week\n", IN_WEEK)
    _write(box, f"{CONCEPTS}/bare-later.md", "# Bare, edited after the week\n")
    env = rollup(box.ctx(), "week", WEEK)
    assert not {unclosed, dup, bare} & {n.path for n in env.data.created}
    assert unclosed in _warning(env.warnings, "frontmatter cannot be read")
    said = _warning(env.warnings, "more than once")
    assert said.startswith("rollup skipped 1 note(s)") and dup in said and "dup-old" not in said
    said = _warning(env.warnings, "no created or updated")
    assert said.startswith("rollup skipped 1 note(s)") and bare in said


def test_a_note_whose_file_time_is_older_is_not_read_and_the_text_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    copied = _write(box, f"{CONCEPTS}/copied.md",
                    "---\ntype: concept\ncreated: 2026-03-10\n---\n# Copied with cp -p\n", OLD)
    done = _cli(box, capsys, monkeypatch, "--date", WEEK)
    assert done.code == 0, done.err
    assert copied not in done.out
    last = done.out.splitlines()[-1]
    assert last.startswith("Not read: 1 of ") and "before 2026-03-08" in last and "touch" in last
    os.utime(box.vault / copied, (IN_WEEK, IN_WEEK))  # what the text says to do
    done = _cli(box, capsys, monkeypatch, "--date", WEEK)
    assert copied in done.out and "Not read:" not in done.out


def test_a_note_that_is_not_utf8_is_not_counted_as_left_unread(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    (box.vault / CONCEPTS / "latin1.md").write_bytes(b"---\ntype: concept\n---\n# Caf\xe9\n")
    data = rollup(box.ctx(), "week", WEEK).data
    assert data.notes_read == data.notes_considered
