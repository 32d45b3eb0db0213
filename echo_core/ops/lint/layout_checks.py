"""Where notes are and what they are called: retired paths, paths outside every route,
names Obsidian cannot open or sync (SPEC §1.1, §1.2, §1.4).

A vault may be a person's Obsidian vault with folders of their own: a note outside the
layout that declares no kind (no ``type``, or one naming no kind) is theirs, counted by
``own_notes`` and never a finding; only a note declaring a kind is told to move."""

from __future__ import annotations

import re
from collections.abc import Iterator

from echo_core.models import Note
from echo_core.ops.lint.model import Finding
from echo_core.ops.lint.snapshot import VaultSnapshot
from echo_core.routing import RoutingManifest

#: Folders of SPEC §1.1 that hold the memory's own notes (besides the kind folders).
SYSTEM_FOLDERS = ("_agent/context", "_agent/heartbeat", "_agent/sessions", "_agent/index",
                  "_agent/archive", "journal/daily", "inbox/captures",
                  "inbox/processing-log", "templates")
#: Single files of the layout that sit outside those folders.
SYSTEM_FILES = ("_agent/echo-vault.md", "README.md")
_UNSAFE_RE = re.compile(r'[:*?"<>|\x00-\x1f\x7f]')


def retired_root(path: str, snap: VaultSnapshot) -> str | None:
    """The retired path (manifest ``retired_paths``) ``path`` lies under, if any."""
    for retired in snap.manifest.retired_paths:
        if path == retired or path.startswith(retired.rstrip("/") + "/"):
            return retired
    return None


def check_retired(snap: VaultSnapshot) -> Iterator[Finding]:
    """A note under a path that used to be a route."""
    heads = _retired_heads(snap)
    for path in snap.notes:
        retired = retired_root(path, snap) if path.startswith(heads) else None
        if retired is not None:
            kind = declared_kind(snap.notes[path], snap.manifest)
            where = (kind_home(kind, snap.manifest) if kind is not None else
                     "the folder of its kind (see the routing manifest)")
            yield Finding("retired-path", path, f"{retired}/ is a retired route",
                          f"move the note to {where} and update links to it")


def declared_kind(note: Note, manifest: RoutingManifest) -> str | None:
    """The kind the note's frontmatter ``type`` names (as ``note_kind`` reads it), or
    None: no ``type``, or one naming no kind of the manifest (a person's own, e.g.
    ``type: book``)."""
    declared = note.frontmatter.get("type")
    if isinstance(declared, str) and declared.strip() in manifest.kinds:
        return declared.strip()
    return None


def kind_home(kind: str, manifest: RoutingManifest) -> str:
    """Where notes of ``kind`` live, in words: its folder from the routing manifest
    (``areas/<domain>/`` with the domains listed for an area)."""
    folder = manifest.kinds[kind].folder
    if "{domain}" not in folder:
        return f"{folder}/ (the folder of kind {kind})"
    domains = ", ".join(manifest.area_domains)
    return (f"{folder.replace('{domain}', '<domain>')}/ (the folder of kind {kind}; "
            f"<domain> is one of {domains})")


def _allowed_folders(snap: VaultSnapshot) -> tuple[str, ...]:
    return (*snap.folders, *SYSTEM_FOLDERS)


def _retired_heads(snap: VaultSnapshot) -> tuple[str, ...]:
    return tuple(r.rstrip("/") for r in snap.manifest.retired_paths)


def routed(path: str, folders: tuple[str, ...]) -> bool:
    """Whether the note at ``path`` sits where the layout puts notes: under a kind or
    system folder, a layout file, or the README of a folder on the way to one."""
    if path in SYSTEM_FILES or any(path.startswith(f + "/") for f in folders):
        return True
    folder, _, name = path.rpartition("/")
    return name.casefold() == "readme.md" and any(f.startswith(folder + "/") for f in folders)


def _unrouted(snap: VaultSnapshot) -> Iterator[str]:
    """Every note outside every kind folder and the system layout, retired paths left
    out (``retired-path`` reports those)."""
    folders = _allowed_folders(snap)
    retired = _retired_heads(snap)
    by_folder: dict[str, bool] = {}
    for path in snap.notes:
        folder = path.rpartition("/")[0]
        ok = by_folder.get(folder)
        if ok is None:  # every note of a folder is routed, or none is (but READMEs)
            ok = by_folder[folder] = routed(folder + "/note.md", folders)
        if ok or (path.startswith(retired) and retired_root(path, snap) is not None):
            continue
        if not routed(path, folders):
            yield path


def check_routes(snap: VaultSnapshot) -> Iterator[Finding]:
    """A note whose ``type`` names a kind, outside every kind folder and the system
    layout; the fix names that kind's folder. A note there declaring no kind is the
    person's own (``own_notes``), never a finding; a retired path is reported by
    ``retired-path`` instead, never by both."""
    for path in _unrouted(snap):
        kind = declared_kind(snap.notes[path], snap.manifest)
        if kind is not None:
            yield Finding("outside-route", path, f"declares type: {kind} but is outside "
                          "every kind's folder and the system layout",
                          f"move it to {kind_home(kind, snap.manifest)} and update links "
                          "to it, or remove type: if it is a note of your own")


def own_notes(snap: VaultSnapshot) -> tuple[str, ...]:
    """The notes outside every kind folder, the system layout and the retired paths
    that declare no kind: the person's own notes (their folders, the vault's top),
    which echo-memory leaves where they are."""
    return tuple(path for path in _unrouted(snap)
                 if declared_kind(snap.notes[path], snap.manifest) is None)


def unsafe_part(path: str) -> str | None:
    """The first part of ``path`` Obsidian or a synced platform cannot hold (a
    character of ``: * ? " < > |``, a control character, a trailing space or dot)."""
    for part in path.split("/"):
        if _UNSAFE_RE.search(part) or part.endswith((" ", ".")):
            return part
    return None


def check_unsafe_names(snap: VaultSnapshot) -> Iterator[Finding]:
    """Any file (note or attachment) whose name other platforms cannot hold."""
    for path in snap.files:
        part = unsafe_part(path)
        if part is not None:
            yield Finding("unsafe-name", path, f"the name {part!r} holds a character "
                          'Windows, Android or iOS sync refuses (: * ? " < > |, a '
                          "control character, or a trailing space or dot)",
                          "rename it without those characters, then update links to it")
