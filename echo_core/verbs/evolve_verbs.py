"""``evolve``, declared once (SPEC §2.6): a note's new version, the old one archived."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from echo_core.models import Envelope
from echo_core.operations import Access, CliArg, CliParam, CliSurface, McpSurface, Operation, param
from echo_core.text_source import read_text_source
from echo_core.verbs.note_verbs import CLI_PATH, MAX_PATH


@attrs.frozen(kw_only=True)
class EvolveParams:
    """What ``evolve`` takes."""

    path: str = param(help="Vault-relative path of the note that changes, e.g. "
                      "resources/concepts/deploy-process.md.", min_length=1,
                      max_length=MAX_PATH, cli=CLI_PATH)
    reason: str = param(help="Why it changes (one line), kept in the archived version as "
                        "superseded_reason.", min_length=1, max_length=500,
                        cli=CliParam(positional=True))
    text: str = param(help="The whole new text of the note; frontmatter keys it leaves "
                      "out carry over from the old note, a key left empty drops one.",
                      min_length=1, max_length=1_000_000, cli=None)
    dry_run: bool = param(False, help="Say where the old version would go; write nothing.")
    base: str | None = param(None, help="The version of the note the new text was made "
                             "from (the `version` of `get --json`): when the note has "
                             "changed since (a capture or a person's edit landed), nothing "
                             "is written (exit 1); get it again and redo the edit.",
                             min_length=4, max_length=64, cli=CliParam(metavar="VERSION"))


def _read_source(values: Mapping[str, Any]) -> Mapping[str, Any]:
    out = dict(values)
    out["text"] = read_text_source(out.pop("source"), "- | FILE")
    return out


def run_evolve(ctx: Any, p: EvolveParams) -> Envelope[Any]:
    """``ops.evolve.evolve_note``."""
    from echo_core.ops.evolve import evolve_note

    return evolve_note(ctx, p.path, p.reason, p.text, dry_run=p.dry_run, base=p.base)


def evolve_access(p: EvolveParams) -> Access:
    """A write, unless it is a dry run."""
    return "read" if p.dry_run else "write"


def _evolve_result() -> type:
    from echo_core.ops.evolve import EvolveResult

    return EvolveResult


EVOLVE = Operation(
    "evolve", "Replace the note at PATH with a new version; the old one is archived.",
    ("Rewrite a note whose content is no longer true (a reversed decision, a changed "
     "process) while keeping the old version: it moves to _agent/archive/ with the reason "
     "and the new text links to it. Use it instead of put when the change should stay "
     "traceable. Returns the path and the archive path."),
    EvolveParams, run_evolve, _evolve_result, access=evolve_access, lock_param="path",
    mcp=McpSurface(tool="echo_evolve"),
    cli=CliSurface(extra=(CliArg("source", "- for stdin, or a local file with the new text.",
                                 metavar="- | FILE"),), prepare=_read_source,
                   help="""Replace the note at PATH with a new version; the old one is archived.

The current text is kept, byte for byte, at _agent/archive/<path>--<today>.md with
superseded_by, superseded_at and superseded_reason added to its frontmatter; the new
text is written in place with supersedes pointing at the archive. Nothing is deleted.
Frontmatter keys of the old note that the new text does not set carry over as they
were, and so do its trailing ## Related links when the new text has none; the new
text's own keys win, and a key left empty in it (e.g. `aliases:`) drops that key.

\b
Example:
  echo-memory evolve resources/concepts/deploy-process.md \\
      "deploys moved to Argo CD" - < new-deploy-process.md"""),
)
