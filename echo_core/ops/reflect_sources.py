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

    Errors: ``EchoError`` 2 naming ``transcript`` when the file cannot be read, or
    when not one of its lines is a JSON record (a binary file, a markdown note: not a
    transcript). A transcript whose records hold nothing to propose gives no proposals.
    """
    from echo_core.ops.transcript_mining import mine_file
    from echo_core.ops.transcript_parse import ParseTally

    expanded = os.path.expanduser(path)
    if not os.path.isfile(expanded):
        raise usage_error(f"transcript: {path!r} is not a file; give the path of a Claude "
                          "Code transcript (~/.claude/projects/<project>/<session>.jsonl)")
    tally = ParseTally()
    try:
        mined = mine_file(expanded, tally)
    except OSError as exc:
        raise usage_error(f"transcript: cannot read {path!r}: {exc.strerror}") from None
    if tally.lines and tally.bad == tally.lines:
        raise usage_error(f"transcript: {path!r} is not a Claude Code transcript (none of "
                          f"its {tally.lines} line(s) is a JSON record); give the path of "
                          "one (~/.claude/projects/<project>/<session>.jsonl)")
    proposals: list[object] = []
    origins: list[ProposalOrigin | None] = []
    for item in mined:
        proposals.append(item.to_proposal())
        origins.append(ProposalOrigin(item.rationale, item.category, item.excerpts,
                                      item.sessions, item.turns, item.occurrences))
    return proposals, origins
