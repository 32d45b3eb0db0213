"""What a capture gate sees (the ``ctx`` of the ``gate_capture`` policy hook)."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core.entities import EntityIndex
from echo_core.routing import KindRoute


@attrs.frozen
class GateContext:
    """The entity index as it is under the vault lock, the route of the requested kind,
    and the ``EchoContext`` (for settings). Gates must not write."""

    entities: EntityIndex
    route: KindRoute
    echo: Any = None
