"""``sweep --decay``: forgetting without loss (SPEC §2.7).

Three steps, each in its own module, planned from one read of the notes they touch and
reported in the sweep's ``decay`` section:

1. Observations of the operator preferences beyond ``KEEP_OBSERVATIONS`` (30) move,
   oldest first, to ``_agent/memory/episodic/observations-archive-YYYY.md``
   (``decay_observations``: archives written before the preferences note);
2. expired working notes, PreCompact checkpoints included, get ``status: archived`` and
   their body under a dated ``## Archived`` marker (``decay_working``; a blank status
   counts as the kind's, and one decay cannot read is reported in ``skipped``);
3. projects move to the folder of their status; projects not updated for
   ``STALE_PROJECT_DAYS`` (30) are proposed for on-hold and put there only when
   confirmed with ``projects`` (slugs, or ``all``) (``project_moves``), path-style
   links to a moved note rewritten.

``plan_decay`` reads and plans (a bad ``projects`` value raises exit 2 before anything
is written); ``apply_decay`` writes, the caller holding the vault lock. Writes go through
``ctx.vault_for_rebuild()`` (each replaced or deleted text kept in the note history);
the full sweep that runs next rebuilds the entity and recall indexes from the notes as
decay left them. Nothing is ever deleted but the old path of a moved project, whose text
is at its new path. A second run finds nothing to do.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import attrs

from echo_core.edit_retry import planned_again_if_edited
from echo_core.errors import EchoError, EditedMeanwhile
from echo_core.frontmatter import set_frontmatter_key
from echo_core.ops.sweep.decay_model import DecayReport, LinkRewrite, ProjectMove
from echo_core.ops.sweep.decay_observations import (
    PREFERENCES_PATH,
    ObservationsPlan,
    archive_years,
    plan_observations,
)
from echo_core.ops.sweep.decay_working import WorkingWrite, plan_working
from echo_core.ops.sweep.project_moves import (
    PROJECTS,
    MoveWrite,
    ProjectPlan,
    blocked,
    finishes_move,
    plan_links,
    plan_projects,
    project_paths,
    rewrite_links,
)
from echo_core.storage_base import none_if_absent

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.protocols import Storage
    from echo_core.vault import Vault

BATCH = 512


@attrs.frozen
class DecayPlan:
    """Everything decay writes, in the order it writes it, and the report."""

    observations: ObservationsPlan
    working: tuple[WorkingWrite, ...]
    projects: ProjectPlan
    links: dict[str, tuple[str, str, list[LinkRewrite]]]  # path -> (prior, text, rewrites)
    report: DecayReport


def _read(storage: Storage, paths: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for start in range(0, len(paths), BATCH):
        for path, text in storage.read_many(list(paths[start:start + BATCH])).items():
            if text is not None:
                out[path] = text
    return out


def _read_one(storage: Storage, path: str) -> str | None:
    return none_if_absent(lambda: storage.read(path))


def _markdown(storage: Storage, prefix: str) -> list[str]:
    return [p for p in storage.list(prefix) if p.endswith(".md")]


def _mtime(storage: Storage, path: str) -> float | None:
    try:
        return storage.stat(path).mtime
    except (EchoError, OSError):
        return None


def _linking_notes(storage: Storage, moves: Sequence[MoveWrite]) -> Iterator[tuple[str, str]]:
    """(path, text) of every note that may hold a path-style link to a moved note."""
    sources = {w.move.path for w in moves}
    needles = [w.move.path.removesuffix(".md") for w in moves]
    paths = [p for p in _markdown(storage, "") if p not in sources]
    for path, text in _read(storage, paths).items():
        if any(needle in text for needle in needles):
            yield path, text


def plan_decay(ctx: EchoContext, confirm: Sequence[str] = ()) -> DecayPlan:
    """Read what decay touches and plan it (module docstring). Errors: 2 naming
    ``projects`` for a slug that is no project note."""
    storage = ctx.vault.storage
    today = ctx.today()
    project_texts = _read(storage, project_paths(_markdown(storage, PROJECTS)))
    projects = plan_projects(project_texts, lambda p: _mtime(storage, p), today, confirm)
    every = [w.move for w in projects.moves]
    projects = attrs.evolve(projects, moves=tuple(  # a moved note's links to itself too
        attrs.evolve(w, text=rewrite_links(w.text, every)[0]) for w in projects.moves))
    preferences = _read_one(storage, PREFERENCES_PATH)
    archives = {p: _read_one(storage, p) for p in archive_years(preferences, today)}
    observations = plan_observations(preferences, archives, today)
    working_route = ctx.manifest.route("working")
    working, skipped = plan_working(_read(storage, _markdown(storage, working_route.folder)),
                                    today, working_route.status)
    moving = [w for w in projects.moves if blocked(w) is None]
    links: dict[str, tuple[str, str, list[LinkRewrite]]] = {}
    if moving:
        texts = dict(_linking_notes(storage, moving))
        for path, (text, rewrites) in plan_links(texts, [w.move for w in moving]).items():
            links[path] = (texts[path], text, rewrites)
    skipped += [s for w in projects.moves if (s := blocked(w)) is not None]
    report = DecayReport(
        working=tuple(w.archived for w in working), moves=tuple(w.move for w in moving),
        proposed=projects.proposed,
        links=tuple(r for _prior, _text, rewrites in links.values() for r in rewrites),
        observations=observations.report, skipped=(*skipped, *projects.skipped))
    return DecayPlan(observations, tuple(working), projects, links, report)


def apply_decay(ctx: EchoContext, plan: DecayPlan) -> tuple[DecayReport, tuple[str, ...]]:
    """Write ``plan`` (caller holds the vault lock): archives, then the preferences note;
    the working notes; each moved project at its new path, the rewritten links, then the
    old paths deleted. Returns the report of what was written and the notes a person
    saved while decay wrote them (``Vault.update_note``), left as saved and not in the
    report: an archive or the preferences note (then the observations stay in the
    preferences for the next run, which writes no line twice and reports them then), a
    working note. A note whose links are rewritten is read and rewritten again instead
    (the report lists the rewrites made), and a moved project saved at its old path is
    moved again with that save (``_old_path_deleted``)."""
    vault = ctx.vault_for_rebuild()
    edited: list[str] = []
    obs = plan.observations
    moved = obs.preferences is not None and obs.preferences != obs.preferences_prior
    for archive in obs.archives:
        if not _updated(vault, archive.path, archive.text, archive.prior, edited):
            moved = False  # its observations must stay in the preferences
            break
    else:
        if moved:
            assert obs.preferences is not None
            moved = _updated(vault, PREFERENCES_PATH, obs.preferences,
                             obs.preferences_prior, edited)
    archived = tuple(w.archived for w in plan.working
                     if _updated(vault, w.archived.path, w.text, w.prior, edited))
    moving = [w for w in plan.projects.moves if blocked(w) is None]
    for write in moving:
        if not finishes_move(write):
            vault.write_note(write.move.to, write.text, prior=write.existing)
    moves = [w.move for w in moving]
    links: list[LinkRewrite] = []
    for path in sorted(plan.links):
        links += planned_again_if_edited(functools.partial(_relinked, vault, path, moves))
    for write in moving:
        planned_again_if_edited(functools.partial(_old_path_deleted, vault, write))
    report = attrs.evolve(plan.report, working=archived, links=tuple(links),
                          observations=plan.report.observations if moved else ())
    return report, tuple(edited)


def _old_path_deleted(vault: Vault, write: MoveWrite) -> None:
    """Delete a moved project's old path. A person's save there since the plan moves
    with the note: the new path gets their text first (with the move's status line set
    again), only while it still holds what the move wrote (``Vault.update_note``)."""
    now = vault.text_or_none(write.move.path)
    if now is None:
        return
    if now != write.prior:
        carried = now
        if write.text != write.prior:  # the move set the status line: set it again
            with contextlib.suppress(EchoError):
                carried = set_frontmatter_key(now, "status", write.move.status)
        vault.update_note(write.move.to, carried, vault.text_or_none(write.move.to))
    vault.delete_note(write.move.path)


def _updated(vault: Vault, path: str, text: str, prior: str | None,
             edited: list[str]) -> bool:
    """``vault.update_note``; False, with ``path`` added to ``edited``, when a person
    saved the note meanwhile (nothing written)."""
    try:
        vault.update_note(path, text, prior)
    except EditedMeanwhile:
        edited.append(path)
        return False
    return True


def _relinked(vault: Vault, path: str, moves: Sequence[ProjectMove]) -> list[LinkRewrite]:
    """Point ``path``'s links to the moved notes at their new paths, from its text now
    (``Vault.update_note``: a person's save meanwhile raises ``EditedMeanwhile``); the
    rewrites made (none when the note is gone or no longer links a moved note)."""
    before = none_if_absent(lambda: vault.storage.read(path))
    if before is None:
        return []
    after, changed = rewrite_links(before, moves)
    if after == before:
        return []
    vault.update_note(path, after, before)
    return [LinkRewrite(path, old, new, count) for old, new, count in changed]
