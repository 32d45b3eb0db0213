"""What a capture gate sees (the ``ctx`` of the ``gate_capture`` policy hook)."""

from __future__ import annotations

import datetime as _dt
from typing import Any

import attrs

from echo_core.entities import EntityIndex
from echo_core.routing import KindRoute


@attrs.frozen
class GateContext:
    """The entity index as it is under the vault lock, the route of the requested kind,
    the ``EchoContext`` (for settings) and the capture's ``today`` (a replayed capture's
    own day; None when unknown). Gates must not write and must not ask ``echo`` the day."""

    entities: EntityIndex
    route: KindRoute
    echo: Any = None
    today: _dt.date | None = None
