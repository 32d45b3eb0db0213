"""``reflect corpus`` as one call: mine the corpus (``reflect_corpus``), sum it up per
category, and, only when asked, write it (``reflect_corpus_apply``).

``corpus_reflect(ctx, projects_dir, apply=False, state="", batch=50, top=10)`` returns an
``Envelope[ReflectCorpusResult]``: action ``dry-run`` (nothing written to the vault; the state
file in the state dir is still kept, so the next run resumes) or ``reflected``.

Errors (``EchoError``, nothing written): 2 when ``projects_dir`` is not a folder or the
state file's folder cannot be written; 78 when applying to a vault not initialised.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.errors import usage_error
from echo_core.models import Envelope
from echo_core.operations.spelling import spell
from echo_core.ops.reflect_corpus import CorpusScan, SkippedTranscript, mine_corpus
from echo_core.ops.reflect_corpus_apply import AppliedItem, apply_proposals, ledger_path
from echo_core.ops.reflect_corpus_state import STATE_FILE

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.ops.transcript_mining import MinedProposal

__all__ = ["CategoryRow", "ReflectCorpusResult", "TopTitle", "corpus_reflect", "destination"]

DEFAULT_PROJECTS_DIR = "~/.claude/projects"
CATEGORIES = ("preference", "correction", "error-fix", "idea")


@attrs.frozen
class CategoryRow:
    """One line of the summary table: a category's proposals and where they would go."""

    category: str
    proposals: int
    occurrences: int
    to_notes: int
    to_inbox: int


@attrs.frozen
class TopTitle:
    """One of the most repeated proposals of a category."""

    category: str
    title: str
    occurrences: int
    sessions: int
    destination: str   # the kind it would be captured with, or "inbox"


@attrs.frozen
class ReflectCorpusResult:
    """Result data of ``reflect corpus``."""

    projects_dir: str
    state_path: str
    applied: bool
    transcripts: int
    mined: int
    changed: int
    reused: int
    removed: int
    bytes_read: int
    seconds: float
    skipped: tuple[SkippedTranscript, ...]
    categories: tuple[CategoryRow, ...]
    top: tuple[TopTitle, ...]
    proposals: tuple[MinedProposal, ...]
    items: tuple[AppliedItem, ...] = ()
    state_problem: str = ""


def destination(proposal: MinedProposal) -> str:
    """Where reflect's confidence routing sends ``proposal``: its kind, or ``inbox``."""
    from echo_core.ops.proposals import INBOX_BELOW

    return proposal.kind if proposal.kind and proposal.confidence >= INBOX_BELOW else "inbox"


def _categories(proposals: Sequence[MinedProposal]) -> tuple[CategoryRow, ...]:
    names = list(CATEGORIES) + sorted({p.category for p in proposals} - set(CATEGORIES))
    rows = []
    for name in names:
        mine = [p for p in proposals if p.category == name]
        inbox = sum(1 for p in mine if destination(p) == "inbox")
        rows.append(CategoryRow(name, len(mine), sum(p.occurrences for p in mine),
                                len(mine) - inbox, inbox))
    return tuple(rows)


def _top(proposals: Sequence[MinedProposal], per_category: int) -> tuple[TopTitle, ...]:
    out: list[TopTitle] = []
    for row in _categories(proposals):
        mine = [p for p in proposals if p.category == row.category]
        mine.sort(key=lambda p: (-p.occurrences, -len(p.sessions)))  # stable: corpus order
        out += [TopTitle(p.category, p.title, p.occurrences, len(p.sessions), destination(p))
                for p in mine[:per_category]]
    return tuple(out)


def _state_file(ctx: EchoContext, state: str) -> Path:
    return Path(os.path.expanduser(state)) if state else Path(ctx.state_dir) / STATE_FILE


def corpus_reflect(ctx: EchoContext, projects_dir: str = DEFAULT_PROJECTS_DIR, *,
                   apply: bool = False, state: str = "", batch: int = 50,
                   top: int = 10) -> Envelope[ReflectCorpusResult]:
    """Mine every transcript under ``projects_dir`` and preview, or with ``apply`` write,
    the merged proposals (module docstring)."""
    root = Path(os.path.expanduser(projects_dir))
    if not root.is_dir():
        what = "is not a folder" if root.exists() else "does not exist"
        raise usage_error(f"{spell('projects_dir', projects_dir)}: {root} {what} (Claude "
                          "Code keeps its transcripts in ~/.claude/projects)")
    if apply:
        from echo_core.ops.capture import require_initialised

        require_initialised(ctx)
    state_path = _state_file(ctx, state)
    try:
        scan = mine_corpus(root, state_path, batch=batch)
    except OSError as exc:
        raise usage_error(f"{spell('state', str(state_path))}: cannot write the state file "
                          f"({exc.strerror or exc})") from None
    items = (tuple(apply_proposals(ctx, scan.proposals, ledger_path(state_path)))
             if apply else ())
    report = _report(scan, apply, items, top)
    return Envelope(True, Action.REFLECTED if apply else Action.DRY_RUN, _message(report), report)


def _report(scan: CorpusScan, apply: bool, items: tuple[AppliedItem, ...],
            top: int) -> ReflectCorpusResult:
    return ReflectCorpusResult(
        scan.projects_dir, scan.state_path, apply, scan.transcripts, scan.mined, scan.changed,
        scan.reused, scan.removed, scan.bytes_read, round(scan.seconds, 3), scan.skipped,
        _categories(scan.proposals), _top(scan.proposals, top), scan.proposals, items,
        scan.state_problem)


def _message(report: ReflectCorpusResult) -> str:
    counts = (f"{report.transcripts} transcripts ({report.mined} mined, {report.reused} "
              f"unchanged, {len(report.skipped)} skipped): {len(report.proposals)} proposals")
    if not report.applied:
        return (f"preview (nothing written): {counts}; run again with {spell('apply')} to "
                "write them")
    outcomes: dict[str, int] = {}
    for item in report.items:
        outcomes[item.outcome] = outcomes.get(item.outcome, 0) + 1
    done = ", ".join(f"{n} {name}" for name, n in sorted(outcomes.items()))
    return f"applied: {counts}; {done or 'nothing to write'}"
