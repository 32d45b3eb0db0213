"""``history``, ``restore`` and ``backup``, declared once."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core.actions import Action
from echo_core.models import Envelope
from echo_core.operations import (
    Access,
    CliParam,
    CliSurface,
    McpSurface,
    Operation,
    lazy_type,
    param,
)
from echo_core.operations.spelling import current_surface
from echo_core.verbs.note_verbs import CLI_PATH, MAX_PATH

_SKIPPED_SHOWN = 10


@attrs.frozen(kw_only=True)
class HistoryParams:
    """What ``history`` takes."""

    path: str = param(help="Vault-relative note path.", min_length=1, max_length=MAX_PATH,
                      cli=CLI_PATH)


def render_history(env: Envelope[Any]) -> str:
    """Each kept version: id, when, size, headline, and the path it was kept at when the
    note was elsewhere then (it moved), marked when it is the note's text now (or, the
    note deleted by hand, its last text); then the note's version now and how to restore
    with it as the base (so a restore refuses once the note has changed)."""
    data = env.data
    if not data.versions:
        return env.message
    here = data.moved_to or data.path
    now = data.current_version
    last = data.deleted.version_id if data.deleted else None
    lines = [f"{env.message}:"]
    for v in data.versions:
        kept = f"  (kept at {v.path})" if v.path and v.path != here else ""
        mark = ("  <- the note now" if v.version_id == now else
                "  <- its last text" if v.version_id == last else "")
        lines.append(f"  {v.version_id}  {v.saved_at}  {v.size:>7} B  {v.headline}{kept}{mark}")
    if now:
        lines.append(f"The note now is version {now}: give it as the base of a restore, "
                     "which then refuses (writing nothing) if the note changes meanwhile.")
    if current_surface() == "mcp":
        base = f"base: \"{now}\"; " if now else ""
        lines.append(f"Preview a restore with echo_restore_note (path: {here}; version_id: "
                     f"an id above or \"previous\"; {base}confirm: true restores).")
    else:
        base = f" --base {now}" if now else ""
        lines.append(f"Preview a restore with `echo-memory restore {here} <version>{base}` "
                     "(or `previous`).")
    return "\n".join(lines)


def run_history(ctx: Any, p: HistoryParams) -> Envelope[Any]:
    """``ops.history.note_history``."""
    from echo_core.ops.history import note_history

    return note_history(ctx, p.path)


HISTORY = Operation(
    "history", "List the earlier versions kept of the note at PATH, newest first.",
    ("List the earlier versions kept of one note, newest first. Use it before restoring a "
     "note a write damaged. Returns each version's id, time, size and headline."),
    HistoryParams, run_history, lazy_type("echo_core.ops.history", "HistoryResult"),
    render=render_history, mcp=McpSurface(tool="echo_note_history"),
    cli=CliSurface(help="""List the earlier versions kept of the note at PATH, newest first.

