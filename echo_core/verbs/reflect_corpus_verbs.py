"""``reflect corpus``, declared once: mine every Claude Code transcript into reflection
proposals, resumably, with a summary table (issue 17 item 3; the work is in
``echo_core.ops.reflect_corpus*``). On the CLI only: a long batch job over the local
transcripts folder, like ``reindex``."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core.models import Envelope
from echo_core.operations import Access, CliSurface, Operation, lazy_type, param

_TITLE_CHARS = 60


@attrs.frozen(kw_only=True)
class ReflectCorpusParams:
    """What ``reflect corpus`` takes."""

    projects_dir: str = param("~/.claude/projects", min_length=1, max_length=4096,
                              help="The folder of Claude Code transcripts (every *.jsonl "
                                   "below it).")
    apply: bool = param(False, help="Write the proposals (default: a dry run that writes "
                                    "nothing to the vault).")
    state: str = param("", max_length=4096, help="The resumable state file (default: "
                                                 "reflect-corpus.json in the state dir).")
    batch: int = param(50, ge=1, le=100_000, help="Transcripts mined between two saves of "
                                                  "the state file.")
    top: int = param(10, ge=0, le=1000, help="Titles listed per category.")


def _short(text: str, width: int = _TITLE_CHARS) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _mb(count: int) -> str:
    return f"{count / 1_000_000:.1f} MB"


def _table(data: Any) -> list[str]:
    header = (f"  {'category':<12} {'proposals':>9} {'occurrences':>11} {'to notes':>8} "
              f"{'to inbox':>8}")
    lines = [header]
    for row in data.categories:
        lines.append(f"  {row.category:<12} {row.proposals:>9} {row.occurrences:>11} "
                     f"{row.to_notes:>8} {row.to_inbox:>8}")
    return lines


def _top(data: Any) -> list[str]:
    lines: list[str] = []
    category = None
    for item in data.top:
        if item.category != category:
            category = item.category
            lines.append(f"Most repeated {category}:")
        lines.append(f"  {item.occurrences:>4}x {_short(item.title)} -> {item.destination}")
    return lines


def _items(data: Any) -> list[str]:
    lines: list[str] = []
    for item in data.items:
        if item.outcome in ("gated", "contradiction", "error", "invalid"):
            lines.append(f"  {item.outcome}: {_short(item.title)}: {item.detail}")
    return lines


def render_corpus(env: Envelope[Any]) -> str:
    """The run's counts, the summary table, the top titles, and what apply did."""
    data = env.data
    counts = (f"Transcripts under {data.projects_dir}: {data.transcripts} ({data.mined} "
              f"mined now, {data.changed} of them changed, {data.reused} unchanged since "
              f"the last run, {data.removed} gone), {_mb(data.bytes_read)} read in "
              f"{data.seconds:.1f} s.")
    lines = [counts, f"State: {data.state_path}"]
    if data.state_problem:
        lines.append(f"Note: {data.state_problem}")
    for skip in data.skipped:
        lines.append(f"  skipped {skip.path}: {skip.reason}")
    lines += ["", "Applied:" if data.applied else "Would write (nothing written yet):"]
    lines += _table(data)
    lines += _top(data)
    lines += _items(data)
    lines.append(env.message)
    return "\n".join(lines)


def run_corpus(ctx: Any, p: ReflectCorpusParams) -> Envelope[Any]:
    """``ops.reflect_corpus_report.corpus_reflect``."""
    from echo_core.ops.reflect_corpus_report import corpus_reflect

    return corpus_reflect(ctx, p.projects_dir, apply=p.apply, state=p.state, batch=p.batch,
                          top=p.top)


def corpus_access(p: ReflectCorpusParams) -> Access:
    """A write only when applying."""
    return "write" if p.apply else "read"


REFLECT_CORPUS = Operation(
    "reflect-corpus",
    "Mine every Claude Code transcript into proposals (resumable). Dry run by default.",
    ("Walk every transcript under projects_dir, mine each for preferences, corrections, "
     "error-then-fix pairs and ideas, merge repeats across sessions, and show what would "
     "be written; apply=true writes them through capture. Resumable: a state file records "
     "what each transcript gave."),
    ReflectCorpusParams, run_corpus, lazy_type("echo_core.ops.reflect_corpus_report",
                                               "ReflectCorpusResult"),
    access=corpus_access, render=render_corpus, mcp=None,
    cli=CliSurface(command=("reflect", "corpus"), help="""Mine every Claude Code transcript into proposals (resumable). Dry run by default.

\b
Example:
  echo-memory reflect corpus                  # preview: the summary table
  echo-memory reflect corpus --apply          # write them
  echo-memory reflect corpus --projects-dir ~/old/.claude/projects --batch 20

Every *.jsonl under --projects-dir (default ~/.claude/projects) is mined, in path
order, for preferences ("always ...", "use X not Y"), corrections, error-then-fix
pairs and ideas; repeats merge across sessions (occurrences counted). Without
--apply nothing is written to the vault: it prints, per category, how many
proposals and occurrences it found and where they would go, then the most
repeated titles. With --apply each proposal goes through capture: confidence
0.6 and up with its kind (semantic), the rest to the inbox; gated ones are
reported. A proposal written once is never written again (a ledger next to the
state file), so re-running --apply only writes what is new.

Resumable: the state file (--state, default reflect-corpus.json in the state
dir) records each transcript's size, time, content hash and what it gave, and
is saved after every --batch transcripts. A run killed midway resumes where it
stopped; a transcript that changed is mined again (its old share replaced);
one deleted drops out. Progress is drawn on stderr when it is a terminal.

Exit 2 when --projects-dir is not a folder or the state file cannot be
written (nothing written); unreadable transcripts are skipped and listed."""),
)
