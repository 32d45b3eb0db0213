"""A worker process for the corpus-mode kill tests (not a test module).

    python -m tests.reflect_corpus_worker mine ROOT STATE BATCH KILL_AT
        mine_corpus(ROOT, STATE, batch=BATCH); when KILL_AT > 0 the process SIGKILLs
        itself as the KILL_AT-th transcript of this run is done (mid-batch: its batch
        is not saved yet)
    python -m tests.reflect_corpus_worker apply VAULT STATE_DIR ROOT STATE KILL_AT
        reflect corpus --apply on VAULT; when KILL_AT > 0 it SIGKILLs itself after the
        KILL_AT-th capture, before that capture's ledger line is written (the worst
        moment: written but not recorded)

The environment (ECHO_TODAY, HOME, XDG_*) comes from the test.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def mine(root: str, state: str, batch: int, kill_at: int) -> None:
    from echo_core import progress
    from echo_core.ops.reflect_corpus import mine_corpus

    first: list[int] = []

    def report(done: int, total: int) -> None:
        if not first:
            first.append(done)  # transcripts reused from the state at the start
        if kill_at and done - first[0] >= kill_at:
            _die()

    with progress.reporting(report):
        scan = mine_corpus(root, state, batch=batch)
    print(scan.mined, scan.reused)


def apply(vault: str, state_dir: str, root: str, state: str, kill_at: int) -> None:
    from echo_core.context import create_context
    from echo_core.ops import reflect_corpus_apply
    from echo_core.ops.reflect_corpus_report import corpus_reflect

    record = reflect_corpus_apply._record
    calls = [0]

    def record_or_die(path: Any, entry: dict[str, Any]) -> None:
        calls[0] += 1
        if kill_at and calls[0] >= kill_at:
            _die()
        record(path, entry)

    reflect_corpus_apply._record = record_or_die
    ctx = create_context(vault=vault, state_dir=state_dir, env=dict(os.environ))
    envelope = corpus_reflect(ctx, root, apply=True, state=state)
    print(envelope.message)


if __name__ == "__main__":
    mode, *args = sys.argv[1:]
    if mode == "mine":
        mine(args[0], args[1], int(args[2]), int(args[3]))
    else:
        apply(args[0], args[1], args[2], args[3], int(args[4]))
