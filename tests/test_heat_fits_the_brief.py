"""``heat`` promotes only a note the brief can show whole: one longer than the brief shows
of a note (``ALWAYS_LOAD_NOTE_CHARS``; a multi-megabyte note, say) or one that would push
the always-load block, heading included, past its share of ``ECHO_LOAD_BUDGET`` is left
out with the reason, and nothing is written for it."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any

import pytest

from echo_core.ops.always_load import always_load_item
from echo_core.ops.digest import ALWAYS_LOAD_NOTE_CHARS, ALWAYS_LOAD_SHARE, TRUNCATED
from echo_core.ops.heat import BLOCK_HEADING, PROMOTE_MIN_HITS, heat
from echo_core.ops.hit_counts import record_hits
from echo_core.ops.load import load
from tests.capture_kit import VaultBox
from tests.cli_inproc import CliRun, run_main

ADA = "resources/people/ada-lovelace.md"
RUNBOOK = "resources/concepts/zanzibar-runbook.md"
DAY = _dt.date(2026, 3, 1)


def _hot(box: VaultBox, *paths: str, hits: int = PROMOTE_MIN_HITS) -> None:
    for _ in range(hits):
        record_hits(box.ctx().state_dir, DAY, paths)


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Ada Lovelace", kind="person", body="Wrote the first program.").ok
    assert box.capture("Zanzibar runbook", kind="concept", body="Step one.").ok
    huge = "\n".join(f"Step {i}: the zanzibar deployment runbook, in detail."
                     for i in range(60_000))  # ~3.4 MB
    path = box.vault / RUNBOOK
    path.write_text(path.read_text("utf-8").replace("Step one.", huge), "utf-8")
    return box


def test_heat_leaves_out_a_multi_megabyte_note_and_says_why(box: VaultBox) -> None:
    _hot(box, RUNBOOK, hits=PROMOTE_MIN_HITS + 3)  # hotter than Ada
    _hot(box, ADA)
    env = heat(box.ctx())
    assert [c.path for c in env.data.promote] == [ADA]
    assert [c.path for c in env.data.skipped] == [RUNBOOK]
    reason = env.data.skipped[0].reason
    assert f"over the {ALWAYS_LOAD_NOTE_CHARS} characters the brief shows of one note" in reason


def test_heat_apply_never_marks_a_note_too_long_for_the_brief(box: VaultBox) -> None:
    _hot(box, RUNBOOK, ADA)
    before = box.read(RUNBOOK)
    done = heat(box.ctx(), apply=True)
    assert done.data.always_load == (ADA,)
    assert box.read(RUNBOOK) == before
    digest = load(box.ctx(), brief=True).data.digest
    assert "### [[ada-lovelace]]" in digest
    assert "### [[zanzibar-runbook]]" not in digest
    assert f"{TRUNCATED} read {RUNBOOK}" not in digest
    assert heat(box.ctx(), apply=True).action == "unchanged"


@pytest.mark.parametrize("room", [len(BLOCK_HEADING) - 1, len(BLOCK_HEADING)])
def test_heat_counts_the_always_load_heading_so_the_brief_shows_every_promoted_note(
        box: VaultBox, room: int) -> None:
    note = box.vault / ADA  # long enough that the rest of the brief fits its budget too
    note.write_text(note.read_text("utf-8").replace(
        "Wrote the first program.", "Wrote the first program. " + "On the engine. " * 60),
        "utf-8")
    item = always_load_item(ADA, box.read(ADA), ALWAYS_LOAD_NOTE_CHARS, TRUNCATED)
    assert TRUNCATED not in item
    share = len(item) + 1 + room  # room for the block's heading, or one character short
    budget = str(share * ALWAYS_LOAD_SHARE)
    _hot(box, ADA)
    env = heat(box.ctx(ECHO_LOAD_BUDGET=budget), apply=True)
    digest = load(box.ctx(ECHO_LOAD_BUDGET=budget), brief=True).data.digest
    shown = "### [[ada-lovelace]]" in digest
    assert [c.path for c in env.data.promote] == ([ADA] if shown else [])
    assert [c.path for c in env.data.skipped] == ([] if shown else [ADA])
    assert shown is (room == len(BLOCK_HEADING))


def test_cli_heat_names_the_note_left_out_and_why(
        box: VaultBox, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _hot(box, RUNBOOK)
    for key, value in box.env().items():
        monkeypatch.setenv(key, value)
    args = ["heat", "--vault", str(box.vault), "--state-dir", str(box.state)]
    prose: CliRun = run_main(args, capsys, monkeypatch)
    assert prose.code == 0, prose.err
    assert "left out (1):" in prose.out
    assert RUNBOOK in prose.out and "the brief shows of one note" in prose.out
    data: dict[str, Any] = json.loads(run_main([*args, "--json"], capsys, monkeypatch).out)
    assert data["promote"] == [] and data["skipped"][0]["path"] == RUNBOOK
