"""Reflection proposals (SPEC §4.4): the one validation ``reflect`` and ``session-end``
share, and the confidence routing both apply.

A proposal is a JSON object: ``title``, ``body``, ``confidence`` (0..1) required;
``kind``, ``tags``, ``aliases``, ``sources``, ``date`` optional (``reflect`` also takes
``supersedes``). ``validate_proposal`` turns one into a ``Proposal`` or raises
``EchoError`` 2 naming the field as the caller spells its list (``reflect[2].confidence``
in a session-end bundle, ``proposals[2].confidence`` for ``reflect``), having checked
everything capture would reject, so nothing is written before a bad proposal is found.

Confidence routing (``Proposal.request``): HIGH (>= 0.85) and MEDIUM (0.6 .. 0.85) are
captured with their kind; LOW (< 0.6), and any proposal without a kind, goes to the
inbox (a capture without kind: ``- <day>: <title> — <first body line>``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from echo_core.errors import EchoError, usage_error
from echo_core.models import CaptureRequest
from echo_core.ops.capture_request import validate_request
from echo_core.routing import RoutingManifest

#: Below this confidence a proposal goes to the inbox (SPEC §4.4).
INBOX_BELOW = 0.6
#: From this confidence a proposal is HIGH.
HIGH_FROM = 0.85
PROPOSAL_KEYS = ("title", "kind", "body", "tags", "aliases", "sources", "date", "confidence")


def confidence_band(confidence: float) -> str:
    """``high`` (>= 0.85), ``medium`` (0.6 .. 0.85) or ``low`` (< 0.6)."""
    if confidence >= HIGH_FROM:
        return "high"
    return "medium" if confidence >= INBOX_BELOW else "low"


@attrs.frozen
class Proposal:
    """One validated proposal (``index`` = its position in the list it came in)."""

    index: int
    title: str
    body: str
    confidence: float
    kind: str | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    date: str | None = None
    #: the note or preference line this proposal replaces (``reflect`` only)
    supersedes: str | None = None

    @property
    def routed_kind(self) -> str | None:
        """The kind it is captured with: None (the inbox) when LOW or without a kind."""
        return self.kind if self.confidence >= INBOX_BELOW else None

    def request(self, *, dry_run: bool) -> CaptureRequest:
        """The capture this proposal becomes (confidence routing, module docstring)."""
        kind = self.routed_kind
        return CaptureRequest(title=self.title, kind=kind, body=self.body, tags=self.tags,
                              aliases=self.aliases, sources=self.sources, date=self.date,
                              supersedes=self.supersedes if kind else None, dry_run=dry_run)


def text_field(raw: Mapping[str, Any], key: str, where: str, *, required: bool,
               one_line: bool = False) -> str | None:
    """``raw[key]`` as a stripped non-empty string (None when absent and not required);
    ``EchoError`` 2 naming ``<where><key>`` otherwise."""
    value = raw.get(key)
    if value is None:
        if required:
            raise usage_error(f"{where}{key}: required (a non-empty string)")
        return None
    if not isinstance(value, str) or not value.strip():
        raise usage_error(f"{where}{key}: must be a non-empty string, got {value!r}"[:200])
    if one_line and ("\n" in value.strip() or "\r" in value.strip()):
        raise usage_error(f"{where}{key}: must be one line")
    return value.replace("\r\n", "\n").strip()


def reject_unknown(raw: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    """``EchoError`` 2 naming the first key of ``raw`` not in ``allowed``."""
    extra = sorted(str(k) for k in raw if k not in allowed)
    if extra:
        raise usage_error(f"{where}{extra[0]}: unknown key; allowed: {', '.join(allowed)}")


def string_list(raw: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    """``raw[key]`` as a tuple of strings (empty when absent); ``EchoError`` 2 otherwise."""
    value = raw.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise usage_error(f"{where}{key}: must be a list of strings, got {value!r}"[:200])
    return tuple(value)


def validate_proposal(index: int, raw: object, manifest: RoutingManifest, *,
                      list_name: str, keys: tuple[str, ...] = PROPOSAL_KEYS) -> Proposal:
    """The ``Proposal`` at ``list_name[index]`` from parsed JSON, or ``EchoError`` 2
    naming the field (``<list_name>[<index>].<field>``). ``keys``: the keys allowed
    (``supersedes`` among them for ``reflect``)."""
    where = f"{list_name}[{index}]."
    if not isinstance(raw, Mapping):
        raise usage_error(f"{list_name}[{index}]: must be an object with title, body, "
                          "confidence")
    reject_unknown(raw, keys, where)
    title = text_field(raw, "title", where, required=True, one_line=True)
    body = text_field(raw, "body", where, required=True)
    kind = text_field(raw, "kind", where, required=False, one_line=True)
    date = text_field(raw, "date", where, required=False, one_line=True)
    supersedes = text_field(raw, "supersedes", where, required=False, one_line=True)
    confidence = raw.get("confidence")
    if (isinstance(confidence, bool) or not isinstance(confidence, (int, float))
            or not math.isfinite(confidence) or not 0 <= confidence <= 1):
        raise usage_error(f"{where}confidence: required, a number from 0 to 1, got {confidence!r}")
    assert title is not None and body is not None
    proposal = Proposal(index, title, body, float(confidence), kind,
                        string_list(raw, "tags", where), string_list(raw, "aliases", where),
                        string_list(raw, "sources", where), date, supersedes)
    try:  # everything capture would reject, now, before any write
        if kind is not None and "{domain}" in manifest.route(kind).folder:
            raise usage_error(f"kind: {kind!r} needs a domain, which a proposal cannot "
                              "give; use another kind, or `echo-memory capture --domain`")
        validate_request(attrs.evolve(proposal.request(dry_run=True), kind=kind,
                                      supersedes=supersedes if kind else None), manifest)
    except EchoError as exc:
        field = "kind" if exc.message.startswith("unknown kind") else ""
        raise usage_error(f"{where}{field + ': ' if field else ''}{exc.message}") from None
    if supersedes is not None and kind is None:
        raise usage_error(f"{where}supersedes: needs a kind (an inbox line replaces nothing)")
    return proposal
