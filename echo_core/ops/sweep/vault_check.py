"""Whether the sweep may repair this folder: a vault, even one that lost its marker.

Every other verb refuses a folder without the marker (``vault_seen.require_vault``);
the sweep is how a lost marker comes back, so it goes ahead when the folder still holds
echo-memory's own files under ``_agent/`` (the entity index, the memory notes). A folder
with none of them is not a vault to repair (a mount point without its drive looks like
this; ``init`` makes new vaults), and the sweep refuses it (78).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from echo_core.errors import NotConfiguredError
from echo_core.protocols import VaultMissing
from echo_core.vault import MARKER_PATH
from echo_core.vault_seen import mark_seen, vault_missing_error

if TYPE_CHECKING:
    from echo_core.context import EchoContext


def require_repairable(ctx: EchoContext) -> bool:
    """Return whether the marker is there; raise when the folder is not a vault."""
    storage = ctx.vault.storage
    try:
        if storage.exists(MARKER_PATH):
            mark_seen(ctx)
            return True
        own_files = storage.list("_agent")
    except VaultMissing as down:
        raise vault_missing_error(ctx, down) from None
    if own_files:
        return False
    from echo_core.vault_seen import init_advice, shown_vault

    where = ctx.config.vault.value
    raise NotConfiguredError(
        f"{shown_vault(where)} has no marker {MARKER_PATH} and none of echo-memory's files "
        "under _agent/, so there is no vault here to repair. Check the vault path (a mount "
        f"point without its drive looks like this); to start a new vault there: "
        f"{init_advice(where)}")
