"""Where the hook recorder writes: the same state dir echo-memory itself uses.

Standard library only (the recorder runs under ``python -S``; see ``hook_record``). It
repeats, in a few lines, what ``echo_core.config.resolve_config`` and
``EchoContext.state_dir`` do, and ``tests/test_habitat_record_hook.py`` checks that both
give the same folder for every way of configuring it:

* the config file: ``$ECHO_CONFIG``, else ``$XDG_CONFIG_HOME/echo-memory/config.toml``
  (``~/.config/...``); its top-level ``vault``, ``state_dir`` and ``disabled``;
* the vault: ``ECHO_VAULT`` > the file's ``vault`` > ``$XDG_DATA_HOME/echo-memory/vault``;
* the state base: ``ECHO_STATE_DIR`` > the file's ``state_dir`` >
  ``$XDG_STATE_HOME/echo-memory``;
* the vault's identity, as its storage names it: ``file:<resolved folder>`` for a folder
  (a path, ``file:///abs`` or ``file:/abs``), ``obsidian+<scheme>://<host>:<port>`` for an
  Obsidian vault, ``postgresql://[user@]host[:port]/db?schema=<name>`` for a PostgreSQL
  vault (``storage_postgres``'s password-free identity; the schema from the URL's
  ``schema`` option, else ``echo_memory``). There the recorder's day files are the
  machine's spool, shipped to the shared record by echo-memory (``loom_spool``);
* the state dir: ``<state base>/vaults/<first 16 hex of sha256(identity)>``.

The config file is parsed once per change: its three settings are kept in a JSON copy
(``cached_config``), so a hook process pays no ``tomllib``.

A vault of another storage scheme (a third party's plugin) has an identity only its
plugin knows: ``state_dir`` then raises ``Unresolved`` and the recorder records nothing
(it says so in its log under the state base). So does a config file that is not valid
TOML. The habitat is off when ``habitat`` is in ``ECHO_DISABLE_PLUGINS`` or the file's
``disabled`` (``Disabled``).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs ~2 ms to import: annotations only
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

if __package__:
    from plugins.habitat.hook_record_json import dumps, loads
else:  # run as a script (the built plugin): the module beside it
    from hook_record_json import dumps, loads  # type: ignore[import-not-found, no-redef]

__all__ = ["Disabled", "Unresolved", "cached_config", "config_file", "read_config",
           "state_base", "state_dir"]

PLUGIN = "habitat"


class Unresolved(Exception):
    """The state dir cannot be found without echo-memory itself (the message says why)."""


class Disabled(Exception):
    """The habitat plugin is disabled: record nothing."""


def _path_string(value: str) -> str:
    """``str(pathlib.Path(value))`` on POSIX (``echo_core.config.path_string``)."""
    lead = "//" if value.startswith("//") and not value.startswith("///") else (
        "/" if value.startswith("/") else "")
    return (lead + "/".join(p for p in value.split("/") if p and p != ".")) or "."


def _xdg(env: Mapping[str, str], var: str, fallback: str) -> str:
    value = env.get(var)
    if value:
        return value
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), fallback)


def config_file(env: Mapping[str, str]) -> str:
    """Where the config file is looked for."""
    explicit = env.get("ECHO_CONFIG")
    if explicit:
        return _path_string(os.path.expanduser(explicit))
    return _path_string(os.path.join(_xdg(env, "XDG_CONFIG_HOME", ".config"), "echo-memory",
                                     "config.toml"))


def read_config(path: str) -> dict[str, Any]:
    """The config file's settings (``{}`` when absent); ``Unresolved`` when it cannot be
    read or is not valid TOML."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise Unresolved(f"cannot read config file {path}: {exc}") from None
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        raise Unresolved(f"config file {path} needs Python >= 3.11 (tomllib) to be read; "
                         "set ECHO_HABITAT_PYTHON to echo-memory's interpreter") from None
    try:
        loaded = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise Unresolved(f"config file {path} is not valid TOML ({exc})") from None
    return loaded


#: The settings the recorder needs, kept in the cache copy.
_KEPT = ("vault", "state_dir", "disabled")
#: A file changed this recently (ns) gets no copy yet (its mtime may not move again).
_RACY_NS = 2_000_000_000


def _cache_file(env: Mapping[str, str]) -> str:
    return os.path.join(_xdg(env, "XDG_CACHE_HOME", ".cache"), "echo-memory",
                        "habitat-hook-config.json")


