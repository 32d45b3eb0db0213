"""A full sweep killed after it rewrote notes and before it rebuilt the recall index (its
writes no longer upsert each note into that index) leaves nothing stale for good: the
next fast sweep brings every rewritten note into the recall index, and then finds
nothing more to do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from echo_core.context import create_context
from echo_core.ops.fast_sweep import fast_sweep
from echo_core.ops.recall import query_terms
from echo_core.ops.recall_index import rebuild_index
from tests.capture_kit import VaultBox
from tests.conftest import REPO

#: Runs ``sweep --apply`` and dies (``os._exit``) where the recall rebuild would start.
DIES_BEFORE_REBUILD = """
import os, sys
sys.path.insert(0, {repo!r})
from echo_core.context import create_context
from echo_core.ops.sweep import full
full.rebuild_index = lambda *a, **k: os._exit(9)
ctx = create_context(vault={vault!r}, state_dir={state!r}, env={env!r})
full.full_sweep(ctx, apply=True)
"""

QUERIES = ["zorblax", "quintessa", "harbour", "lanterns"]


def _searches(box: VaultBox, state: Path | None = None) -> list[list[str]]:
    ctx = create_context(vault=str(box.vault), state_dir=str(state or box.state),
                         env=box.env(ECHO_FRESHNESS="off"))
    if state is not None:
        rebuild_index(ctx)
    ranker = ctx.ranker_upkeep.persistent
    assert ranker is not None
    return [sorted(p for p, _ in ranker.search(query_terms(ctx, q)[0], 50)) for q in QUERIES]


def test_a_sweep_killed_before_its_recall_rebuild_is_mended_by_the_next_fast_sweep(
        tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    concepts = box.vault / "resources/concepts"
    concepts.mkdir(parents=True, exist_ok=True)
    (concepts / "zorblax.md").write_text("# Zorblax\n\nA harbour of lanterns.\n\n"
                                         "## Related\n\n- [[Quintessa]]\n", "utf-8")
    (concepts / "quintessa.md").write_text("# Quintessa\n\nNothing about the harbour.\n",
                                           "utf-8")
    assert fast_sweep(box.ctx(ECHO_FRESHNESS="off")).ok  # the baseline both indexes stand on
    before = (concepts / "quintessa.md").read_text("utf-8")
    done = subprocess.run(
        [sys.executable, "-c", DIES_BEFORE_REBUILD.format(
            repo=str(REPO), vault=str(box.vault), state=str(box.state),
            env=box.env(ECHO_FRESHNESS="off"))],
        capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 9, done.stderr
    after = (concepts / "quintessa.md").read_text("utf-8")
    assert after != before and "[[zorblax]]" in after  # the sweep wrote its backlink
    assert "resources/concepts/quintessa.md" not in _searches(box)[0]  # index still old
    mended = fast_sweep(box.ctx(ECHO_FRESHNESS="off")).data
    assert "resources/concepts/quintessa.md" in mended.changed
    assert _searches(box) == _searches(box, tmp_path / "fresh-state")
    assert "resources/concepts/quintessa.md" in _searches(box)[0]
    again = fast_sweep(box.ctx(ECHO_FRESHNESS="off")).data
    assert (again.new, again.changed, again.gone) == ((), (), ())
