"""storage_postgres: a vault kept in PostgreSQL, so many machines share one memory.

Registers the ``postgresql`` and ``postgres`` storage schemes::

    vault = "postgresql://echo@db.lan:5432/memory"       # or ECHO_VAULT=postgresql://...

    [backends.postgresql]
    schema = "echo_memory"   # the schema holding the vault (or ?schema= in the URL)
    pool_size = 8            # pooled connections at most
    timeout = 10             # seconds a request waits for a free connection
    connect_timeout = 5      # seconds per connection attempt

The URL is libpq's (``?sslmode=require`` and the other libpq options pass through); the
password comes from the URL, ``PGPASSWORD`` or ``~/.pgpass``. The schema and its tables
are created by the plugin (``echo-memory init``, or the first request) and migrated by
it. See ``pg_storage`` for the guarantees and ``pg_schema`` for the tables and the
change log.

This module imports neither psycopg nor the storage: both load only when a vault is
opened (psycopg is the ``postgres`` extra: ``pip install 'echo-memory[postgres]'``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from echo_core import EchoError, ExitCode, Register, hookimpl

if TYPE_CHECKING:
    from echo_core import StorageFactory
    from plugins.storage_postgres.pg_storage import PostgresStorage

SCHEMES = ("postgresql", "postgres")
_NUMBER_OPTIONS = {"pool_size": 8.0, "timeout": 10.0, "connect_timeout": 5.0}


def _numbers(options: Mapping[str, Any]) -> dict[str, float]:
    numbers: dict[str, float] = {}
    for name, default in _NUMBER_OPTIONS.items():
        raw = options.get(name, default)
        try:
            numbers[name] = float(raw)
        except (TypeError, ValueError):
            numbers[name] = -1.0
        if numbers[name] <= 0:
            raise EchoError(f"option {name}={raw!r} under [backends.postgresql] must be a "
                            "positive number; fix it in the config file",
                            ExitCode.NOT_CONFIGURED)
    return numbers


def require_psycopg() -> None:
    """Raise ``EchoError`` 78 saying how to install psycopg when it is missing."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        raise EchoError(
            "the PostgreSQL backend needs psycopg and psycopg-pool, which are not "
            "installed; install them with: pip install 'echo-memory[postgres]'",
            ExitCode.NOT_CONFIGURED,
        ) from None


def open_postgres_storage(url: str, options: Mapping[str, Any] | None = None) -> PostgresStorage:
    """``StorageFactory`` for ``postgresql://`` / ``postgres://`` (options: module
    docstring). Errors: a bad URL or schema name -> 2; a bad option or psycopg missing
    -> 78. Connects only on the first request."""
    from plugins.storage_postgres.pg_url import parse_vault_url

    options = options or {}
    target = parse_vault_url(url, options)
    numbers = _numbers(options)
    require_psycopg()
    from plugins.storage_postgres.pg_storage import PostgresStorage

    return PostgresStorage(target, pool_size=int(numbers["pool_size"]),
                           timeout=numbers["timeout"],
                           connect_timeout=numbers["connect_timeout"])


@hookimpl
def register_storage(register: Register[StorageFactory]) -> None:
    """Register ``postgresql`` and ``postgres`` (a vault in a PostgreSQL schema)."""
    for scheme in SCHEMES:
        register(scheme, open_postgres_storage)
