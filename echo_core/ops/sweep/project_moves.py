"""Projects in the folder of their status, and stale ones proposed for on-hold (SPEC §2.7).

A project note lives in ``projects/<status>/`` for status ``active``, ``on-hold`` or
``archived``. Two things move one:

* its own ``status`` names another of those folders (set by hand, or by ``fm``): it is
  moved there, the text unchanged;
* it sits in ``projects/active`` with status ``active`` and was not updated for
  ``STALE_PROJECT_DAYS`` (its ``updated``, else ``created``, else the file's date): it is
  *proposed* for on-hold and moved, with ``status: on-hold`` set (one line), only when
  confirmed by slug (``--projects a,b``) or as a whole (``--projects all``).

A move writes the note at its new path first, then rewrites path-style links to it in
other notes (``[[projects/active/x]]``, ``[[projects/active/x.md|...]]``,
``](projects/active/x.md)``; links by name, ``[[x]]``, resolve wherever the note is and
are left alone), then deletes the old path (its text kept in the note history; a save a
person made there since the plan is carried to the new path first, so it moves too). Killed
half-way, the next run finds the note at both paths: the new one holding the text the
move writes, so it only finishes the move. A note already at the destination with other
text is left alone and reported. The entity index and the recall index follow from the
sweep that runs right after (a move is the old path gone and the new one added).
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Sequence

import attrs

from echo_core.errors import EchoError, usage_error
from echo_core.frontmatter import parse_frontmatter, set_frontmatter_key
from echo_core.frontmatter_dates import as_date
from echo_core.ops.links import link_target
from echo_core.ops.sweep.decay_model import DecaySkipped, LinkRewrite, ProjectMove

PROJECTS = "projects"
STATUS_FOLDERS = {"active": "projects/active", "on-hold": "projects/on-hold",
                  "archived": "projects/archived"}
STALE_PROJECT_DAYS = 30
ON_HOLD = "on-hold"
ALL = "all"


@attrs.frozen
class MoveWrite:
    """One move: the report entry, the source's text, the destination's text now (None:
    absent) and the text the destination gets."""

    move: ProjectMove
    prior: str
    existing: str | None
    text: str


@attrs.frozen
class ProjectPlan:
    """Moves to make, stale projects only proposed, and notes left alone."""

    moves: tuple[MoveWrite, ...] = ()
    proposed: tuple[ProjectMove, ...] = ()
    skipped: tuple[DecaySkipped, ...] = ()


def _folder_of(path: str) -> str:
    return path.rsplit("/", 1)[0]


def _stale_since(fm: dict[str, object], mtime: float | None) -> _dt.date | None:
    for key in ("updated", "created"):
        found = as_date(fm.get(key))
        if found is not None:
            return found
    return _dt.date.fromtimestamp(mtime) if mtime is not None else None


def project_paths(paths: Sequence[str]) -> list[str]:
    """The project notes among ``paths``: ``projects/<status folder>/<name>.md``."""
    folders = set(STATUS_FOLDERS.values())
    return sorted(p for p in paths if p.endswith(".md") and _folder_of(p) in folders
                  and not p.endswith("/README.md"))


def plan_projects(texts: dict[str, str], mtime: Callable[[str], float | None],
                  today: _dt.date, confirm: Sequence[str]) -> ProjectPlan:
    """The moves for the project notes ``texts`` (path -> text), see the module
    docstring. ``confirm``: slugs of stale projects to put on hold (``all``: every one).
    Errors: 2 naming ``projects`` for a confirmed slug that is no project (nothing is
    written); a slug already on hold is fine (a second run with the same flags)."""
    moves: list[MoveWrite] = []
    proposed: list[ProjectMove] = []
    skipped: list[DecaySkipped] = []
    slugs = {link_target(p): p for p in texts}
    wanted = {s.strip() for s in confirm if s.strip()}
    unknown = sorted(s for s in wanted - {ALL} if s not in slugs)
    if unknown:
        raise usage_error(f"projects: no project note named {', '.join(unknown)}; give slugs "
                          "the dry run lists under 'projects proposed for on-hold', or all")
    for path, text in sorted(texts.items()):
        fm, _body, error = parse_frontmatter(text)
        if error is not None:
            continue
        slug = link_target(path)
        status = str(fm.get("status") or "").strip().casefold()
        folder = _folder_of(path)
        target = STATUS_FOLDERS.get(status)
        if target is not None and target != folder:
            moves.append(_move(texts, path, slug, f"{target}/{slug}.md", status,
                               f"status is {status}", text, ""))
            continue
        if folder != STATUS_FOLDERS["active"] or status not in ("active", ""):
            continue
        since = _stale_since(fm, mtime(path))
        if since is None or (today - since).days < STALE_PROJECT_DAYS:
            continue
        reason = f"not updated for {(today - since).days} days (since {since.isoformat()})"
        to = f"{STATUS_FOLDERS[ON_HOLD]}/{slug}.md"
        if ALL not in wanted and slug not in wanted:
            proposed.append(ProjectMove(slug, path, to, ON_HOLD, reason, since.isoformat()))
            continue
        try:
            new = set_frontmatter_key(text, "status", ON_HOLD)
        except EchoError as exc:
            skipped.append(DecaySkipped(path, f"frontmatter cannot be edited line-wise "
                                              f"({exc.message})"))
            continue
        moves.append(_move(texts, path, slug, to, ON_HOLD, reason, new, since.isoformat()))
    return ProjectPlan(tuple(moves), tuple(proposed), tuple(skipped))


def _move(texts: dict[str, str], path: str, slug: str, to: str, status: str, reason: str,
          new: str, since: str) -> MoveWrite:
    return MoveWrite(ProjectMove(slug, path, to, status, reason, since), texts[path],
                     texts.get(to), new)


def link_pattern(path: str) -> re.Pattern[str]:
    """Path-style links to the note at ``path``: ``[[path]]``, ``[[path.md]]`` (with
    ``#``, ``^``, ``|`` parts after) and markdown ``](path.md)``."""
    stem = re.escape(path.removesuffix(".md"))
    return re.compile(rf"(?<=\[\[){stem}(?=(?:\.md)?[\]#|^])|(?<=\]\(){stem}(?=\.md\))")


def rewrite_links(text: str, moves: Sequence[ProjectMove]) -> tuple[str, list[tuple[str, str, int]]]:
    """``text`` with path-style links to each moved note pointing at its new path, and
    ``(old, new, count)`` per move that changed something."""
    changed: list[tuple[str, str, int]] = []
    for move in moves:
        if move.path.removesuffix(".md") not in text:
            continue
        text, count = link_pattern(move.path).subn(move.to.removesuffix(".md"), text)
        if count:
            changed.append((move.path, move.to, count))
    return text, changed


def plan_links(texts: dict[str, str], moves: Sequence[ProjectMove]) -> dict[str, tuple[str, list[LinkRewrite]]]:
    """path -> (new text, rewrites) for every note of ``texts`` whose links change."""
    out: dict[str, tuple[str, list[LinkRewrite]]] = {}
    for path, text in texts.items():
        new, changed = rewrite_links(text, moves)
        if changed:
            out[path] = (new, [LinkRewrite(path, old, to, n) for old, to, n in changed])
    return out


def finishes_move(write: MoveWrite) -> bool:
    """Whether the destination already holds the text the move writes (an interrupted
    move: only the old path is left to delete)."""
    return write.existing == write.text


def blocked(write: MoveWrite) -> DecaySkipped | None:
    """Why the move cannot be made (a different note at the destination), else None."""
    if write.existing is not None and not finishes_move(write):
        return DecaySkipped(write.move.path, f"{write.move.to} already exists with other "
                                             "text; move or merge it by hand")
    return None
