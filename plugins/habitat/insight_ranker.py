"""Ranking the approved insights for a situation with the recall machinery.

The configured tokenizer and ranker (config ``tokenizer`` / ``recall``: porterlite and
BM25 x prior by default) over the approved insight notes only, each turned into a ranker
document as recall turns every note (``echo_core.index_doc``: title twice, tags, body;
prior = status x freshness of ``updated``). A ranker of its own rather than the vault's:
recall's top hits over the whole vault would crowd the few insights out, and a search
restricted to a folder is not part of the ranker contract.

The index lives in ``<habitat_dir>/insight-recall/`` (a persistent ranker; a plain one is
filled in memory per call). It is kept current from the notes just read by the sync:
``insight_index`` in the learnings store (this machine's part of it, ``store.local()``:
on a PostgreSQL vault the index is per replica) holds each indexed note's digest, so only new,
changed and withdrawn notes are upserted or removed; an index that ``needs_rebuild`` is
rebuilt from them. Cost: proportional to the insight notes changed since the last call.

Given a ``project``, only the insights of that project and those of none (``for_project``)
are hits: the index holds every approved insight (one index for every project's
sessions), the search looks through all of them and the others are left out before the
``limit``, so another project's insights never crowd this one's out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from plugins.habitat.insight_sync import InsightNote
from plugins.habitat.learnings import LearningStore
from plugins.habitat.paths import habitat_dir

__all__ = ["INDEX_FOLDER", "for_project", "rank_insights"]

INDEX_FOLDER = "insight-recall"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def for_project(note: InsightNote, project: str) -> bool:
    """Whether a session of ``project`` ("": none known) may get ``note``: the note names
    no project, or names ``project`` (case aside)."""
    if not note.projects:
        return True
    wanted = project.strip().casefold()
    return bool(wanted) and any(p.casefold() == wanted for p in note.projects)


def _ranker(ctx: Any) -> Any:
    folder = habitat_dir(ctx) / INDEX_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    factory = ctx.host.collect("register_rankers").get(ctx.config.recall)
    if factory is None:
        from echo_core import EchoError, ExitCode

        raise EchoError(f"config recall = {ctx.config.recall!r} but no plugin registers that "
                        "ranker; install it or set recall in the config", ExitCode.NOT_CONFIGURED)
    return factory(ctx.tokenizer, str(folder))


def _keep_current(ctx: Any, store: LearningStore, ranker: Any,
                  notes: Sequence[InsightNote]) -> None:
    """Make ``ranker`` hold exactly the approved ``notes`` (module docstring): a ranker
    document is made only for a note that is new or changed."""
    from echo_core import PersistentRanker, index_doc

    digests = {item.path: _digest(item.note.text) for item in notes}
    by_path = {item.path: item for item in notes}

    def upsert(path: str) -> None:
        doc = index_doc(by_path[path].note)
        if doc is not None:
            ranker.upsert(doc)

    if not isinstance(ranker, PersistentRanker):
        for path in sorted(digests):
            upsert(path)
        return
    ranker.set_today(ctx.today().toordinal())
    with store.local().transaction() as conn:
        if ranker.needs_rebuild():
            docs = [index_doc(by_path[p].note) for p in sorted(digests)]
            ranker.rebuild([doc for doc in docs if doc is not None])
            conn.execute("DELETE FROM insight_index")
            conn.executemany("INSERT INTO insight_index VALUES (?, ?)", sorted(digests.items()))
            return
        indexed = dict(conn.execute("SELECT path, digest FROM insight_index").fetchall())
        for path in sorted(set(indexed) - set(digests)):
            ranker.remove(path)
            conn.execute("DELETE FROM insight_index WHERE path = ?", (path,))
        for path, digest in sorted(digests.items()):
            if indexed.get(path) != digest:
                upsert(path)
                conn.execute("INSERT OR REPLACE INTO insight_index VALUES (?, ?)",
                             (path, digest))


def rank_insights(ctx: Any, store: LearningStore, notes: Sequence[InsightNote], query: str,
                  limit: int, project: str | None = None) -> list[tuple[InsightNote, float]]:
    """The approved ``notes`` that match ``query``, best first, at most ``limit``, with
    their scores (> 0); none for a query without terms. Given ``project``, only notes
    ``for_project`` it (module docstring)."""
    from echo_core import WeightedTerm

    approved = [n for n in notes if n.status.casefold() == "approved"]
    ranker = _ranker(ctx)
    _keep_current(ctx, store, ranker, approved)
    weights: dict[str, float] = {}
    for term in ctx.tokenizer.tokenize(query):
        weights[term] = weights.get(term, 0.0) + 1.0
    if not weights or not approved:
        return []
    by_path = {n.path: n for n in approved
               if project is None or for_project(n, project)}
    if not by_path:
        return []
    wide = limit if len(by_path) == len(approved) else len(approved)
    hits = ranker.search([WeightedTerm(t, w) for t, w in weights.items()], wide)
    return [(by_path[path], score) for path, score in hits if path in by_path][:limit]
