"""Where notes are and what they are called: retired paths, paths outside every route,
names Obsidian cannot open or sync (SPEC §1.1, §1.2, §1.4)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from echo_core.ops.lint.model import Finding
from echo_core.ops.lint.snapshot import VaultSnapshot

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
            yield Finding("retired-path", path, f"{retired}/ is a retired route",
                          "move the note to the folder of its kind (see the routing "
                          "manifest) and update links to it")


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


def check_routes(snap: VaultSnapshot) -> Iterator[Finding]:
    """A note outside every kind folder and the system layout (a retired path is
    reported by ``retired-path`` instead, never by both)."""
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
            yield Finding("outside-route", path, "not in any kind's folder nor the "
                          "system layout", "move it to the folder of its kind (e.g. "
                          "resources/concepts/), or into inbox/ for triage")


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
