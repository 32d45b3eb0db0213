"""Where ``reflect``'s proposals come from besides a JSON list: a mined Claude Code
transcript (``transcript_proposals``). Each source gives the proposals (SPEC §4.4
objects) and, in the same order, the ``ProposalOrigin`` shown with each."""

from __future__ import annotations

import os

from echo_core.errors import usage_error
from echo_core.ops.reflect import ProposalOrigin


def transcript_proposals(path: str) -> tuple[list[object], list[ProposalOrigin | None]]:
    """The proposals ``transcript_mining.mine_file`` finds in the transcript at ``path``
    (repeats merged), with their rationale, excerpts, sessions and counts.

    Errors: ``EchoError`` 2 naming ``transcript`` when the file cannot be read (a file
    that reads but holds nothing understood gives no proposals)."""
    from echo_core.ops.transcript_mining import mine_file

    expanded = os.path.expanduser(path)
    if not os.path.isfile(expanded):
        raise usage_error(f"transcript: {path!r} is not a file; give the path of a Claude "
                          "Code transcript (~/.claude/projects/<project>/<session>.jsonl)")
    try:
        mined = mine_file(expanded)
    except OSError as exc:
        raise usage_error(f"transcript: cannot read {path!r}: {exc.strerror}") from None
    proposals: list[object] = []
    origins: list[ProposalOrigin | None] = []
    for item in mined:
        proposals.append(item.to_proposal())
        origins.append(ProposalOrigin(item.rationale, item.category, item.excerpts,
                                      item.sessions, item.turns, item.occurrences))
    return proposals, origins
