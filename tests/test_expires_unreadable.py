"""Working notes decay cannot read (SPEC §2.7, §5.2): an ``expires`` that is not a date
or a ``status`` that is not one word is reported by lint (key, value, fix) and by
``sweep --decay`` as skipped; a blank status is archived in one ``--apply``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from echo_core.frontmatter import set_frontmatter_key
from echo_core.ops.lint.run import lint
from echo_core.ops.sweep import full_sweep
from tests.capture_kit import VaultBox

SCRATCH = "_agent/memory/working/deploy-scratch.md"
LATER = {"ECHO_TODAY": "2026-03-09", "ECHO_NOW": "2026-03-09T10:00:00"}


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    box = VaultBox(tmp_path).init()
    # captured 2026-02-01: expires 2026-02-15, before LATER's today
    assert box.capture("Deploy scratch", kind="working", body="Try the blue build.",
                       today="2026-02-01").ok
    return box


def _set(box: VaultBox, key: str, value: Any) -> None:
    path = box.vault / SCRATCH
    path.write_text(set_frontmatter_key(path.read_text("utf-8"), key, value), "utf-8")


UNREADABLE = [("expires", "2024-02-30"), ("expires", "02/01/2024"),
              ("expires", ["2024-02-01"]), ("status", ["active", "done"])]


@pytest.mark.parametrize(("key", "value"), UNREADABLE)
def test_lint_names_the_unreadable_key_its_value_and_the_fix(
        box: VaultBox, key: str, value: Any) -> None:
    _set(box, key, value)
    findings = [f for f in lint(box.ctx(**LATER)).data.findings if f.path == SCRATCH]
    assert [f.check for f in findings] == ["incomplete-frontmatter"], findings
    assert findings[0].problem.startswith(f"{key}: {value!r} ")
    assert "sweep --decay never archives" in findings[0].problem
    assert findings[0].fix.startswith(f"write one {'date' if key == 'expires' else 'status'}")


@pytest.mark.parametrize(("key", "value"), UNREADABLE)
def test_decay_reports_the_note_as_skipped(box: VaultBox, key: str, value: Any) -> None:
    _set(box, key, value)
    before = box.read(SCRATCH)
    env = full_sweep(box.ctx(**LATER), apply=True, decay=True)
    decay = env.data.decay
    assert decay.working == ()
    skipped = [s for s in decay.skipped if s.path == SCRATCH]
    assert len(skipped) == 1 and skipped[0].reason.startswith(f"{key}: {value!r} ")
    assert box.read(SCRATCH) == before


@pytest.mark.parametrize("blank", [None, ""])
def test_a_blank_status_is_archived_in_one_apply(box: VaultBox, blank: str | None) -> None:
    _set(box, "status", blank)
    env = full_sweep(box.ctx(**LATER), apply=True, decay=True)
    assert [w.path for w in env.data.decay.working] == [SCRATCH]
    assert box.frontmatter(SCRATCH)["status"] == "archived"
    assert "## Archived 2026-03-09" in box.read(SCRATCH)
    again = full_sweep(box.ctx(**LATER), apply=True, decay=True)
    assert again.data.decay.working == () and again.data.decay.skipped == ()


def test_a_readable_note_is_not_reported(box: VaultBox) -> None:
    findings = lint(box.ctx(ECHO_TODAY="2026-02-02")).data.findings
    assert [f for f in findings if f.path == SCRATCH] == []
    env = full_sweep(box.ctx(ECHO_TODAY="2026-02-02"), decay=True)
    assert env.data.decay.skipped == () and env.data.decay.working == ()
