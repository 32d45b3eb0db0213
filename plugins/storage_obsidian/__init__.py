"""storage_obsidian: a vault served by Obsidian's Local REST API plugin (5.x, SPEC §1.4).

Registers the ``obsidian+https`` and ``obsidian+http`` storage schemes::

    vault = "obsidian+https://127.0.0.1:27124"   # or obsidian+http://127.0.0.1:27123

    [backends.obsidian]
    key_env = "OBSIDIAN_API_KEY"      # where the API key is (default); or: key = "..."
    ca_file = "~/obsidian.crt"        # trust the plugin's self-signed certificate, or
    cert_fingerprint = "sha256:..."   # pin it (SHA-256 of the certificate, hex)
    timeout = 10                      # seconds per request, all of it (its deadline)
    concurrency = 8                   # parallel reads / pooled connections
    stale_after = 60                  # seconds unrefreshed before a lock note is broken
    lock_settle = 0.2                 # seconds of the lock note's settle delay

TLS verification is always on for ``obsidian+https``: without ``ca_file`` or
``cert_fingerprint`` the system trust store is used, and a self-signed certificate fails
with ``EchoError`` 78 naming both options. There is no switch to skip verification.

This module imports neither httpx nor the storage: both load only when a vault is opened
(httpx is the ``obsidian`` extra: ``pip install 'echo-memory[obsidian]'``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from echo_core import EchoError, ExitCode, Register, hookimpl, usage_error
from plugins.storage_obsidian.url_text import shown_url

if TYPE_CHECKING:
    from echo_core import StorageFactory
    from plugins.storage_obsidian.obsidian_storage import ObsidianStorage

SCHEMES = {"obsidian+https": ("https", 27124), "obsidian+http": ("http", 27123)}
DEFAULT_KEY_ENV = "OBSIDIAN_API_KEY"
_NUMBER_OPTIONS = {"timeout": 10.0, "concurrency": 8, "stale_after": 60.0, "lock_settle": 0.2}


def base_url_from_vault_url(url: str) -> str:
    """``obsidian+https://host[:port][/]`` -> ``https://host:port`` (exit 2 if invalid).

    Default ports: 27124 for https, 27123 for http (the plugin's defaults). Messages
    show the URL with any credentials hidden (``shown_url``).
    """
    text = url.strip()
    shown = shown_url(text)
    scheme, sep, _ = text.partition("://")
    if not sep or scheme.lower() not in SCHEMES:
        raise usage_error(
            f"vault URL {shown!r} is not an Obsidian URL; use obsidian+https://host:27124 "
            "or obsidian+http://host:27123"
        )
    http_scheme, default_port = SCHEMES[scheme.lower()]
    from urllib.parse import urlsplit  # with pathlib's friends: not on every start-up

    parts = urlsplit(text)
    try:
        port = parts.port or default_port
    except ValueError:
        raise usage_error(f"vault URL {shown!r} has an invalid port; use e.g. :27124") from None
    if not parts.hostname:
        raise usage_error(f"vault URL {shown!r} names no host; use e.g. obsidian+https://127.0.0.1")
    if parts.username or parts.password:
        raise usage_error(
            f"vault URL {shown!r} carries credentials; put the API key in OBSIDIAN_API_KEY "
            "or [backends.obsidian] instead"
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise usage_error(
            f"vault URL {shown!r} has a path or query; the API serves one vault per port, so "
            "give only obsidian+https://host:port"
        )
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"  # IPv6 literal
    return f"{http_scheme}://{host}:{port}"


def api_key_from(options: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """The API key: option ``key``, else the env var named by ``key_env`` (default
    ``OBSIDIAN_API_KEY``); ``EchoError`` 78 saying where to put it when there is none."""
    key = options.get("key")
    if key:
        return str(key).strip()
    key_env = str(options.get("key_env") or DEFAULT_KEY_ENV)
    value = env.get(key_env, "").strip()
    if value:
        return value
    raise EchoError(
        f"no API key for the Obsidian vault: environment variable {key_env} is not set; "
        f"set {key_env}, or `key` / `key_env` under [backends.obsidian] in the config file "
        "(the key is shown in Obsidian under Settings -> Local REST API)",
        ExitCode.NOT_CONFIGURED,
    )


def api_key_source(options: Mapping[str, Any]) -> str:
    """Where ``api_key_from`` reads the key: the config option or the env var it names."""
    if options.get("key"):
        return "`key` under [backends.obsidian] in the config file"
    return f"the environment variable {options.get('key_env') or DEFAULT_KEY_ENV}"


def _tls_option(options: Mapping[str, Any], base_url: str) -> bool | str:
    """``verify`` for the storage from ``ca_file`` / ``cert_fingerprint`` (78 if misused)."""
    if "verify" in options and options["verify"] is not True:
        raise EchoError(
            "option verify cannot turn TLS verification off for the Obsidian backend; "
            'set ca_file = "/path/obsidian.crt" or cert_fingerprint = "sha256:..." under '
            "[backends.obsidian] instead",
            ExitCode.NOT_CONFIGURED,
        )
    ca_file = options.get("ca_file")
    fingerprint = options.get("cert_fingerprint")
    if ca_file and fingerprint:
        raise EchoError(
            "set either ca_file or cert_fingerprint under [backends.obsidian], not both",
            ExitCode.NOT_CONFIGURED,
        )
    if (ca_file or fingerprint) and not base_url.startswith("https:"):
        raise EchoError(
            "ca_file / cert_fingerprint apply to obsidian+https:// vault URLs only; remove "
            "them or switch the vault URL to obsidian+https://",
            ExitCode.NOT_CONFIGURED,
        )
    if fingerprint:
        from plugins.storage_obsidian.transport import normalize_fingerprint

        return normalize_fingerprint(str(fingerprint))
    if ca_file:
        from pathlib import Path

        path = Path(str(ca_file)).expanduser()
        if not path.is_file():
            raise EchoError(
                f"ca_file {str(path)!r} does not exist; save the Local REST API certificate "
                "there (from Obsidian's plugin settings) or fix ca_file",
                ExitCode.NOT_CONFIGURED,
            )
        return str(path)
    return True


def open_obsidian_storage(
    url: str, options: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> ObsidianStorage:
    """``StorageFactory`` for the ``obsidian+http(s)`` schemes (options: module docstring).

    Errors: a bad URL -> 2; no API key, bad option, or httpx missing -> 78.
    """
    base_url = base_url_from_vault_url(url)
    key = api_key_from(options, os.environ if env is None else env)
    verify = _tls_option(options, base_url)
    numbers: dict[str, float] = {}
    for name, default in _NUMBER_OPTIONS.items():
        raw = options.get(name, default)
        try:
            numbers[name] = float(raw)
        except (TypeError, ValueError):
            raise EchoError(
                f"option {name}={raw!r} under [backends.obsidian] is not a number; fix it "
                "in the config file",
                ExitCode.NOT_CONFIGURED,
            ) from None
        if numbers[name] <= 0:
            raise EchoError(
                f"option {name}={raw!r} under [backends.obsidian] must be positive",
                ExitCode.NOT_CONFIGURED,
            )
    from plugins.storage_obsidian.transport import require_httpx

    require_httpx()
    from plugins.storage_obsidian.obsidian_storage import ObsidianStorage

    return ObsidianStorage(
        base_url,
        key,
        verify=verify,
        timeout=numbers["timeout"],
        concurrency=int(numbers["concurrency"]),
        stale_after=numbers["stale_after"],
        lock_settle=numbers["lock_settle"],
        key_source=api_key_source(options),
    )


@hookimpl
def register_storage(register: Register[StorageFactory]) -> None:
    """Register ``obsidian+https`` and ``obsidian+http`` (the Local REST API plugin)."""
    for scheme in SCHEMES:
        register(scheme, open_obsidian_storage)
