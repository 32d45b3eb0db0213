"""Whether this machine has seen the vault initialised: "unreachable" versus "not a vault".

A folder that is absent now may be a vault on a drive that is not mounted, or a path that
never held one. The vault's own marker cannot tell (it is not there), so the per-machine
state dir remembers: the first time an operation finds the marker, ``vault-seen.json``
is written there (``{"identity", "first_seen"}``). Writes to a vault that is missing
queue in the outbox only when it was seen; ``init`` refuses to create a new empty vault
where a seen one has gone missing; advice never says "run init" about a path that was a
vault.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from echo_core.errors import EchoError, NotConfiguredError, UnavailableError
from echo_core.tempfiles import temp_name
from echo_core.vault import MARKER_PATH

if TYPE_CHECKING:
    from echo_core.context import EchoContext

SEEN_FILE = "vault-seen.json"


def was_seen(ctx: EchoContext) -> bool:
    """Whether the marker of this vault was ever found from this machine."""
    if ctx.vault_seen:
        return True
    return (ctx.state_dir / SEEN_FILE).is_file()


def mark_seen(ctx: EchoContext) -> None:
    """Remember that the vault's marker was found (written once; never raises: the
    record only sharpens advice and queueing, so an unwritable state dir costs nothing)."""
    if ctx.vault_seen:
        return
    target = ctx.state_dir / SEEN_FILE
    try:
        if not target.is_file():
            tmp = target.with_name(temp_name(SEEN_FILE))
            record = {"identity": ctx.storage.identity,
                      "first_seen": ctx.now().isoformat(timespec="seconds")}
            tmp.write_text(json.dumps(record) + "\n", encoding="utf-8")
            os.replace(tmp, target)
    except OSError:
        return
    ctx.vault_seen = True


def require_initialised(ctx: EchoContext) -> None:
    """Return when the vault has its marker (and remember it was seen).

    Errors: 78 when the vault is reachable but has no marker (the advice to run ``init``
    is given only for a path this machine never saw as a vault); ``BackendUnavailable``
    (``VaultMissing`` for an absent folder) propagates for the caller to queue or report.
    """
    if not ctx.vault.storage.exists(MARKER_PATH):
        where = ctx.config.vault.value
        if was_seen(ctx):
            raise NotConfiguredError(
                f"vault {where} has lost its marker {MARKER_PATH}: this machine used a vault "
                "there before. Check that the right folder or drive is there (a mount point "
                "without its drive looks like this) and restore the marker from a backup "
                "(`echo-memory backup`) or your sync history")
        raise NotConfiguredError(
            f"vault {where} is not initialised (no {MARKER_PATH}); run `echo-memory init` "
            "first")
    mark_seen(ctx)


def missing_vault_error(ctx: EchoContext, down: Exception, what: str) -> EchoError:
    """The error for ``what`` (e.g. "capture") meeting an absent vault folder that this
    machine never saw as a vault: nothing is queued (exit 69)."""
    where = ctx.config.vault.value
    return UnavailableError(
        f"vault {where} is not there ({down}); nothing was queued, since this machine has "
        f"never used a vault at that path. Check --vault / ECHO_VAULT / the config file; "
        f"if the vault is on a drive, mount it. To start a new vault at that path: "
        f"`echo-memory init --vault {where}`")
