"""recall_pgfts: the ``pgfts`` ranker, PostgreSQL full-text search in the vault's database.

Registers the ranker factory ``pgfts`` (config ``recall = "pgfts"``). It runs only on a
vault kept in PostgreSQL (``vault = "postgresql://..."``, the ``storage_postgres``
plugin): the factory ``wants_storage`` and recognises that backend by duck typing (a
``pg_transaction()`` method and a ``schema`` name; plugins never import each other). On
any other storage it raises ``RankerUnavailable("pgfts needs a postgresql:// vault")``
and the core answers with ``bm25`` after one warning.

The index is a table in the vault's own schema (``tables``), so every replica of the
vault shares it: a capture on one machine is searchable from all of them as soon as it
commits, and no replica keeps a local index it must bring up to date. Terms are the
configured tokenizer's (the same at index and query time: ``lexemes``); scoring is in
``ranker``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from echo_core import Register, hookimpl

if TYPE_CHECKING:
    from echo_core import Ranker, RankerFactory, Storage, Tokenizer

NAME = "pgfts"
#: What the factory says on a storage that is not the PostgreSQL backend.
NEEDS_POSTGRES = "pgfts needs a postgresql:// vault"


def pg_capable(storage: Any) -> bool:
    """Whether ``storage`` is a PostgreSQL vault this ranker can live in: it offers
    ``pg_transaction()`` (a psycopg connection in a transaction) and a ``schema`` name."""
    return callable(getattr(storage, "pg_transaction", None)) and isinstance(
        getattr(storage, "schema", None), str)


class PgftsFactory:
    """``pgfts``'s factory: ``factory(tokenizer, state_dir, storage=...)`` (it
    ``wants_storage``). Cheap: no query runs until the ranker is used. ``state_dir`` is
    not used (the index lives in the database)."""

    wants_storage = True

    def __call__(self, tokenizer: Tokenizer, state_dir: str,
                 storage: Storage | None = None) -> Ranker:
        from echo_core import RankerUnavailable  # here: --help must not import attrs

        if storage is None or not pg_capable(storage):
            raise RankerUnavailable(NEEDS_POSTGRES)
        try:
            from plugins.recall_pgfts.ranker import PgftsRanker
        except ImportError as exc:  # psycopg gone: the storage could not have opened
            raise RankerUnavailable(f"{NEEDS_POSTGRES} ({exc})") from exc
        return PgftsRanker(tokenizer, storage)


@hookimpl
def register_rankers(register: Register[RankerFactory]) -> None:
    """Register the ``pgfts`` ranker factory."""
    register(NAME, PgftsFactory())