A version is kept whenever a note is overwritten (put, capture's section updates,
fm, restore) or deleted: up to 20 per note, in the state dir (not the vault).
Each line: version id, when it was kept, size, first heading or line; then the
note's current version (`current_version` in --json), to give restore as --base.
History follows a moved note (sweep --decay moving a project, or a file you moved
yourself) and a renamed one (`mv ada.md ada-lovelace.md`, Obsidian's rename: seen
by the next command, which finds the old path gone and the same text at the new):
the versions kept at its old path are listed with its own, marked "kept at <old
path>", and PATH being the old path lists them too, naming where the note is now.
A file renamed and edited before the next command ran (or two notes of one text
renamed together) is not followed: its new path starts a history of its own.
A note deleted by hand (or renamed, then deleted) lists its versions at its last
PATH, saying whether its last text is among them ("<- its last text"): the text a
write leaves is kept only once a later write replaces it, so it may not be.
Exit 44 when PATH has no note and no history."""),
    fresh="quick",
)


@attrs.frozen(kw_only=True)
class RestoreParams:
    """What ``restore`` takes."""

    path: str = param(help="Vault-relative note path.", min_length=1, max_length=MAX_PATH,
                      cli=CLI_PATH)
    version_id: str = param(help="A version id from history, its first 4+ digits, or "
                            "`previous` (the newest kept text other than the current one).",
                            min_length=1, max_length=100,
                            cli=CliParam(positional=True, metavar="VERSION"))
    confirm: bool = param(False, help="Really restore (false, the default: only show the "
                          "diff).", cli=CliParam(flag="--yes", help="Really restore "
                                                 "(without it: only show the diff)."))
    base: str | None = param(None, help="The version of the note you looked at (the "
                             "`current_version` of `history --json`, or the `version` of "
                             "`get --json`): when the note has changed since (a capture or "
                             "a person's edit landed), nothing is written (exit 1) and a "
                             "preview says so; list its history again and choose again.",
                             min_length=4, max_length=64, cli=CliParam(metavar="VERSION"))


def render_restore(env: Envelope[Any]) -> str:
    """The diff, then what was done."""
    diff: str = env.data.diff
    if env.action == Action.UNCHANGED:
        return env.message
    return f"{diff.rstrip()}\n{env.message}" if diff else env.message


def run_restore(ctx: Any, p: RestoreParams) -> Envelope[Any]:
    """``ops.history.restore_note``."""
    from echo_core.ops.history import restore_note

    return restore_note(ctx, p.path, p.version_id, confirm=p.confirm, base=p.base)


def restore_access(p: RestoreParams) -> Access:
    """Destructive when confirmed (the replaced text is kept as a version); else a read."""
    return "destructive" if p.confirm else "read"


RESTORE = Operation(
    "restore", "Restore the note at PATH to VERSION (an id from `history`, or its first 4+ digits).",
    ("Restore one note to a version listed by echo_note_history (version_id, or "
     "'previous'); with confirm=false (the default) it only previews the diff. Use it to "
     "undo a damaging write, then call again with confirm=true, passing base (the "
     "current_version echo_note_history returned) so a note changed since is not "
     "reverted. Returns the diff and whether the note was restored."),
    RestoreParams, run_restore, lazy_type("echo_core.ops.history", "RestoreResult"),
    access=restore_access, lock_param="path", render=render_restore,
    mcp=McpSurface(tool="echo_restore_note"),
    cli=CliSurface(help="""Restore the note at PATH to VERSION (an id from `history`, or its first 4+ digits).

VERSION `previous` is the newest kept text other than the note's current one (so a
second restore of `previous` undoes the first); for a note deleted by hand, its last
text when kept (restoring another version of it warns that it is not that text).
Without --yes: prints the unified diff from the current text to VERSION and changes
nothing. With --yes: writes it; the text it replaces is kept as a new version, so
a restore can itself be undone, and an entity's index entry (title, aliases)
follows the restored note. A note evolve archived versions of also gets the
text it replaces archived under _agent/archive/ (so recall --as-of still finds
it). VERSION may be one kept at the note's path before it was moved, or renamed
(once a command since the rename, such as `history`, has seen it).
Exit 44 when PATH has no history, VERSION is not one of its versions, or PATH has
no note because the note moved (restore it at the path the message names: a
restore never makes a second note of one name).

