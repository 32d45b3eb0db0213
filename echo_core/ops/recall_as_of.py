"""``recall --as-of DATE``: what the vault held on a date (SPEC §3.3).

The query is ranked as ``recall`` ranks it, freshness measured from DATE, over a wider
pool (``POOL_FACTOR`` x the limit), then each hit is judged as of DATE from its
frontmatter:

* a note ``created`` after DATE did not exist yet: left out (a note without ``created``
  is kept);
* a note with ``superseded_at`` after DATE was still current then: it is ``current`` and
  its score loses the superseded penalty (its kind's default status weighs instead);
  with ``superseded_at`` on or before DATE it is ``superseded`` (by ``superseded_by``);
* a note rewritten by ``evolve`` (or by a ``restore``, which archives the text it
  replaces the same way) after DATE is answered by the archived version it held then:
  of its archived versions (``ops.evolve.archived_versions``: the whole ``supersedes``
  chain, and the archives named after the note), the first one archived after DATE (of
  versions archived on the same day, the first archived: ``--<day>`` before
  ``--<day>-2``).

Every hit carries ``validity`` (``current`` | ``superseded``) and, when superseded,
``superseded_by``. Linked notes are judged the same way.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.errors import usage_error
from echo_core.frontmatter import parse_frontmatter
from echo_core.frontmatter_dates import as_date
from echo_core.models import Envelope, Hit
from echo_core.ops.evolve import (
    ARCHIVE_FOLDER,
    ArchivedVersion,
    archived_versions,
    frontmatter_link,
)
from echo_core.ops.recall import (
    MAX_LIMIT,
    RecallResult,
    _hit,
    _neighbours,
    _ranked,
    query_terms,
    within_budget,
)
from echo_core.ops.recall_as_of_then import ThenText, notes_with_old_words, rescored
from echo_core.ops.recall_index import ensure_index
from echo_core.scoring import STATUS_WEIGHTS, status_weight

if TYPE_CHECKING:
    from echo_core.context import EchoContext

POOL_FACTOR = 4
CURRENT = "current"
SUPERSEDED = "superseded"


def parse_as_of(value: str) -> _dt.date:
    """The ISO date ``value`` (``usage_error`` naming ``as_of`` otherwise)."""
    try:
        return _dt.date.fromisoformat(value.strip())
    except ValueError:
        raise usage_error(f"as_of: {value!r} is not an ISO date (YYYY-MM-DD)") from None


@attrs.frozen
class _Judged:
    path: str
    score: float
    text: str
    validity: str
    superseded_by: str | None = None


def _archived_then(ctx: EchoContext, path: str, text: str, day: _dt.date,
                   archive: _ArchiveListing) -> ArchivedVersion | None:
    """The archived version the note at ``path`` held on ``day``, when it was replaced
    after ``day`` (by an evolve or a restore), else None: of the versions archived after
    ``day``, the first (``archived_versions`` orders them)."""
    versions = archived_versions(ctx.vault.storage, path, text, listing=archive.files(ctx))
    return next((v for v in versions if v.superseded_at is not None and v.superseded_at > day),
                None)


class _ArchiveListing:
    """The files under the archive folder, listed once per recall (none listed when no
    hit needs them)."""

    def __init__(self) -> None:
        self._files: list[str] | None = None

    def files(self, ctx: EchoContext) -> list[str]:
        if self._files is None:
            self._files = ctx.vault.storage.list(ARCHIVE_FOLDER)
        return self._files


def _judge(ctx: EchoContext, path: str, score: float, text: str,
           day: _dt.date, archive: _ArchiveListing) -> _Judged | None:
    fm = parse_frontmatter(text)[0]
    created = as_date(fm.get("created"))
    if created is not None and created > day:
        return None
    archived = _archived_then(ctx, path, text, day, archive)
    if archived is not None:
        return _Judged(archived.path, score, archived.text, CURRENT)
    at = as_date(fm.get("superseded_at"))
    status = str(fm.get("status") or "")
    if at is not None and at > day:
        kind = str(fm.get("type") or "")
        before = ctx.manifest.kinds[kind].status if kind in ctx.manifest.kinds else "active"
        lifted = score / STATUS_WEIGHTS[SUPERSEDED] * status_weight(before) \
            if status.lower() == SUPERSEDED else score
        return _Judged(path, lifted, text, CURRENT)
    if at is not None or status.lower() == SUPERSEDED:
        by = fm.get("superseded_by")
        return _Judged(path, score, text, SUPERSEDED, frontmatter_link(by) if by else None)
    return _Judged(path, score, text, CURRENT)


def _judged_then(ctx: EchoContext, pool: list[tuple[str, float | None]],
                 texts: dict[str, str | None], day: _dt.date, archive: _ArchiveListing,
                 weights: dict[str, float]) -> list[_Judged]:
    """The candidates (the ranker's pool, score None for a note only its old words
    bring) judged as of ``day`` (``_judge``) and scored on their text then
    (``recall_as_of_then.rescored``), best first."""
    found: list[tuple[_Judged, ThenText]] = []
    for n, (path, score) in enumerate(pool):
        text = texts.get(path)
        one = _judge(ctx, path, score or 0.0, text, day, archive) if text is not None else None
        if one is not None:
            archived = one.path != path
            if archived or score is not None:
                ranked = None if score is None else one.score  # _judge's lift kept
                found.append((one, ThenText(str(n), ranked, one.text, archived)))
    lexical = bool(getattr(ctx.ranker_upkeep.ranker, "hits_hold_query_words", False))
    scores = rescored(ctx.tokenizer, [c for _, c in found], weights, lexical)
    judged = [attrs.evolve(one, score=scores[c.key]) for one, c in found if c.key in scores]
    judged.sort(key=lambda j: (-j.score, j.path))
    return judged


def _as_hit(ctx: EchoContext, judged: _Judged, wanted: set[str], via: str | None = None) -> Hit:
    hit = _hit(judged.path, judged.score, judged.text, wanted, ctx, via=via)
    status = hit.status if judged.validity == SUPERSEDED or hit.status.lower() != SUPERSEDED \
        else ""
    return attrs.evolve(hit, status=status, validity=judged.validity,
                        superseded_by=judged.superseded_by)


def recall_as_of(ctx: EchoContext, query: str, as_of: _dt.date, *, limit: int = 8,
                 include_linked: bool = True,
                 budget_chars: int | None = None) -> Envelope[RecallResult]:
    """Recall ``query`` as the vault stood on ``as_of`` (module docstring); the limit and
    ``budget_chars`` work as for ``recall``."""
    query = query.strip()
    if not query:
        raise usage_error("query: give some words to search for")
    if not 1 <= limit <= MAX_LIMIT:
        raise usage_error(f"limit: {limit} is outside 1..{MAX_LIMIT}")
    with ctx.entity_names.one_snapshot():
        rebuilt = ensure_index(ctx)
        upkeep = ctx.ranker_upkeep
        if upkeep.persistent is not None:
            upkeep.persistent.set_today(as_of.toordinal())
        plain, extra = query_terms(ctx, query)
        pool = _ranked(ctx, plain, extra, min(MAX_LIMIT * POOL_FACTOR, limit * POOL_FACTOR)) \
            if plain else []
        archive = _ArchiveListing()
        weights = {t.term: t.weight for t in (*plain, *extra) if " " not in t.term}
        older = notes_with_old_words(ctx, archive.files(ctx), weights, (p for p, _ in pool))
        texts = ctx.vault.storage.read_many([p for p, _ in pool] + older)
        judged = _judged_then(ctx, [*pool, *((p, None) for p in older)], texts, as_of,
                              archive, weights)
        best: dict[str, _Judged] = {}
        for one_judged in judged:  # two notes answered by one archived version: it once
            best.setdefault(one_judged.path, one_judged)
        judged = list(best.values())
        wanted = {t.term for t in plain}
        primary = [_as_hit(ctx, j, wanted) for j in judged[:limit]]
        linked: list[Hit] = []
        if include_linked and primary:
            seeds = [(h.path, h.score, h.path) for h in primary]
            seen = {h.path for h in primary}
            near = _neighbours(ctx, seeds, texts, seen, limit * POOL_FACTOR)
            missing = [p for p, _, _ in near if p not in texts]
            if missing:
                texts.update(ctx.vault.storage.read_many(missing))
            for path, score, via in near:
                text = texts.get(path)
                one = _judge(ctx, path, score, text, as_of, archive) if text is not None else None
                if one is not None and one.path not in seen and len(linked) < limit:
                    seen.add(one.path)
                    linked.append(_as_hit(ctx, one, wanted, via=via))
    primary, linked, truncated, dropped = within_budget(primary, linked, budget_chars)
    result = RecallResult(query, tuple(primary), tuple(linked), tuple(t.term for t in plain),
                          tuple(t.term for t in extra), truncated, dropped, rebuilt)
    message = f"{len(primary)} hits as of {as_of.isoformat()}" + (
        f", {len(linked)} linked" if linked else "")
    return Envelope(True, Action.RECALLED, message, result)
