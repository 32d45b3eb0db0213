"""What a capture gate sees (the ``ctx`` of the ``gate_capture`` policy hook)."""

from __future__ import annotations

import datetime as _dt
from typing import Any

import attrs

from echo_core.protocols import EntityLookup
from echo_core.routing import KindRoute


@attrs.frozen
class GateContext:
    """The entities as they are under the vault lock (an ``EntityLookup``: the name
    cache in a capture, lookups only, no whole index to walk), the route of the requested kind,
    the ``EchoContext`` (for settings) and the capture's ``today`` (a replayed capture's
    own day; None when unknown). Gates must not write and must not ask ``echo`` the day."""

    entities: EntityLookup
    route: KindRoute
    echo: Any = None
    today: _dt.date | None = None