With --base VERSION (the current version `history` prints): exit 1, nothing
written, when the note is another version now (a capture or an edit landed since
you looked, so `previous` may no longer be the text you saw); a preview says so."""),
)


@attrs.frozen(kw_only=True)
class BackupParams:
    """What ``backup`` takes."""

    keep: int = param(30, help="How many backups of this vault to keep in the folder "
                      "(newest first).", ge=1, le=10000)
    out: str | None = param(None, help="Folder for the zip (default: <state dir>/vaults/<vault id>/"
                            "backups; the command prints the path).",
                            cli=CliParam(metavar="DIR"))
    history: bool = param(True, help="Put the vault's note history (the versions `history` "
                          "lists) in the zip under .echo-history/.",
                          cli=CliParam(flag="--no-history", negate=True, help="Leave the "
                                       "note history (kept per machine) out of the zip."))
    verify: str | None = param(None, help="Write nothing: check the backup ZIP, or the "
                               "folder it was unzipped into, against its manifest; every "
                               "missing, extra or damaged file is named (exit 1).",
                               max_length=4096, cli=CliParam(metavar="ZIP|DIR"))


def render_backup(env: Envelope[Any]) -> str:
    """What was zipped, skipped and removed (or, for --verify, what was found)."""
    from echo_core.ops.backup import NO_HISTORY, OWN_BACKUP
    from echo_core.ops.backup_verify import VerifyResult, describe

    data = env.data
    if isinstance(data, VerifyResult):
        return describe(env)
    head = (f"backed up {data.files} files ({data.bytes} bytes) to {data.path} "
            f"({data.zip_bytes} bytes zipped)")
    lines = [head]
    unread = [s for s in data.skipped if s.reason != OWN_BACKUP]
    if unread:
        lines.append(f"skipped {len(unread)} file(s) it could not read:")
        lines += [f"  {s.path}: {s.reason}" for s in unread[:_SKIPPED_SHOWN]]
        if len(unread) > _SKIPPED_SHOWN:
            lines.append(f"  ... and {len(unread) - _SKIPPED_SHOWN} more (see --json)")
    if not env.ok:
        lines.append("this backup is incomplete: a restore from it would lack the files above")
    own = len(data.skipped) - len(unread)
    if own:
        lines.append(f"left out {own} earlier backup(s) of this vault in the backup folder "
                     "(listed in --json)")
    if data.removed:
        lines.append(f"removed {len(data.removed)} older backup(s), keeping the newest "
                     f"{data.keep}")
    if not data.history:
        lines.append(NO_HISTORY)
    elif data.history_files:
        lines.append(f"with the note history: {data.history_files} file(s) under "
                     ".echo-history/ in the zip")
    return "\n".join(lines)


def run_backup(ctx: Any, p: BackupParams) -> Envelope[Any]:
    """``ops.backup_verify.verify_backup`` with ``verify`` (no vault needed); else
    ``ops.backup.backup_vault``, after the vault checks every vault verb gets."""
    if p.verify is not None:
        from echo_core.ops.backup_verify import verify_backup

        return verify_backup(p.verify)
    from echo_core.ops.backup import backup_vault
    from echo_core.protocols import VaultMissing
    from echo_core.vault_seen import require_vault, vault_missing_error

    require_vault(ctx)
    try:
        return backup_vault(ctx, keep=p.keep, out=p.out, history=p.history)
    except VaultMissing as down:
        raise vault_missing_error(ctx, down) from None


def backup_access(p: BackupParams) -> Access:
    """A read with ``verify``; else a write (the zip, and rotation)."""
    return "read" if p.verify is not None else "write"


BACKUP = Operation(
    "backup", "Write a dated zip of the whole vault, then delete all but the newest --keep.",
    ("Write a dated zip of the whole vault and prune old ones. Use it before risky bulk "
     "changes. Returns the zip's path and what was skipped or removed."),
    BackupParams, run_backup, lazy_type("echo_core.ops.backup", "BackupResult"),
    access=backup_access, render=render_backup, mcp=None, needs_vault=False,
    cli=CliSurface(help="""Write a dated zip of the whole vault, then delete all but the newest --keep.

The zip is echo-memory-<vault name>-YYYY-MM-DD-HHMMSS.zip, in
<state dir>/vaults/<vault id>/backups/ (or --out DIR). Every file goes in as its bytes (notes, images, PDFs),
with its modification time, read through the vault's backend (folder or Obsidian alike);
hidden files and folders (.obsidian/, .git/) are left out, and so are this vault's own
earlier backups when --out is inside the vault (listed). Only this vault's backups are
ever deleted (each zip names its vault in its comment): another vault's, an older
backup without that mark, and any other file in the folder are never touched.
The last entry, .echo-backup-manifest.json, lists every file's size and SHA-256.

Note history (the versions `history` lists) is kept per machine in the state dir
(in the store itself for PostgreSQL), not with the notes: it goes in the zip under
.echo-history/ (hidden: never a note; import merges it into a vault's history);
with --no-history it is not in the backup.

\b
Restore (--verify needs no vault and writes nothing; exit 1 names every
missing, extra or damaged file):
  echo-memory backup --verify ZIP     check the zip first
  unzip -q ZIP -d DIR                 into an empty folder (file times kept)
  echo-memory backup --verify DIR     catches anything unzip could not write

Then copy it into a vault (a new one: `echo-memory init --vault V` first) with
`echo-memory import --from DIR`: the notes, and their history from .echo-history/
merged into the vault's (importing again adds nothing). DIR can also be used as
the vault itself (ECHO_VAULT=DIR), but then its .echo-history/ is not read."""),
)
