"""A vault URL as a message may show it (no credentials, no query)."""

from __future__ import annotations

__all__ = ["shown_url"]


def shown_url(url: str) -> str:
    """``url`` as an error message may show it: a user / password part and a query
    (``?key=...``) become ``***``, so a key put in the vault URL is never printed."""
    scheme, sep, rest = url.strip().partition("://")
    if not sep:
        return url
    authority, slash, tail = rest.partition("/")
    if "@" in authority:
        authority = "***@" + authority.rpartition("@")[2]
    shown = f"{scheme}://{authority}{slash}{tail}"
    for mark in ("?", "#"):
        if mark in shown:
            shown = shown.split(mark, 1)[0] + mark + "***"
    return shown
