"""queue_outbox: the offline outbox (SPEC §5.4) — writes made while the vault is
unreachable wait here, in the per-machine state dir, until ``flush`` (or ``load``)
replays them."""

from __future__ import annotations

from typing import Any

from echo_core import hookimpl


@hookimpl
def register_queues(register: Any) -> None:
    """Register the ``outbox`` queue factory: ``factory(state_dir) -> OutboxQueue``."""

    def factory(state_dir: str) -> Any:
        from plugins.queue_outbox.outbox import OutboxQueue

        return OutboxQueue(state_dir)

    register("outbox", factory)
