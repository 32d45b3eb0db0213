"""``init``: make a folder an echo-memory vault (SPEC §1.1). Idempotent; never overwrites.

On an empty folder it writes the whole layout of SPEC §1.1: the memory's own files, the
kind folders with a README each, the inbox and the templates. On a folder that already
holds a person's notes (any file outside ``_agent/``, or an Obsidian ``.obsidian/``
settings folder) it writes only what the memory needs, all under ``_agent/`` (the marker,
the context, the heartbeat, the operator preferences, the entity index): every later
write creates its note's folder when it is missing, so nothing else is needed, and the
person's vault gets no README, template or empty folder it did not ask for.
``scaffold=True`` adds the full layout there too.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.entities import content_hash
from echo_core.errors import EchoError, UnavailableError
from echo_core.models import Entity, Envelope
from echo_core.protocols import BackendUnavailable, Storage, VaultMissing
from echo_core.templates import render_template, template_names
from echo_core.vault import ENTITY_INDEX_PATH, INBOX_PATH, MARKER_PATH
from echo_core.vault_seen import mark_seen, shown_vault, was_seen

if TYPE_CHECKING:
    from echo_core.context import EchoContext

#: Folder -> what its README says belongs there.
FOLDER_PURPOSE: dict[str, str] = {
    "_agent/memory/semantic": "Durable facts and patterns the agent has learned.",
    "_agent/memory/episodic": "Things that happened, kept as episodes.",
    "_agent/memory/working": "Short-lived working memory; notes carry `expires`.",
    "_agent/sessions": "Session logs, one per session: YYYY-MM-DD-HHMM-<slug>.md.",
    "_agent/archive": "Superseded versions kept by evolve. Never deleted.",
    "inbox/processing-log": "Audit lines written by triage, one file per day.",
    "journal/daily": "Daily notes with an `## Agent Log`.",
    "projects/active": "Active projects.",
    "projects/on-hold": "Projects on hold.",
    "projects/archived": "Archived projects.",
    "resources/people": "People.",
    "resources/companies": "Companies and organisations.",
    "resources/concepts": "Concepts and ideas.",
    "resources/references": "References: articles, docs, links.",
    "resources/skills": "Skills and how-tos.",
    "meetings": "Meetings: YYYY-MM-DD-<slug>.md.",
    "decisions": "Decisions: YYYY-MM-DD-<slug>.md.",
}


@attrs.frozen
class InitResult:
    """What ``init`` did: the vault (its setting as ``shown_vault`` shows it, no
    password), files created and files that already existed (left as they were), and
    whether the full layout was written."""

    vault: str
    created: tuple[str, ...]
    existing: tuple[str, ...]
    #: True when the full layout was written (an empty folder, or ``scaffold``); False
    #: when only the memory's own files were (a vault that already held notes).
    scaffold: bool = True


def marker_text(schema: int, created: str) -> str:
    """The vault marker (``MARKER_PATH``): its schema and the day the vault was made
    (``init`` writes it; ``sweep`` rewrites a missing or damaged one)."""
    return (f"---\ntype: marker\nschema_version: {schema}\ncreated: {created}\n---\n"
            "# echo-memory vault\n\nThis folder is an echo-memory vault: plain markdown "
            "notes an agent and a person share.\nDo not delete this file; it marks the "
            "vault and records its schema.\n")


def memory_files(ctx: EchoContext) -> dict[str, str]:
    """The files the memory needs, path -> initial content (dates from the clock); all
    under ``_agent/``."""
    today = ctx.today().isoformat()
    now = ctx.now().isoformat(timespec="seconds")
    schema = ctx.manifest.schema_version
    return {
        MARKER_PATH: marker_text(schema, today),
        "_agent/context/current-context.md": (
            f"---\ntype: context\nscope_updated: {today}\n---\n# Current Context\n\n"
            "## Scope\n\n(no scope set yet)\n\n## Scope History\n"
        ),
        "_agent/heartbeat/last-session.md": f"(no session yet) @ {now}\n",
        "_agent/memory/semantic/operator-preferences.md": (
            f"---\ntype: semantic\nstatus: active\ncreated: {today}\nupdated: {today}\n"
            "tags: [semantic, preferences]\n---\n# Operator Preferences\n\n"
            "## Fact / Pattern\n\n## Observations\n"
        ),
        ENTITY_INDEX_PATH: json.dumps({"schema_version": 1, "entities": {}}, indent=2) + "\n",
    }


def scaffold_files(ctx: EchoContext) -> dict[str, str]:
    """The rest of the layout, for a new vault: the inbox, a README per folder, the
    templates (none of it needed: the first write to a folder creates it)."""
    files: dict[str, str] = {
        INBOX_PATH: "# Inbox\n\nQuick captures, one `- YYYY-MM-DD: text` line each.\n\n",
    }
    for domain in ctx.manifest.area_domains:
        files[f"areas/{domain}/README.md"] = f"# {domain.title()}\n\nAreas of {domain}.\n"
    for folder, purpose in FOLDER_PURPOSE.items():
        files[f"{folder}/README.md"] = f"# {folder.rsplit('/', 1)[-1]}\n\n{purpose}\n"
    for name in template_names():
        files[f"templates/{name}.md"] = render_template(name)
    return files


def layout_files(ctx: EchoContext) -> dict[str, str]:
    """Every file ``init`` writes into an empty folder: ``memory_files`` + ``scaffold_files``."""
    return {**memory_files(ctx), **scaffold_files(ctx)}


#: Files Obsidian keeps in a vault's settings folder; one of them marks an Obsidian vault.
OBSIDIAN_SETTINGS = (".obsidian/app.json", ".obsidian/workspace.json",
                     ".obsidian/core-plugins.json", ".obsidian/appearance.json")


def holds_notes_already(storage: Storage) -> bool:
    """Whether the vault is a person's existing one: a file outside ``_agent/`` (hidden
    ones are not listed), or Obsidian's settings folder."""
    if any(not path.startswith("_agent/") for path in storage.list("")):
        return True
    for path in OBSIDIAN_SETTINGS:
        try:
            if storage.exists(path):
                return True
        except BackendUnavailable:
            raise
        except EchoError:
            continue
    return False


