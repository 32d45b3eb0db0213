"""A note that is not UTF-8 never fails ``eval``, ``heat`` or ``rollup`` for the whole
vault: each leaves it out with one warning line naming it (as ``lint``, ``sweep`` and
``recall`` do) and answers about the rest, exit 0."""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

import pytest

from echo_core.ops.heat import PROMOTE_MIN_HITS, heat
from echo_core.ops.hit_counts import record_hits
from echo_core.ops.rollup import rollup
from echo_core.ops.self_eval import self_eval
from tests.capture_kit import VaultBox
from tests.cli_inproc import CliRun, run_main

LATIN1 = b"# Jos\xe9\n\nCaf\xe9 latinword.\n"
JOSE = "resources/people/jose.md"
ADA = "resources/people/ada-lovelace.md"
DAILY = "journal/daily/2026-03-01.md"
SESSION = "_agent/sessions/2026-03-01-0900-latin.md"
NOW = "2026-03-01T09:30:00"
ADA_BODY = ("Ada wrote the first published program for the analytical engine of Babbage.\n\n"
            "## Bernoulli numbers\n\n"
            "Her note G computed the Bernoulli numbers with nested loops on punched cards.")


def _box(tmp_path: Path) -> VaultBox:
    """A vault with one note worth asking about and a person note that is Latin-1."""
    box = VaultBox(tmp_path).init()
    assert box.capture("Ada Lovelace", kind="person", body=ADA_BODY).ok
    (box.vault / JOSE).write_bytes(LATIN1)
    return box


def _cli(box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
         *args: str) -> CliRun:
    for key, value in box.env(ECHO_NOW=NOW).items():
        monkeypatch.setenv(key, value)
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    return run_main([*args[:1], *base, *args[1:]], capsys, monkeypatch)


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("warning:")]


def test_eval_skips_a_note_that_is_not_utf8_with_one_warning(tmp_path: Path) -> None:
    box = _box(tmp_path)
    env = self_eval(box.ctx(ECHO_NOW=NOW), save=False)
    assert env.ok and env.data.queries > 0
    assert env.warnings == (f"{JOSE} is not UTF-8 text; eval skipped it",)


def test_cli_eval_exits_0_and_names_the_note_it_skipped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    box = _box(tmp_path)
    done = _cli(box, capsys, monkeypatch, "eval", "--no-save")
    assert done.code == 0, done.err
    assert "R@5" in done.out
    assert _warnings(done.err) == [f"warning: {JOSE} is not UTF-8 text; eval skipped it"]


def test_heat_skips_a_note_that_is_not_utf8_and_still_promotes_the_hot_one(
        tmp_path: Path) -> None:
    box = _box(tmp_path)
    for _ in range(PROMOTE_MIN_HITS):
        record_hits(box.ctx().state_dir, _dt.date(2026, 3, 1), [ADA])
    env = heat(box.ctx(), apply=True)
    assert env.ok and [c.path for c in env.data.promote] == [ADA]
    assert env.warnings == (f"{JOSE} is not UTF-8 text; heat skipped it",)
    assert "always_load: true" in box.read(ADA)
    assert (box.vault / JOSE).read_bytes() == LATIN1


def test_heat_leaves_out_a_hot_note_that_is_not_utf8_naming_it_once(tmp_path: Path) -> None:
    box = _box(tmp_path)
    for _ in range(PROMOTE_MIN_HITS):
        record_hits(box.ctx().state_dir, _dt.date(2026, 3, 1), [JOSE])
    env = heat(box.ctx())
    assert env.ok and env.data.promote == () and env.data.skipped == ()
    assert env.warnings == (f"{JOSE} is not UTF-8 text; heat skipped it",)


def test_cli_heat_exits_0_and_names_the_note_it_skipped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    box = _box(tmp_path)
    done = _cli(box, capsys, monkeypatch, "heat")
    assert done.code == 0, done.err
    assert "always loaded now" in done.out
    assert _warnings(done.err) == [f"warning: {JOSE} is not UTF-8 text; heat skipped it"]


def _rollup_box(tmp_path: Path) -> tuple[VaultBox, str]:
    """In the week of 2026-03-01: a good session log and one that is Latin-1, a daily note
    that is Latin-1, and an indexed decision rewritten as Latin-1 (modified in the week,
    its path returned)."""
    box = VaultBox(tmp_path).init()
    good = box.capture("Use SQLite", kind="decision", date="2026-02-27", today="2026-02-27")
    assert good.ok
    bad = box.capture("Use Postgres", kind="decision", date="2026-02-27", today="2026-02-27")
    assert bad.ok
    (box.vault / bad.data.path).write_bytes(LATIN1)
    in_week = _dt.datetime(2026, 2, 27, 12, tzinfo=_dt.UTC).timestamp()
    os.utime(box.vault / bad.data.path, (in_week, in_week))
    sessions = box.vault / "_agent/sessions"
    (sessions / "2026-02-26-1000-good.md").write_text(
        "# Session: good\n\n## Goal\nShip it\n", encoding="utf-8")
    (box.vault / SESSION).write_bytes(LATIN1)
    (box.vault / DAILY).write_bytes(LATIN1)
    return box, bad.data.path


def test_rollup_skips_notes_that_are_not_utf8_and_lists_the_rest(tmp_path: Path) -> None:
    box, bad = _rollup_box(tmp_path)
    env = rollup(box.ctx(), "week", "2026-03-01")
    assert env.ok
    data = env.data
    assert [s.goal for s in data.sessions] == [("Ship it",)]
    assert [d.title for d in data.decisions] == ["Use SQLite"]
    assert sorted(env.warnings) == sorted(f"{p} is not UTF-8 text; rollup skipped it"
                                          for p in (SESSION, DAILY, bad))


def test_cli_rollup_exits_0_and_names_each_note_it_skipped_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    box, _bad = _rollup_box(tmp_path)
    done = _cli(box, capsys, monkeypatch, "rollup", "--date", "2026-03-01")
    assert done.code == 0, done.err
    assert "Sessions (1):" in done.out and "Use SQLite" in done.out
    warned = _warnings(done.err)
    assert len(warned) == 3 and all(line.endswith("rollup skipped it") for line in warned)
    assert any(DAILY in line for line in warned) and any(SESSION in line for line in warned)
