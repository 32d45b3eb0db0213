"""``export`` and ``import`` (the vault to and from a plain folder), declared once.

Command line only, like ``backup``: both read or write a folder on the machine running
them, which is not a model's to choose through the MCP server.
"""

from __future__ import annotations

from typing import Any

import attrs

from echo_core.models import Envelope
from echo_core.operations import Access, CliParam, CliSurface, Operation, lazy_type, param

#: Files per kind of outcome the readable report lists (``--json`` has them all).
_SHOWN = 10
_FORCE_HELP = ("Write into a folder that is not empty: a file with the same path and other "
               "content is replaced (and listed); nothing else there is touched.")


@attrs.frozen(kw_only=True)
class ExportParams:
    """What ``export`` takes."""

    to: str = param(help="The folder to write the vault into: new or empty (unless "
                    "--force).", min_length=1, max_length=4096,
                    cli=CliParam(flag="--to", metavar="DIR"))
    force: bool = param(False, help=_FORCE_HELP)


@attrs.frozen(kw_only=True)
class ImportParams:
    """What ``import`` takes."""

    source: str = param(help="The folder to copy into the vault (a folder vault, or any "
                        "folder of notes).", min_length=1, max_length=4096,
                        cli=CliParam(flag="--from", metavar="DIR"))
    force: bool = param(False, help="Replace the vault's files that differ from the "
                        "folder's at the same path (each replaced text is kept in the note "
                        "history); without it such an import is refused, nothing written.")


def render_transfer(env: Envelope[Any]) -> str:
    """The counts, then what was replaced and skipped, the hidden entries left out and
    the note-history entries skipped."""
    data = env.data
    lines = [env.message]
    hidden = getattr(data, "hidden", ())
    history = getattr(data, "history_skipped", ())
    for title, items in (("replaced", [(p, "") for p in data.replaced]),
                         ("skipped", [(s.path, s.reason) for s in data.skipped]),
                         ("left out (hidden)", [(p, "") for p in hidden]),
                         ("note history skipped", [(s.path, s.reason) for s in history])):
        if items:
            lines.append(f"{title}:")
            lines += [f"  {path}{': ' + why if why else ''}" for path, why in items[:_SHOWN]]
            if len(items) > _SHOWN:
                lines.append(f"  ... and {len(items) - _SHOWN} more (see --json)")
    return "\n".join(lines)


def run_export(ctx: Any, p: ExportParams) -> Envelope[Any]:
    """``ops.vault_transfer.export_vault``."""
    from echo_core.ops.vault_transfer import export_vault

    return export_vault(ctx, p.to, force=p.force)


def run_import(ctx: Any, p: ImportParams) -> Envelope[Any]:
    """``ops.vault_transfer.import_vault``."""
    from echo_core.ops.vault_transfer import import_vault

    return import_vault(ctx, p.source, force=p.force)


def import_access(p: ImportParams) -> Access:
    """Destructive when it may replace files (``force``); else a write."""
    return "destructive" if p.force else "write"


EXPORT = Operation(
    "export", "Copy the whole vault into a folder, byte for byte: a folder vault to open.",
    ("Copy every file of the vault into a plain folder, byte for byte, so a person can "
     "open it as a folder vault. Returns the counts and anything skipped."),
    ExportParams, run_export, lazy_type("echo_core.ops.vault_transfer", "TransferResult"),
    access="write", render=render_transfer, mcp=None,
    cli=CliSurface(help="""Copy the whole vault into a folder, byte for byte: a folder vault to open.

Every file the vault holds goes in as its exact bytes (notes, attachments, the
memory's files under _agent/), with its modification time; hidden files (lock files,
.obsidian/) are left out, and so is a symbolic link in a folder vault (listed, as
import does). DIR must be new or empty: the copy is made in a hidden folder beside it
and renamed into place at the end, so an export cut short leaves nothing half done: a
file that cannot be written (a full disk) stops it and DIR is not created. With
--force the files are added to a folder that has some: a file with the same path and
other content is replaced and listed, an identical one is left alone, no other file is
touched; a failed write stops it, saying how many files were written (the vault marker
goes last), and the same export again finishes it.
From a PostgreSQL vault this is how a person reads the shared memory:
  ECHO_VAULT=postgresql://... echo-memory export --to ~/memory-copy"""),
)

IMPORT = Operation(
    "import", "Copy every file of a folder into the vault, byte for byte (any backend).",
    ("Copy every file of a plain folder into the current vault, byte for byte, and index "
     "the notes. Returns the counts, what was replaced and anything skipped."),
    ImportParams, run_import, lazy_type("echo_core.ops.vault_transfer", "TransferResult"),
    access=import_access, render=render_transfer, mcp=None, needs_vault=False,
    cli=CliSurface(help="""Copy every file of a folder into the vault, byte for byte (any backend).

The folder is read as a folder vault lists itself: hidden files and folders
(.obsidian/, .git/, drafts like .x.md) are left out and named, a hidden folder once
(they are not vault files: the import still succeeds); symbolic links are left out and
listed as skipped, and so is a note (.md) over 10,000,000 bytes (every text source's
cap). The vault is created when new (a PostgreSQL schema, a folder), so moving a
folder vault to PostgreSQL is one command:
  ECHO_VAULT=postgresql://... echo-memory import --from ~/notes
A folder of notes that is not an echo-memory vault (no _agent/echo-vault.md) imported into
a new vault needs `echo-memory init` afterwards, which keeps every file (the import says so).
A file already in the vault with the same bytes is left alone. One with other content
stops the import before anything is written, naming it; --force replaces such files
(each replaced text is kept in `echo-memory history`). A file where the vault has a
folder of that name, or the reverse, also stops it before any write (rename one). A
vault's own marker and
_agent/index/ files are never replaced: the vault keeps its own (listed). Files are
written in batches under the vault lock, keeping their modification times in a folder
vault (PostgreSQL records the import's time), the marker last: a vault imported
part-way is not a vault yet, and `doctor` and `load` say the import did not finish.
A run cut short (killed, a full disk) is finished by running the same import again;
it says how many files it wrote. The notes written are then indexed for recall and the entity index.

A folder holding .echo-history/ (an unzipped `echo-memory backup`) brings the note
history with it: its versions are added to the vault's history (the state dir's; the
database's for PostgreSQL), so `history` and `restore` work in the restored vault. A
version the vault's history holds already is not added again (importing twice adds
nothing), the vault's own versions are never replaced or dropped, a note keeps at most
20 (the newest fill the free places), and a note the import left out brings none. An
entry that is not a sound version (bad JSON, a path outside the vault, a symbolic link,
an oversized or damaged file) is skipped and listed; nothing is written outside the
history. The report counts the versions imported, already there and skipped."""),
)