#: Notes ``init`` creates that are entities (captures resolve to them): slug -> (path, kind, title).
SEED_ENTITIES = {
    "operator-preferences": (
        "_agent/memory/semantic/operator-preferences.md", "semantic", "Operator Preferences"),
}


def _index_seed_entities(ctx: EchoContext) -> None:
    """Put the seed notes in the entity index when they exist and are not indexed yet."""
    index = ctx.entities.load()
    missing = []
    for slug, (path, kind, title) in SEED_ENTITIES.items():
        if index.get(slug) is None and ctx.vault.storage.exists(path):
            text = ctx.vault.storage.read(path)
            missing.append(Entity(slug=slug, path=path, kind=kind, title=title,
                                  h=content_hash(text)))
    if missing:
        ctx.entities.apply(puts=missing)


def init_vault(ctx: EchoContext, *, new: bool = False,
               scaffold: bool = False) -> Envelope[InitResult]:
    """Make the vault (module docstring). Existing files are never touched; a second run
    changes no byte. ``scaffold``: the full layout even in a vault that holds notes.

    Errors: 69 when the vault is absent but this machine used a vault there before (a
    drive not mounted would otherwise get a new empty vault at its mount point); ``new``
    creates it anyway."""
    created: list[str] = []
    existing: list[str] = []
    vault = ctx.vault
    if not new and was_seen(ctx):
        try:
            vault.storage.ping()
        except VaultMissing as missing:
            raise UnavailableError(
                f"vault {shown_vault(ctx.config.vault.value)} is missing ({missing}), and "
                "this machine used a vault there before: mount the drive or restore the "
                "folder rather than starting over. To create a new empty vault there anyway: "
                "`echo-memory init --new`") from None
    vault.storage.create()
    with vault.storage.lock():
        full = scaffold or not holds_notes_already(vault.storage)
        files = layout_files(ctx) if full else memory_files(ctx)
        for path, text in files.items():
            (created if vault.create_if_absent(path, text) else existing).append(path)
        _index_seed_entities(ctx)
    mark_seen(ctx)
    result = InitResult(shown_vault(ctx.config.vault.value), tuple(created), tuple(existing),
                        full)
    if created:
        message = f"initialised vault at {result.vault}: {len(created)} files created"
        if not full:
            message += (" under _agent/ (the folder already holds notes, so no folders, "
                        "READMEs or templates were added: each folder is made when first "
                        "written; `echo-memory init --scaffold` adds the full layout)")
    else:
        message = f"vault at {result.vault} already initialised; nothing changed"
    return Envelope(True, Action.CREATED if created else Action.UNCHANGED, message, result)