def cached_config(path: str, env: Mapping[str, str]) -> dict[str, Any]:
    """``read_config(path)``'s ``vault``, ``state_dir`` and ``disabled``, through a JSON
    copy in ``$XDG_CACHE_HOME/echo-memory/`` made from a file of the same path, size and
    mtime (``tomllib`` costs a cold ``python -S`` ~14 ms). ``ECHO_PLUGIN_CACHE=off``
    skips the copy; a copy that cannot be read or written is no error."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return {}
    except OSError:
        return read_config(path)
    stamp = [path, st.st_size, st.st_mtime_ns]
    use_cache = env.get("ECHO_PLUGIN_CACHE", "").strip().lower() != "off"
    cache = _cache_file(env)
    if use_cache:
        try:
            with open(cache, encoding="utf-8") as f:
                kept = loads(f.read())
            if isinstance(kept, dict) and kept.get("stamp") == stamp \
                    and isinstance(kept.get("settings"), dict):
                return dict(kept["settings"])
        except (OSError, ValueError):
            pass
    raw = read_config(path)
    settings = {k: raw[k] for k in _KEPT if isinstance(raw.get(k), (str, list))}
    import time

    if use_cache and time.time_ns() - st.st_mtime_ns >= _RACY_NS:
        _write_copy(cache, {"stamp": stamp, "settings": settings})
    return settings


def _write_copy(cache: str, data: dict[str, Any]) -> None:
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        temp = f"{cache}.{os.getpid()}.tmp"
        with open(temp, "w", encoding="utf-8") as f:
            f.write(dumps(data))
        os.replace(temp, cache)
    except OSError:
        pass


def _pick(env_value: str | None, file_value: Any, default: str) -> str:
    return env_value or (str(file_value) if file_value else default)


def _scheme(url: str) -> str:
    head, sep, _ = url.partition("://")
    if sep and head and all(c.isalnum() or c in "+-." for c in head):
        return head.lower()
    return "file"


def state_base(env: Mapping[str, str], raw: Mapping[str, Any]) -> str:
    """The state base folder (before ``vaults/<id>``)."""
    default = _path_string(os.path.join(_xdg(env, "XDG_STATE_HOME", ".local/state"),
                                        "echo-memory"))
    return _path_string(os.path.expanduser(_pick(env.get("ECHO_STATE_DIR"),
                                                 raw.get("state_dir"), default)))


def _folder_identity(url: str) -> str:
    text = url.strip()
    if not text:
        raise Unresolved("the vault URL is empty")
    if text.lower().startswith("file:"):
        from urllib.parse import unquote, urlsplit

        if text[5:7] != "//":
            text = unquote(text[5:]) or "/"
        else:
            parts = urlsplit(text)
            if parts.netloc not in ("", "localhost") or not parts.path:
                raise Unresolved(f"vault URL {url!r} is not a local folder")
            text = unquote(parts.path)
    return "file:" + os.path.realpath(os.path.expanduser(text))


_OBSIDIAN = {"obsidian+https": ("https", 27124), "obsidian+http": ("http", 27123)}


def _obsidian_identity(url: str, scheme: str) -> str:
    from urllib.parse import urlsplit

    http_scheme, default_port = _OBSIDIAN[scheme]
    parts = urlsplit(url.strip())
    try:
        port = parts.port or default_port
    except ValueError:
        raise Unresolved(f"vault URL {url!r} has an invalid port") from None
    if not parts.hostname:
        raise Unresolved(f"vault URL {url!r} names no host")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"obsidian+{http_scheme}://{host}:{port}"


def vault_identity(url: str) -> str:
    """The identity the vault's storage gives it (``Unresolved`` for another scheme)."""
    scheme = _scheme(url)
    if scheme == "file":
        return _folder_identity(url)
    if scheme in _OBSIDIAN:
        return _obsidian_identity(url, scheme)
    if scheme in ("postgresql", "postgres"):
        return _postgres_identity(url)
    raise Unresolved(f"vault URL {url!r}: the recorder knows the state dir of folder and "
                     "Obsidian vaults (and PostgreSQL ones) only")


def _postgres_identity(url: str) -> str:
    """``storage_postgres``'s identity of a PostgreSQL vault URL: ``echo_core.pg_identity``
    (one for every spelling of the vault, never a password), of which the built plugin
    ships a copy beside this file; the schema from the URL's ``schema`` option, else
    ``echo_memory``."""
    from urllib.parse import parse_qsl, urlsplit

    if __package__:
        from echo_core import pg_identity
    else:  # the copy in the built plugin's scripts folder, else the package's own
        try:
            import pg_identity  # type: ignore[import-not-found, no-redef]
        except ImportError:  # run from plugins/habitat itself: echo_core is beside plugins
            import sys

            here = os.path.dirname(os.path.abspath(__file__))
            sys.path.append(os.path.join(os.path.dirname(os.path.dirname(here)), "echo_core"))
            import pg_identity  # type: ignore[no-redef]
    schema = pg_identity.DEFAULT_SCHEMA
    for key, value in parse_qsl(urlsplit(url.strip()).query, keep_blank_values=True):
        if key == "schema":
            schema = value
    try:
        identity: str = pg_identity.vault_identity(url, schema)
    except ValueError as exc:
        raise Unresolved(f"vault URL {url!r}: {exc}") from None
    return identity


def _sha256_hex(data: bytes) -> str:
    sha256: Any
    try:
        from _sha256 import sha256  # type: ignore[import-not-found, no-redef]  # no OpenSSL
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found, no-redef]  # 3.12+
        except ImportError:
            from hashlib import sha256
    return str(sha256(data).hexdigest())


def state_dir(env: Mapping[str, str]) -> str:
    """The state dir of the configured vault (see the module docstring). Raises
    ``Unresolved`` or ``Disabled``."""
    raw = cached_config(config_file(env), env)
    disabled = raw.get("disabled", [])
    blocked = {p.strip() for p in env.get("ECHO_DISABLE_PLUGINS", "").split(",")}
    if PLUGIN in blocked or (isinstance(disabled, list) and PLUGIN in disabled):
        raise Disabled("the habitat plugin is disabled")
    default_vault = _path_string(os.path.join(_xdg(env, "XDG_DATA_HOME", ".local/share"),
                                              "echo-memory", "vault"))
    vault = _pick(env.get("ECHO_VAULT"), raw.get("vault"), default_vault)
    digest = _sha256_hex(vault_identity(vault).encode("utf-8"))[:16]
    return os.path.join(state_base(env, raw), "vaults", digest)
