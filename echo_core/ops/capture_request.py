"""Validation of capture requests (SPEC §2.1): every problem is exit 2 naming the field."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from typing import Any

import attrs

from echo_core.errors import usage_error
from echo_core.models import CaptureRequest
from echo_core.names import slugify
from echo_core.redaction import ordered, redact
from echo_core.routing import RoutingManifest
from echo_core.write_scope import require_plain_line, require_text

MAX_TITLE = 200


def _clean_list(field: str, values: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for value in values:
        if not isinstance(value, str):
            raise usage_error(f"{field}: every item must be a string, got {value!r}")
        item = value.strip()
        if "\n" in item or "\r" in item:
            raise usage_error(f"{field}: {value!r} contains a line break")
        require_plain_line(item, field)
        if item and item not in out:
            out.append(item)
    return tuple(out)


_TEXT_FIELDS = ("title", "kind", "body", "tags", "aliases", "sources", "status", "date",
                "domain", "merge_into", "supersedes", "expires")
#: The longest time to live a capture may ask for (ten years).
MAX_TTL_DAYS = 3650


def validate_request(request: CaptureRequest, manifest: RoutingManifest) -> CaptureRequest:
    """A cleaned copy of ``request`` or ``EchoError`` (2) naming the offending field.

    Every text field must be writable as UTF-8 (no lone surrogates from undecodable
    input). A long title is fine up to ``MAX_TITLE``: its slug is capped (``slugify``).
    An entity's title needs a letter or digit (``slugify``); the inbox takes any line.
    ``supersedes`` needs a kind (an inbox line replaces nothing); ``ttl_days`` and
    ``expires`` (one or the other, not both) only for a kind whose notes expire (working
    memory), ``expires`` an ISO date, ``ttl_days`` 1..``MAX_TTL_DAYS``.

    Unless ``redact`` is False, the text fields are redacted first (``_redacted``): a
    title that was only ``<private>`` text is refused as empty.
    """
    for field in _TEXT_FIELDS:
        require_text(getattr(request, field), field)
    request = _redacted(request)
    title = (request.title or "").strip()
    if not title:
        raise usage_error("title: a capture needs a non-empty title")
    if "\n" in title or "\r" in title:
        raise usage_error("title: must be one line (put details in the body)")
    require_plain_line(title, "title")
    if len(title) > MAX_TITLE:
        raise usage_error(f"title: {len(title)} characters; keep it under {MAX_TITLE}")
    kind = request.kind.strip() if request.kind else None
    if kind is not None:
        route = manifest.route(kind)
        slugify(title)  # a title naming nothing (punctuation, emoji) is refused here
        if "{domain}" in route.folder:
            if not request.domain:
                raise usage_error(f"domain: kind {kind!r} needs --domain (one of "
                                  f"{', '.join(manifest.area_domains)})")
            if request.domain not in manifest.area_domains:
                raise usage_error(f"domain: {request.domain!r} is not one of "
                                  f"{', '.join(manifest.area_domains)}")
    elif request.merge_into:
        raise usage_error("kind: --merge-into needs --kind (an inbox capture has no entity)")
    elif request.supersedes:
        raise usage_error("kind: --supersedes needs --kind (an inbox capture replaces nothing)")
    _check_expiry(request, manifest, kind)
    if request.date is not None:
        try:
            _dt.date.fromisoformat(request.date)
        except ValueError:
            raise usage_error(f"date: {request.date!r} is not an ISO date (YYYY-MM-DD)") from None
    status = request.status.strip() if request.status else None
    if status is not None and (not status or " " in status):
        raise usage_error(f"status: {request.status!r} must be one word, e.g. active")
    if request.force and request.merge_into:
        raise usage_error("force: --force and --merge-into contradict each other; pick one")
    supersedes = request.supersedes.strip() if request.supersedes else None
    if request.supersedes is not None and not supersedes:
        raise usage_error("supersedes: give the slug of the note it replaces, or the "
                          "preference line in quotes")
    if supersedes and ("\n" in supersedes or "\r" in supersedes):
        raise usage_error("supersedes: must be one line (a slug or one preference line)")
    body = (request.body or "").replace("\r\n", "\n").strip("\n")
    return attrs.evolve(
        request, title=title, kind=kind, body=body, status=status,
        tags=_clean_list("tags", request.tags), aliases=_clean_list("aliases", request.aliases),
        sources=_clean_list("sources", request.sources),
        merge_into=request.merge_into.strip() if request.merge_into else None,
        supersedes=supersedes, expires=request.expires.strip() if request.expires else None,
    )


_REDACTED_TEXTS = ("title", "body", "supersedes")
_REDACTED_LISTS = ("tags", "aliases", "sources")


def _redacted(request: CaptureRequest) -> CaptureRequest:
    """``request`` with its title, body, supersedes, tags, aliases and sources redacted
    (``echo_core.redaction.redact``: secrets become markers, ``<private>`` blocks go) and
    the rules that fired added to ``redacted``; as given when ``redact`` is False."""
    if not request.redact:
        return request
    fired = set(request.redacted)
    changes: dict[str, Any] = {}
    for field in _REDACTED_TEXTS:
        value = getattr(request, field)
        if isinstance(value, str) and value:
            result = redact(value)
            if result.found:
                changes[field] = result.text
                fired.update(result.found)
    for field in _REDACTED_LISTS:
        items: list[Any] = []
        for item in getattr(request, field):
            if isinstance(item, str):  # any other item is refused by _clean_list
                cleaned = redact(item)
                item = cleaned.text
                fired.update(cleaned.found)
            items.append(item)
        changes[field] = tuple(items)
    return attrs.evolve(request, **changes, redacted=ordered(fired))


def _check_expiry(request: CaptureRequest, manifest: RoutingManifest, kind: str | None) -> None:
    if request.ttl_days is None and not request.expires:
        return
    field = "ttl_days" if request.ttl_days is not None else "expires"
    if kind is None or manifest.route(kind).expires_days is None:
        expiring = ", ".join(k for k in manifest.kinds if manifest.route(k).expires_days
                             is not None) or "none"
        raise usage_error(f"{field}: only notes of a kind that expires take it (kinds: "
                          f"{expiring}); {kind or 'an inbox capture'} does not")
    if request.ttl_days is not None and request.expires:
        raise usage_error("ttl_days: give --ttl or --expires, not both")
    if request.ttl_days is not None and (isinstance(request.ttl_days, bool) or not isinstance(
            request.ttl_days, int) or not 1 <= request.ttl_days <= MAX_TTL_DAYS):
        raise usage_error(f"ttl_days: {request.ttl_days!r} is not a number of days from 1 "
                          f"to {MAX_TTL_DAYS}")
    if request.expires:
        try:
            _dt.date.fromisoformat(request.expires.strip())
        except ValueError:
            raise usage_error(f"expires: {request.expires!r} is not an ISO date "
                              "(YYYY-MM-DD)") from None
