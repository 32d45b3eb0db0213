"""The identity of a PostgreSQL vault: one string per vault, however its URL is spelled.

The identity keys what this machine keeps per vault (the state dir with its outbox, the
in-process lock registry, the names of backups), so two spellings of one vault must give
one identity, and two vaults never the same one. It names what libpq connects to, written
one way, never a password::

    postgresql://[user@]host[:port]/dbname?schema=NAME[&service=NAME]

* ``postgres://`` and ``postgresql://`` are one scheme; option order, ``sslmode``,
  ``connect_timeout``, ``password`` and the other libpq options count for nothing;
* the ``host``, ``hostaddr``, ``port``, ``user``, ``dbname`` and ``service`` options
  count as libpq counts them (an option overrides the URL's part);
* host: lower case without a trailing dot; an IP address in its short form; ``localhost``
  and every loopback address (``127.0.0.0/8``, ``::1``) are ``localhost``; a socket
  folder as given, without a trailing ``/``, percent-encoded (``%2Frun%2Fpostgresql``);
  none: libpq's default socket (empty);
* port: libpq's default 5432 is left out, so giving it and omitting it are one; a list
  of hosts keeps its order, each host with its own port;
* dbname: percent-encoding undone and redone; ``/`` after the host with nothing after
  it is no dbname, but ``db/`` is not ``db`` (libpq asks for a database named ``db/``).

Not folded (``pg_storage`` adopts no outbox across them): two names of one server
(``db.lan`` and its address: DNS would have to say), an omitted user or dbname and the
one libpq would pick (``PGUSER``, ``PGDATABASE``, the login name), ``PGPORT``.

``legacy_identity`` is the identity versions before this one gave a URL (one per
spelling); ``recorded_identity`` reads an identity a state dir recorded, of either form.
Standard library only, and imports nothing of echo-memory: the habitat's hook recorder, which
runs standalone under ``python -S``, ships a copy of this file and keys its state dir by
the same identity.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import parse_qsl, quote, unquote, urlsplit

SCHEMES = ("postgresql", "postgres")
DEFAULT_PORT = "5432"
DEFAULT_SCHEMA = "echo_memory"
#: Query options that pick the server, database or role (libpq reads them over the URL).
_TARGET_OPTIONS = ("host", "hostaddr", "port", "user", "dbname", "service")


def _split_url(url: str) -> tuple[str, str, str, dict[str, str]]:
    """``(userinfo, hostspec, dbname, options)`` of a ``postgresql://`` URL; ValueError
    for another scheme. ``options`` keeps the last value of each query option."""
    text = url.strip()
    scheme, sep, _ = text.partition("://")
    if not sep or scheme.lower() not in SCHEMES:
        raise ValueError("not a postgresql:// URL")
    parts = urlsplit(text)
    userinfo, _, hostspec = parts.netloc.rpartition("@")
    options = dict(parse_qsl(parts.query, keep_blank_values=True))
    return userinfo, hostspec, unquote(parts.path[1:]), options


def _host(raw: str) -> str:
    """One host as the identity writes it (module docstring); "" for none."""
    host = unquote(raw.strip())
    if not host:
        return ""
    if host.startswith("/"):
        return quote(host.rstrip("/") or "/", safe="")
    host = host.strip("[]").lower().rstrip(".")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "localhost" if host == "localhost" else host
    mapped = getattr(address, "ipv4_mapped", None)
    if address.is_loopback or (mapped is not None and mapped.is_loopback):
        return "localhost"
    return f"[{address.compressed}]" if address.version == 6 else address.compressed


def _port(raw: str) -> str:
    """One port: its digits (ValueError when it is not a number 0-65535), 5432 for none."""
    text = raw.strip()
    if not text:
        return DEFAULT_PORT
    if not text.isdigit() or int(text) > 65535:
        raise ValueError(f"invalid port {text!r}")
    return str(int(text))


def _host_and_port(entry: str) -> tuple[str, str]:
    """``(host, port)`` of one ``host[:port]`` entry of a URL's host list."""
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        return host, rest.removeprefix(":")
    host, _, port = entry.partition(":")
    return host, port


def vault_identity(url: str, schema: str) -> str:
    """The identity (module docstring) of the vault ``url`` names in ``schema``.
    ValueError for a URL that is not ``postgresql://`` or has a port that is no number."""
    userinfo, hostspec, dbname, options = _split_url(url)
    pairs = [_host_and_port(entry) for entry in hostspec.split(",")] if hostspec else []
    hosts = [host for host, _ in pairs]
    ports = [port for _, port in pairs]
    given = options.get("host") or (options.get("hostaddr") if not any(hosts) else None)
    if given:
        hosts = given.split(",")
    if "port" in options:
        ports = options["port"].split(",")
    hosts, ports = hosts or [""], ports or [""]
    if len(ports) == 1:  # one port serves every host (libpq)
        ports = ports * len(hosts)
    if len(ports) != len(hosts):
        raise ValueError(f"{len(ports)} ports for {len(hosts)} hosts")
    entries: list[str] = []
    for host, port in zip(hosts, ports, strict=True):
        number = _port(port)
        entries.append(_host(host) + ("" if number == DEFAULT_PORT else f":{number}"))
    where = ",".join(entries)
    user = options.get("user", unquote(userinfo.partition(":")[0]))
    where = f"{quote(user, safe='')}@{where}" if user else where
    dbname = options.get("dbname", dbname)
    service = options.get("service")
    tail = f"&service={quote(service, safe='')}" if service else ""
    return f"postgresql://{where}/{quote(dbname, safe='')}?schema={schema}{tail}"


def legacy_identity(url: str, schema: str) -> str | None:
    """The identity versions before this one gave ``url`` (each spelling its own), to
    find the state dir they kept for it; None when that identity did not name this vault
    alone (the URL picks its server, database or role by a query option, which it left
    out) or ``url`` is no PostgreSQL URL. Never a password."""
    try:
        _, _, _, options = _split_url(url)
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    if any(name in options for name in _TARGET_OPTIONS):
        return None
    user = parts.username or ""
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    where = f"{quote(user, safe='')}@{host}" if user else host
    return (f"postgresql://{where}{':' + str(port) if port else ''}{parts.path or '/'}"
            f"?schema={schema}")


def recorded_identity(recorded: str) -> str | None:
    """The identity, in today's form, of the vault a state dir recorded as ``recorded``
    (``vault-seen.json``; an older version's identity or today's); None when it is not
    one or names no host (an older version left a ``?host=`` option out, so such an
    identity does not say which server it was)."""
    try:
        _, hostspec, _, options = _split_url(recorded)
        if not hostspec.strip() and "host" not in options:
            return None
        return vault_identity(recorded, options.get("schema") or DEFAULT_SCHEMA)
    except ValueError:
        return None
