"""An expired working note: ``lint --fix --apply`` archives it exactly as ``sweep --decay``
does (SPEC §2.7: ``status: archived``, the body under a dated ``## Archived`` marker), so
the two verbs leave the same bytes whichever runs, and neither finds work left by the
other. A note an older lint left at ``status: expired`` is archived by both alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.ops.lint.run import lint
from echo_core.ops.sweep import full_sweep
from tests.capture_kit import VaultBox

WORKING = "_agent/memory/working/deploy-scratch.md"
NOTE = """---
type: working
status: {status}
created: 2026-02-01
updated: 2026-02-01
tags: [working]
expires: 2026-02-15
---
# Deploy scratch

Try the blue build.

## Related
"""
ARCHIVED = """---
type: working
status: archived
created: 2026-02-01
updated: 2026-02-01
tags: [working]
expires: 2026-02-15
---
# Deploy scratch

## Archived 2026-03-01

Try the blue build.

## Related
"""


def _box(root: Path, status: str) -> VaultBox:
    box = VaultBox(root).init()
    assert box.capture("Deploy scratch", kind="working", body="Try the blue build.",
                       today="2026-02-01").ok
    assert full_sweep(box.ctx(), apply=True).ok
    (box.vault / WORKING).write_text(NOTE.format(status=status), "utf-8")  # by hand
    return box


def _expired_findings(box: VaultBox) -> list[str]:
    env = lint(box.ctx(), ("expired-working-note",))
    return [f.path for f in env.data.findings]


def _decayed(box: VaultBox) -> list[str]:
    decay = full_sweep(box.ctx(), decay=True).data.decay
    assert decay is not None
    return [w.path for w in decay.working]


@pytest.mark.parametrize("status", ["active", "expired", "Active", ""])
def test_lint_fix_archives_the_note_as_decay_does(tmp_path: Path, status: str) -> None:
    linted, decayed = _box(tmp_path / "lint", status), _box(tmp_path / "decay", status)
    assert _expired_findings(linted) == [WORKING]  # an old 'expired' one too
    env = lint(linted.ctx(), ("incomplete-frontmatter", "expired-working-note"), fix=True,
               apply=True)  # a blank status: backfilled and archived in one run
    assert env.ok and env.data.repairs and all(r.applied for r in env.data.repairs)
    assert full_sweep(decayed.ctx(), apply=True, decay=True).ok
    assert linted.read(WORKING) == decayed.read(WORKING) == ARCHIVED
    assert linted.ctx().history.versions(WORKING), "the prior version is kept"


def test_neither_verb_finds_work_the_other_left(tmp_path: Path) -> None:
    linted, decayed = _box(tmp_path / "lint", "active"), _box(tmp_path / "decay", "active")
    assert lint(linted.ctx(), fix=True, apply=True).data.repairs
    assert _decayed(linted) == []
    assert full_sweep(decayed.ctx(), apply=True, decay=True).ok
    assert _expired_findings(decayed) == []
    assert lint(linted.ctx()).data.findings == lint(decayed.ctx()).data.findings


def test_an_old_expired_mark_is_named_as_such(tmp_path: Path) -> None:
    box = _box(tmp_path, "expired")
    [finding] = lint(box.ctx(), ("expired-working-note",)).data.findings
    assert "status is expired (an older lint --fix set it), not archived" in finding.problem
    assert _decayed(box) == [WORKING]


def test_the_dry_run_says_what_the_repair_does_and_changes_nothing(tmp_path: Path) -> None:
    box = _box(tmp_path, "active")
    before = box.tree_digest()
    env = lint(box.ctx(), ("expired-working-note",), fix=True)
    [repair] = env.data.repairs
    assert "status: archived" in repair.change and "## Archived 2026-03-01" in repair.change
    assert not repair.applied and box.tree_digest() == before


def test_a_fresh_or_archived_note_is_no_finding(tmp_path: Path) -> None:
    box = _box(tmp_path, "archived")
    assert _expired_findings(box) == []
    (box.vault / WORKING).write_text(
        NOTE.format(status="active").replace("2026-02-15", "2026-03-01"), "utf-8")
    assert _expired_findings(box) == []  # expires today: not yet
