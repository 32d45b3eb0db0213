"""Whether this machine has seen the vault initialised: "unreachable" versus "not a vault".

A folder that is absent now may be a vault on a drive that is not mounted, or a path that
never held one. The vault's own marker cannot tell (it is not there), so the per-machine
state dir remembers: the first time an operation finds the marker, ``vault-seen.json``
is written there (``{"identity", "first_seen"}``). Writes to a vault that is missing
queue in the outbox only when it was seen; ``init`` refuses to create a new empty vault
where a seen one has gone missing; advice never says "run init" about a path that was a
vault.

Every verb that works on a vault says the same for each case (``require_vault`` before
it runs, ``vault_missing_error`` for a missing folder it meets):

* a path never seen as a vault (no folder, or a folder without the marker): "not an
  echo-memory vault", check the path or init one there (exit 78);
* a folder this machine used that is not there now: "mount the drive or restore the
  folder" (exit 69; writes that can wait are kept in the outbox);
* a reachable vault that lost its marker: restore the marker (exit 78).
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING

from echo_core.errors import EchoError, NotConfiguredError, UnavailableError
from echo_core.protocols import BackendUnavailable, VaultMissing
from echo_core.tempfiles import temp_name
from echo_core.vault import MARKER_PATH

if TYPE_CHECKING:
    from pathlib import Path

    from echo_core.context import EchoContext

SEEN_FILE = "vault-seen.json"
_URL_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_QUERY_PASSWORD = re.compile(r"(?<=[?&])password=[^&#]*")


def shown_vault(setting: str) -> str:
    """The vault setting ``setting`` as shown to a person (messages, advice, JSON): a URL
    whose userinfo holds a password (``scheme://user:PASSWORD@host/...``) or that has a
    ``password=`` query option gets ``***`` in its place; anything else (a folder path, a
    URL without a password) is returned unchanged. Never raises."""
    scheme, sep, rest = setting.partition("://")
    if not sep or not _URL_SCHEME.fullmatch(scheme):
        return setting
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    userinfo, at, host = rest[:end].rpartition("@")
    user, _, password = userinfo.partition(":")
    netloc = f"{user}:***@{host}" if at and password else rest[:end]
    tail = _QUERY_PASSWORD.sub("password=***", rest[end:])
    return f"{scheme}://{netloc}{tail}"


def was_seen(ctx: EchoContext) -> bool:
    """Whether the marker of this vault was ever found from this machine."""
    if ctx.vault_seen:
        return True
    return (ctx.state_dir / SEEN_FILE).is_file()


def seen_identity(state_dir: Path) -> str | None:
    """The vault identity recorded in the state dir ``state_dir`` (its ``vault-seen.json``,
    written by this version or an older one), or None when it records none. Never raises."""
    try:
        record = json.loads((state_dir / SEEN_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    identity = record.get("identity") if isinstance(record, dict) else None
    return identity if isinstance(identity, str) else None


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


def init_advice(setting: str) -> str:
    """``echo-memory init --vault <setting>`` as shown to a person (``shown_vault``), and
    when that hid a password, a word to put the real one back."""
    shown = shown_vault(setting)
    hidden = " (with the real password in place of ***)" if shown != setting else ""
    return f"`echo-memory init --vault {shown}`{hidden}"


def _path_advice(setting: str) -> str:
    return (f"check the vault path (--vault, ECHO_VAULT or `vault` in the config file) for "
            f"a typo; to start a new vault there: {init_advice(setting)}")


def not_a_vault_error(ctx: EchoContext, why: str) -> NotConfiguredError:
    """The one error every verb gives for a vault path that is not a vault this machine
    knows (exit 78): ``why`` says what is there ("the folder does not exist", ...). The
    setting is shown as ``shown_vault`` does (no password)."""
    setting = ctx.config.vault.value
    return NotConfiguredError(f"{shown_vault(setting)} is not an echo-memory vault ({why}); "
                              f"{_path_advice(setting)}")


def lost_marker_error(ctx: EchoContext) -> NotConfiguredError:
    """The vault is reachable but its marker is gone, and this machine used it (78)."""
    return NotConfiguredError(
        f"vault {shown_vault(ctx.config.vault.value)} has lost its marker {MARKER_PATH}: "
        "this machine used a vault there before. Check that the right folder or drive is "
        "there (a mount point without its drive looks like this); if it is, "
        "`echo-memory sweep --apply` rewrites the marker")


def vault_gone_text(ctx: EchoContext) -> str:
    """What every verb says when the vault folder this machine used is not there."""
    return (f"vault {shown_vault(ctx.config.vault.value)} is missing, and this machine used "
            "a vault there: mount the drive or restore the folder")


class VaultGone(VaultMissing):
    """The vault folder this machine used is not there (exit 69, "mount or restore")."""


def vault_gone_error(ctx: EchoContext, down: Exception) -> VaultGone:
    """``vault_gone_text`` with the storage's own words, then "run the command again"."""
    return VaultGone(f"{vault_gone_text(ctx)}, then run the command again ({down})")


def vault_missing_error(ctx: EchoContext, down: VaultMissing) -> EchoError:
    """The error an operation that met ``down`` (the vault folder absent) ends with: the
    seen case (69, mount or restore) or not a vault (78)."""
    if isinstance(down, VaultGone):
        return down
    if was_seen(ctx):
        return vault_gone_error(ctx, down)
    return not_a_vault_error(ctx, "the folder does not exist")


def require_vault(ctx: EchoContext) -> None:
    """What every verb that works on a vault checks first (once per context).

    Returns when the marker is there (remembered as seen), and when the backend cannot
    be reached now but held the vault when this machine last reached it (a network outage;
    a missing folder this machine used): the verb then queues its write, answers from the
    cache, or fails as ``vault_missing_error`` says. Raises ``not_a_vault_error`` (78)
    for a path this machine never saw as a vault, whether the folder is missing or holds
    no marker, ``never_reached_error`` (69) for a server this machine never reached (a
    typo in a URL, port or key must not look like a write saved for later), and
    ``lost_marker_error`` (78) for a reachable vault that lost its marker."""
    if ctx.vault_seen:
        return
    try:
        present = ctx.vault.storage.exists(MARKER_PATH)
    except VaultMissing:
        if was_seen(ctx):
            return
        raise not_a_vault_error(ctx, "the folder does not exist") from None
    except BackendUnavailable as down:
        if was_seen(ctx):
            return
        raise never_reached_error(ctx, down) from None
    if not present:
        if was_seen(ctx):
            raise lost_marker_error(ctx)
        raise not_a_vault_error(ctx, f"the folder has no marker {MARKER_PATH}")
    mark_seen(ctx)


def never_reached_error(ctx: EchoContext, down: Exception) -> UnavailableError:
    """The vault's server cannot be reached and this machine never reached a vault there
    (exit 69): nothing is written or queued."""
    return UnavailableError(
        f"cannot reach {shown_vault(ctx.config.vault.value)} ({down}), and this machine "
        "never reached a vault there, so a write is not queued for it: check the URL, "
        "port and key for a typo, or start the server and run the command again")


def require_initialised(ctx: EchoContext) -> None:
    """Return when the vault has its marker (and remember it was seen).

    Errors: 78 when the vault is reachable but has no marker (``not_a_vault_error``, or
    ``lost_marker_error`` for a path this machine saw as a vault); ``BackendUnavailable``
    (``VaultMissing`` for an absent folder) propagates for the caller to queue or report.
    """
    if not ctx.vault.storage.exists(MARKER_PATH):
        if was_seen(ctx):
            raise lost_marker_error(ctx)
        raise not_a_vault_error(ctx, f"the folder has no marker {MARKER_PATH}")
    mark_seen(ctx)


def missing_vault_error(ctx: EchoContext, down: Exception, what: str) -> EchoError:
    """The error for ``what`` (e.g. "capture") meeting an absent vault folder that this
    machine never saw as a vault: nothing is queued (``not_a_vault_error``, exit 78)."""
    return not_a_vault_error(ctx, f"the folder does not exist; nothing was queued for {what}")
