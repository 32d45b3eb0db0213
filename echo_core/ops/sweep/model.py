"""What a full sweep found and changed (or would change): the report's data.

Every kind of change has its own attrs class, so the human report and ``--json`` list
the same facts: entities added, updated or dropped; frontmatter keys added per note (and
notes whose frontmatter could not be edited line-wise); reciprocal links; the marker;
entity-index files set aside; alias proposals; the recall index rebuild.
"""

from __future__ import annotations

import attrs

from echo_core.ops.sweep.decay_model import DecayReport


@attrs.frozen
class EntityChange:
    """One entry of the entity index added, updated or dropped. ``fields``: for an
    update, which of path, kind, title, aliases, h changed; ``reason``: for a drop, why
    (the note is gone, or no longer an entity)."""

    slug: str
    path: str
    kind: str
    title: str
    fields: tuple[str, ...] = ()
    reason: str = ""


@attrs.frozen
class FrontmatterFill:
    """Keys added to one note's frontmatter (one line each), with their values as text."""

    path: str
    keys: tuple[str, ...]
    values: tuple[str, ...] = ()


@attrs.frozen
class NoteSkipped:
    """A note the sweep left alone, and why (e.g. frontmatter it cannot edit line-wise)."""

    path: str
    reason: str


@attrs.frozen
class LinkAdded:
    """A ``## Related`` line added to ``path`` linking back to ``target`` (which lists
    ``path`` under its own ``## Related``)."""

    path: str
    target: str


@attrs.frozen
class MarkerRepair:
    """The vault marker rewritten (missing or damaged) or its schema stamped."""

    action: str  # "rewritten" | "stamped"
    reason: str
    created: str = ""


@attrs.frozen
class SetAside:
    """A damaged entity-index file moved out of the way (copied to ``to``, then
    replaced by the rebuilt index), never deleted."""

    path: str
    to: str
    reason: str


@attrs.frozen
class AliasProposal:
    """An alias learned from resolve misses (SPEC §5.5): ``mention`` for entity ``slug``."""

    slug: str
    path: str
    alias: str
    reason: str


@attrs.frozen
class SweepPhases:
    """Seconds spent per phase (read+parse, plan, apply writes, entity index, recall)."""

    scan: float = 0.0
    plan: float = 0.0
    write: float = 0.0
    entities: float = 0.0
    recall: float = 0.0


@attrs.frozen
class SweepResult:
    """What the full sweep did (``applied``) or would do (a dry run)."""

    applied: bool
    notes: int
    entities: int
    entities_added: tuple[EntityChange, ...] = ()
    entities_updated: tuple[EntityChange, ...] = ()
    entities_dropped: tuple[EntityChange, ...] = ()
    frontmatter: tuple[FrontmatterFill, ...] = ()
    skipped: tuple[NoteSkipped, ...] = ()
    links: tuple[LinkAdded, ...] = ()
    marker: MarkerRepair | None = None
    set_aside: tuple[SetAside, ...] = ()
    index_problem: str = ""
    aliases: tuple[AliasProposal, ...] = ()
    recall_indexed: int = 0
    unreadable: tuple[str, ...] = ()
    seconds: float = 0.0
    phases: SweepPhases = SweepPhases()
    #: ``sweep --decay``'s own section (None: decay was not asked for)
    decay: DecayReport | None = None

    @property
    def changes(self) -> int:
        """How many changes (vault and entity index) the sweep made or would make."""
        return (len(self.entities_added) + len(self.entities_updated)
                + len(self.entities_dropped) + len(self.frontmatter) + len(self.links)
                + (self.marker is not None) + len(self.set_aside) + len(self.aliases)
                + (self.decay.changes if self.decay is not None else 0))
