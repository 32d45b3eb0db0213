"""The vault URL of a PostgreSQL vault: what to connect to, which schema, and its identity.

``postgresql://[user[:password]@]host[:port]/dbname[?schema=NAME&<libpq options>]``
(``postgres://`` is the same). The vault lives in the schema ``NAME`` (default
``echo_memory``): several vaults can share one database, one schema each (the tests give
every test its own). Every other query option (``sslmode``, ``sslrootcert``,
``connect_timeout``, ``application_name`` ...) goes to libpq unchanged, and so do the
usual ``PG*`` environment variables and ``~/.pgpass``. A schema name is a lower-case SQL
identifier (letters, digits, ``_``; not starting with a digit; at most 63 characters),
not ``information_schema`` and not starting with ``pg_`` (PostgreSQL reserves those, and
``pg_dump`` leaves them out), given at most once.

The identity (which keys the per-machine state dir) names user, host, port, database and
schema, never the password, the same for every spelling of one vault (``pg_identity``);
messages show the same form. The target also names the identity versions before this one
gave the URL (``former_identity``), so their state dir, and its outbox, is found.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import attrs

from echo_core import pg_identity, usage_error

DEFAULT_SCHEMA = pg_identity.DEFAULT_SCHEMA
SCHEMES = pg_identity.SCHEMES

__all__ = ["DEFAULT_SCHEMA", "SCHEMES", "PgTarget", "check_schema", "parse_vault_url"]
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


@attrs.frozen
class PgTarget:
    """Where a PostgreSQL vault lives: ``conninfo`` for libpq (the URL without the
    ``schema`` option), the ``schema``, the password-free ``identity``
    (``pg_identity.vault_identity``) and ``former_identity``, the one versions before
    this one gave the URL when it differs (``pg_identity.legacy_identity``), else None."""

    conninfo: str
    schema: str
    identity: str
    former_identity: str | None = None


def check_schema(name: str) -> str:
    """``name`` when it is a usable schema name, else exit 2 saying what is allowed: a
    plain lower-case SQL name that PostgreSQL does not reserve (not ``information_schema``,
    not starting with ``pg_``)."""
    if not _SCHEMA_NAME.fullmatch(name):
        raise usage_error(
            f"schema {name!r} is not a plain lower-case SQL name; use letters a-z, digits "
            "and _ (not starting with a digit, at most 63 characters), e.g. schema=echo_memory"
        )
    if name == "information_schema" or name.startswith("pg_"):
        raise usage_error(
            f"schema {name!r} is reserved by PostgreSQL (information_schema and names "
            "starting with pg_ are system schemas, which pg_dump leaves out); pick another "
            "name, e.g. schema=echo_memory"
        )
    return name


def parse_vault_url(url: str, options: Mapping[str, Any] | None = None) -> PgTarget:
    """The ``PgTarget`` of a ``postgresql://`` vault URL (exit 2 for one that is not).

    The schema comes from the URL's ``schema`` option, else the ``schema`` backend
    option (``[backends.postgresql]`` in the config file), else ``echo_memory``; it must
    pass ``check_schema``, and a URL giving ``schema=`` more than once is refused (exit 2)
    rather than one of them picked."""
    text = url.strip()
    scheme, sep, _ = text.partition("://")
    if not sep or scheme.lower() not in SCHEMES:
        raise usage_error(
            f"vault URL {url!r} is not a PostgreSQL URL; use "
            "postgresql://user@host:5432/dbname (optionally ?schema=name)"
        )
    parts = urlsplit(text)
    try:
        pg_identity.vault_identity(text, DEFAULT_SCHEMA)
    except ValueError:
        raise usage_error(f"vault URL {_hide_password(text)!r} has an invalid port; use "
                          "e.g. :5432") from None
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = str((options or {}).get("schema") or DEFAULT_SCHEMA)
    given = [value for key, value in query if key == "schema"]
    if len(given) > 1:
        raise usage_error(
            f"vault URL {_hide_password(text)!r} gives schema= {len(given)} times "
            f"({', '.join(map(repr, given))}); give the schema once")
    if given:
        schema = given[0]
    rest = [(key, value) for key, value in query if key != "schema"]
    check_schema(schema)
    # built as text: urlunsplit drops the empty host of postgresql:///db (a local socket)
    conninfo = f"postgresql://{parts.netloc}{parts.path}"
    if rest:
        conninfo += f"?{urlencode(rest)}"
    identity = pg_identity.vault_identity(text, schema)
    former = pg_identity.legacy_identity(text, schema)
    return PgTarget(conninfo=conninfo, schema=schema, identity=identity,
                    former_identity=None if former == identity else former)


def _hide_password(url: str) -> str:
    """``url`` with any password replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
