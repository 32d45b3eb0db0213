"""Notes the brief always shows: frontmatter ``always_load: true`` (issue 16, item 4).

The note's frontmatter is the truth; finding such notes must not cost the session start
a read of the whole vault, so ``<state_dir>/always-load.json`` remembers which notes
carried the key when last looked at (``{"notes": {path: first seen}}``). It is rebuilt
from every note by ``sweep --apply`` and by ``heat`` (which reads every note's
frontmatter), and updated by ``heat --apply``. A key set by hand (or by ``fm``) is
picked up by the next of those; the brief re-reads each remembered note and shows it
only while its frontmatter still says ``always_load: true``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from echo_core.errors import EchoError
from echo_core.frontmatter import parse_frontmatter, split_frontmatter
from echo_core.names import slugify
from echo_core.ops.links import link_target
from echo_core.tempfiles import temp_name

if TYPE_CHECKING:
    from echo_core.context import EchoContext

KEY = "always_load"
REGISTRY_FILE = "always-load.json"
BATCH = 512


def is_always_load(frontmatter: Mapping[str, Any]) -> bool:
    """Whether the frontmatter asks for the note in every brief (``true``/``yes``)."""
    value = frontmatter.get(KEY)
    if isinstance(value, str):
        return value.strip().casefold() in ("true", "yes")
    return value is True


def text_is_always_load(text: str) -> bool:
    """``is_always_load`` of a note's text (cheap for a note without the key)."""
    return KEY in text and is_always_load(parse_frontmatter(text)[0])


def load_registry(state_dir: Path) -> dict[str, str]:
    """path -> the date it was first seen with the key ({} when never built)."""
    try:
        data = json.loads((state_dir / REGISTRY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    notes = data.get("notes") if isinstance(data, dict) else None
    if not isinstance(notes, dict):
        return {}
    return {str(p): str(d) for p, d in notes.items()}


def save_registry(state_dir: Path, paths: Iterable[str], today: _dt.date) -> dict[str, str]:
    """Remember ``paths`` as the always-load notes (a path already remembered keeps its
    first-seen date; a new one gets ``today``). Returns the registry; never raises."""
    old = load_registry(state_dir)
    notes = {p: old.get(p, today.isoformat()) for p in sorted(set(paths))}
    if notes == old:
        return notes
    target = state_dir / REGISTRY_FILE
    tmp = target.with_name(temp_name(REGISTRY_FILE))
    try:
        tmp.write_text(json.dumps({"notes": notes}, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        pass
    return notes


def track_changes(state_dir: Path, changes: Mapping[str, str | None], today: _dt.date) -> None:
    """Keep the registry current with notes that changed (path -> new text, None for
    gone): a note now carrying the key is added, one that lost it or is gone removed. Every
    write and every change the freshness check finds comes here, so a key set by hand is
    in the next brief after the check that sees the edit. Cheap when nothing is marked and
    no registry exists (no file is read); never raises."""
    try:
        marked = {p for p, t in changes.items() if t is not None and text_is_always_load(t)}
        if not marked and not (state_dir / REGISTRY_FILE).exists():
            return
        old = load_registry(state_dir)
        kept = (set(old) - set(changes)) | marked
        if kept != set(old):
            save_registry(state_dir, kept, today)
    except Exception:  # noqa: BLE001 - the registry is a convenience, never a failure
        return


def always_load_item(path: str, text: str, max_chars: int, marker: str) -> str:
    """The note as the brief shows it (``pinned_body``): led by ``### [[link]]``, or
    ``### Title ([[link]])`` when its title says more than its file name, cut at
    ``max_chars`` (then ``marker`` and where to read it)."""
    title, shown = pinned_body(text)
    if len(shown) > max_chars:
        shown = shown[:max_chars - 1].rstrip() + f"…\n{marker} read {path}"
    link = f"[[{link_target(path)}]]"
    head = f"### {title} ({link})" if title and not _restates(title, path) else f"### {link}"
    return f"{head}\n{shown}" if shown else head


def pinned_body(text: str) -> tuple[str, str]:
    """``(title, text)`` of a pinned note for the brief: the text without frontmatter,
    without its ``# Title`` line (the first line, returned as the title: the item's lead
    shows it) and without ``## Related`` and what follows; its headings demoted below the
    brief's ``###`` item lead (``#``/``##`` to ``####``, ``###`` to ``#####``, deeper to
    ``######``) and those with nothing under them (the capture template's ``## Notes``)
    left out. Lines in code fences are left as written."""
    body = split_frontmatter(text)[1]
    related = re.search(r"^## Related[ \t]*$", body, re.MULTILINE)
    lines = (body[:related.start()] if related else body).strip().splitlines()
    title = ""
    if lines and (first := _HEADING.match(lines[0])) and len(first.group(1)) == 1:
        title = _CLOSING.sub("", " ".join(lines.pop(0)[first.end():].split()))
    levels = _heading_levels(lines)
    content = [False] * 8  # per level: something kept under the heading below it
    kept: list[str] = []
    for line, level in zip(reversed(lines), reversed(levels), strict=True):
        if level:
            if not content[level]:
                continue  # an empty section: left out
            line = "#" * min(6, max(4, level + 2)) + line.lstrip(" ")[level:]
            content[level:] = [False] * (8 - level)
        elif line.strip():
            content = [True] * 8
        kept.append(line)
    return title, "\n".join(reversed(kept)).strip()


_HEADING = re.compile(r"^ {0,3}(#{1,6})(?=[ \t]|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CLOSING = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")  # a heading's optional closing hashes


def _heading_levels(lines: list[str]) -> list[int]:
    """Each line's heading level (0: not a heading, or inside a code fence)."""
    levels: list[int] = []
    fence = ""
    for line in lines:
        opener = _FENCE.match(line)
        if fence:
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence) \
                    and not line.strip().strip(fence[0]):
                fence = ""
            levels.append(0)
        elif opener:
            fence = opener.group(1)
            levels.append(0)
        else:
            match = _HEADING.match(line)
            levels.append(len(match.group(1)) if match else 0)
    return levels


def _restates(title: str, path: str) -> bool:
    """Whether ``title`` only restates the note's file name (``Release checklist`` of
    ``release-checklist.md``; a title that is the path or file name itself)."""
    target = link_target(path)
    if title.endswith(".md") and link_target(title) == target:
        return True
    try:
        return slugify(title) == slugify(target)
    except EchoError:  # no letter or digit in it
        return False


def read_always_load(ctx: EchoContext, storage: Any) -> tuple[tuple[str, str], ...]:
    """``(path, text)`` of the remembered always-load notes that still say so, read from
    ``storage`` (the brief's source), in path order. Never raises: an unreadable note is
    left out."""
    try:
        paths = sorted(load_registry(ctx.state_dir))
    except Exception:  # noqa: BLE001 - the brief never fails for this block
        return ()
    reads: list[tuple[str, str]] = []
    for path in paths:
        try:
            text = storage.read(path)
        except Exception:  # noqa: BLE001, S112 - gone or unreadable: not shown
            continue
        if isinstance(text, str) and text_is_always_load(text):
            reads.append((path, text))
    return tuple(reads)
