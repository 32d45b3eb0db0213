"""What ``sweep --decay`` did or would do (SPEC §2.7): the report's data.

One attrs class per kind of change, so the readable report and ``--json`` list the same
facts: working notes archived, projects moved to the folder of their status (and stale
projects only proposed for on-hold), path-style links rewritten after a move, and
Observations moved to their yearly archive. Nothing in it is ever a deletion.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class WorkingArchived:
    """An expired working note (``expires`` before today, status still active) that gets
    ``status: archived`` and its body under a dated ``## Archived`` marker."""

    path: str
    expires: str


@attrs.frozen
class ProjectMove:
    """A project note moved from ``path`` to ``to`` with ``status``. ``stale_since``: the
    date its staleness was measured from (``updated``, else ``created``, else the file's
    date), "" for a move asked for by the note's own status."""

    slug: str
    path: str
    to: str
    status: str
    reason: str
    stale_since: str = ""


@attrs.frozen
class LinkRewrite:
    """A path-style link in note ``path`` rewritten from ``old`` to ``new`` (a moved
    project); ``count`` links in that note."""

    path: str
    old: str
    new: str
    count: int


@attrs.frozen
class ObservationsArchived:
    """``count`` Observations bullets moved from the preferences note to ``archive``
    (``first`` is the first line of the oldest one moved)."""

    archive: str
    count: int
    first: str


@attrs.frozen
class DecaySkipped:
    """A note decay would change but leaves alone, and why."""

    path: str
    reason: str


@attrs.frozen
class DecayReport:
    """The decay section of a sweep.

    ``working``, ``moves``, ``links`` and ``observations`` are made with ``--apply`` (or
    would be, in a dry run). ``proposed``: projects stale for ``STALE_PROJECT_DAYS`` or
    more, put on hold only when confirmed (``--projects SLUG,...`` or ``all``): a proposal
    is not a change. ``skipped``: left alone, with the reason."""

    working: tuple[WorkingArchived, ...] = ()
    moves: tuple[ProjectMove, ...] = ()
    proposed: tuple[ProjectMove, ...] = ()
    links: tuple[LinkRewrite, ...] = ()
    observations: tuple[ObservationsArchived, ...] = ()
    skipped: tuple[DecaySkipped, ...] = ()

    @property
    def changes(self) -> int:
        """How many changes decay made or would make (proposals are not changes)."""
        return (len(self.working) + len(self.moves) + len(self.links)
                + sum(o.count for o in self.observations))
