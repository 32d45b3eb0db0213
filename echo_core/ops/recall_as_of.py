"""``recall --as-of DATE``: what the vault held on a date (SPEC §3.3).

The query is ranked as ``recall`` ranks it, freshness measured from DATE, over a wider
pool (``POOL_FACTOR`` x the limit), then each hit is judged as of DATE from its
frontmatter:

* a note ``created`` after DATE did not exist yet: left out (a note without ``created``
  is kept);
* a note with ``superseded_at`` after DATE was still current then: it is ``current`` and
  its score loses the superseded penalty (its kind's default status weighs instead);
  with ``superseded_at`` on or before DATE it is ``superseded`` (by ``superseded_by``);
* a note rewritten by ``evolve`` after DATE (``supersedes`` names an archived version
  whose ``superseded_at`` is after DATE) is answered by that archived version, the
  earliest one written after DATE: what the note said then (of versions archived on the
  same day, the one that supersedes none of the others).

Every hit carries ``validity`` (``current`` | ``superseded``) and, when superseded,
``superseded_by``. Linked notes are judged the same way.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.actions import Action
from echo_core.errors import usage_error
from echo_core.frontmatter import parse_frontmatter
from echo_core.frontmatter_dates import as_date
from echo_core.models import Envelope, Hit
from echo_core.ops.recall import (
    MAX_LIMIT,
    RecallResult,
    _hit,
    _neighbours,
    _ranked,
    query_terms,
    within_budget,
)
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


def _link_target(value: Any) -> str:
    text = str(value).strip().strip('"').strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    return text.split("|", 1)[0].split("#", 1)[0].strip()


@attrs.frozen
class _Judged:
    path: str
    score: float
    text: str
    validity: str
    superseded_by: str | None = None


def _archived_then(ctx: EchoContext, fm: dict[str, Any], day: _dt.date) -> tuple[str, str] | None:
    """``(archive path, text)`` of the version the note held on ``day`` when an evolve
    replaced it after ``day``, else None."""
    raw = fm.get("supersedes")
    targets = [_link_target(v) for v in (raw if isinstance(raw, list) else [raw] if raw else [])]
    stems = [t for t in targets if "--" in t.rsplit("/", 1)[-1]]
    if not stems:
        return None
    candidates = [t if t.startswith("_agent/archive/") else None for t in stems]
    paths = [c + ".md" if c and not c.endswith(".md") else c for c in candidates]
    found = [p for p in paths if p]
    if len(found) < len(stems):  # archive named by its stem: look it up under the archive
        wanted = {s.rsplit("/", 1)[-1] for s in stems}
        found += [p for p in ctx.vault.storage.list("_agent/archive")
                  if p.endswith(".md") and p.rsplit("/", 1)[-1][:-3] in wanted]
    texts = ctx.vault.storage.read_many(sorted(set(found)))
    later: list[tuple[_dt.date, str, str, set[str]]] = []
    for path, text in texts.items():
        if text is None:
            continue
        archived_fm = parse_frontmatter(text)[0]
        at = as_date(archived_fm.get("superseded_at"))
        if at is not None and at > day:
            later.append((at, path, text, _stems_named(archived_fm.get("supersedes"))))
    if not later:
        return None
    first = min(at for at, *_ in later)
    tied = [entry for entry in later if entry[0] == first]
    tied_stems = {_stem(path) for _, path, _, _ in tied}
    # evolved twice on one day: the oldest of them names none of the others as superseded
    oldest = min(tied, key=lambda e: (bool(e[3] & (tied_stems - {_stem(e[1])})), e[1]))
    return oldest[1], oldest[2]


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def _stems_named(raw: Any) -> set[str]:
    """The file stems a ``supersedes`` value links to (one link or a list of them)."""
    values = raw if isinstance(raw, list) else [raw] if raw else []
    return {_stem(_link_target(v)) for v in values}


def _judge(ctx: EchoContext, path: str, score: float, text: str,
           day: _dt.date) -> _Judged | None:
    fm = parse_frontmatter(text)[0]
    created = as_date(fm.get("created"))
    if created is not None and created > day:
        return None
    archived = _archived_then(ctx, fm, day)
    if archived is not None:
        return _Judged(archived[0], score, archived[1], CURRENT)
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
        return _Judged(path, score, text, SUPERSEDED, _link_target(by) if by else None)
    return _Judged(path, score, text, CURRENT)


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
        texts = ctx.vault.storage.read_many([p for p, _ in pool])
        judged = [j for p, s in pool if (t := texts.get(p)) is not None
                  and (j := _judge(ctx, p, s, t, as_of)) is not None]
        judged.sort(key=lambda j: (-j.score, j.path))
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
                one = _judge(ctx, path, score, text, as_of) if text is not None else None
                if one is not None and one.path not in seen and len(linked) < limit:
                    seen.add(one.path)
                    linked.append(_as_hit(ctx, one, wanted, via=via))
    primary, linked, truncated, dropped = within_budget(primary, linked, budget_chars)
    result = RecallResult(query, tuple(primary), tuple(linked), tuple(t.term for t in plain),
                          tuple(t.term for t in extra), truncated, dropped, rebuilt)
    message = f"{len(primary)} hits as of {as_of.isoformat()}" + (
        f", {len(linked)} linked" if linked else "")
    return Envelope(True, Action.RECALLED, message, result)
