"""The frontmatter a note of a kind lacks, and adding it surgically (SPEC §1.2, §5.1).

Every note of a kind carries ``type``, ``status``, ``created``, ``updated`` and ``tags``
(seeded with the kind); a working note also ``expires``. ``missing_frontmatter`` says
which of those keys a note lacks and the value each would get from the routing manifest;
``backfill_frontmatter`` adds them, one line per key, leaving every other line (order,
comments, quoting, line endings) as it was. The full sweep applies it to every entity
note and ``lint --fix`` to the notes it reports; both call these two functions.

Only absent keys are filled: a key a person set, even to an odd value, is theirs.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from echo_core.frontmatter import set_frontmatter_key
from echo_core.models import Note
from echo_core.routing import RoutingManifest


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list)) and not value)


def missing_frontmatter(note: Note, kind: str, manifest: RoutingManifest, *,
                        created: _dt.date, today: _dt.date) -> dict[str, Any]:
    """Key -> value for each required key (and ``expires`` for a working note) that
    ``note`` lacks or leaves empty, in the manifest's order. ``created`` is the date a
    missing ``created`` gets (the file's date when known); ``updated`` gets the same,
    ``expires`` is ``today`` plus the kind's time to live."""
    route = manifest.route(kind)
    fm = note.frontmatter
    values: dict[str, Any] = {
        "type": kind,
        "status": route.status,
        "created": created,
        "updated": fm.get("created") if isinstance(fm.get("created"), _dt.date) else created,
        "tags": [kind],
    }
    missing = {key: values[key] for key in manifest.required_frontmatter
               if key in values and _blank(fm.get(key))}
    if route.expires_days is not None and _blank(fm.get("expires")):
        missing["expires"] = today + _dt.timedelta(days=route.expires_days)
    return missing


def backfill_frontmatter(text: str, values: dict[str, Any]) -> str:
    """``text`` with each key of ``values`` set (one line each; a note without a block
    gets one). Raises as ``set_frontmatter_key`` does for a block it cannot edit
    line-wise (unclosed, or a layout that would need reformatting)."""
    for key, value in values.items():
        text = set_frontmatter_key(text, key, value)
    return text
