"""Durability verbs: ``history``, ``restore`` and ``backup`` (SPEC §5.6)."""

from __future__ import annotations

import click

from echo_core.cli_kit import common_options, current_context, emit
from echo_core.models import Envelope

_SKIPPED_SHOWN = 10


def _render_history(env: Envelope) -> str:
    data = env.data
    if not data.versions:
        return env.message
    lines = [f"{env.message}:"]
    for v in data.versions:
        lines.append(f"  {v.version_id}  {v.saved_at}  {v.size:>7} B  {v.headline}")
    lines.append(f"Preview a restore with `echo-memory restore {data.path} <version>`.")
    return "\n".join(lines)


@click.command("history")
@click.argument("path")
@common_options
def history_command(path: str, as_json: bool) -> None:
    """List the earlier versions kept of the note at PATH, newest first.

    A version is kept whenever a note is overwritten (put, capture's section updates,
    fm, restore) or deleted: up to 20 per note, in the state dir (not the vault).
    Each line: version id, when it was kept, size, first heading or line.
    Exit 44 when PATH has no note and no history.
    """
    from echo_core.ops.history import note_history

    emit(note_history(current_context(), path), as_json, _render_history)


def _render_restore(env: Envelope) -> str:
    diff: str = env.data.diff
    if env.action == "unchanged":
        return env.message
    return f"{diff.rstrip()}\n{env.message}" if diff else env.message


@click.command("restore")
@click.argument("path")
@click.argument("version")
@click.option("--yes", is_flag=True, help="Really restore (without it: only show the diff).")
@common_options
def restore_command(path: str, version: str, yes: bool, as_json: bool) -> None:
    """Restore the note at PATH to VERSION (an id from `history`, or its first 4+ digits).

    Without --yes: prints the unified diff from the current text to VERSION and changes
    nothing. With --yes: writes it; the text it replaces is kept as a new version, so
    a restore can itself be undone. Exit 44 when PATH has no history or VERSION is not
    one of its versions.
    """
    from echo_core.ops.history import restore_note

    emit(restore_note(current_context(), path, version, confirm=yes), as_json, _render_restore)


def _render_backup(env: Envelope) -> str:
    data = env.data
    head = (f"backed up {data.files} files ({data.bytes} bytes) to {data.path} "
            f"({data.zip_bytes} bytes zipped)")
    lines = [head]
    if data.skipped:
        lines.append(f"skipped {len(data.skipped)} file(s) the storage cannot read as text:")
        lines += [f"  {s.path}: {s.reason}" for s in data.skipped[:_SKIPPED_SHOWN]]
        if len(data.skipped) > _SKIPPED_SHOWN:
            lines.append(f"  ... and {len(data.skipped) - _SKIPPED_SHOWN} more (see --json)")
    if data.removed:
        lines.append(f"removed {len(data.removed)} older backup(s), keeping the newest "
                     f"{data.keep}")
    return "\n".join(lines)


@click.command("backup")
@click.option("--keep", type=click.IntRange(min=1), default=30, show_default=True,
              help="How many backups of this vault to keep in the folder (newest first).")
@click.option("--out", metavar="DIR", help="Folder for the zip (default: <state dir>/backups).")
@common_options
def backup_command(keep: int, out: str | None, as_json: bool) -> None:
    """Write a dated zip of the whole vault, then delete all but the newest --keep.

    The zip is echo-memory-<vault name>-YYYY-MM-DD-HHMMSS.zip; every file is read through
    the vault's backend (folder or Obsidian alike), hidden files left out. Other files in
    the folder are never touched. Restore by unzipping into an empty folder.
    """
    from echo_core.ops.backup import backup_vault

    emit(backup_vault(current_context(), keep=keep, out=out), as_json, _render_backup)


def add_to(cli: click.Group) -> None:
    """Attach this module's commands to ``cli``."""
    for command in (history_command, restore_command, backup_command):
        cli.add_command(command)
