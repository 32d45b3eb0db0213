"""Claude Code's own memory files as reflect proposals (issue 17 item 6): echo-memory
learns what the built-in memory holds instead of competing with it. The files are only
read, never written.

Where Claude Code keeps them (its documentation, 2026; ``claude home`` is
``$CLAUDE_CONFIG_DIR``, else ``~/.claude``):

* user memory: ``<claude home>/CLAUDE.md``;
* project memory: ``<project>/CLAUDE.md``, ``<project>/.claude/CLAUDE.md`` and the
  older ``<project>/CLAUDE.local.md``;
* auto memory (what Claude Code writes itself): ``<claude home>/projects/<key>/memory/``,
  the index ``MEMORY.md`` then its topic files (``*.md``, by name), where ``<key>`` is
  the project's absolute path with every character but ASCII letters and digits
  replaced by ``-`` (as for transcripts). Claude Code keys it by the project's git root,
  so the key of the nearest folder holding ``.git`` is tried first, then the project's.

Reading (``memory_proposals``): a bullet (``-``, ``*``, ``+`` or ``1.``; a task box
dropped) with its wrapped continuation lines is one proposal of kind ``semantic``: the
title is its text without markdown emphasis (cut at a word near 120 characters;
prefixed with its heading when it is under three words), the body its text in full.
Headings above it become tags (slugs), with ``claude-memory``. Fenced code, HTML
comments, frontmatter and ``@import`` lines are skipped, and so is an index bullet that
only links a topic file (the topic file itself is read). Confidence by wording: HIGH
0.9 for an instruction ("always", "never", "must", "don't", "prefer", "instead of",
"avoid", "use X not Y"), LOW 0.4 for a tentative one ("maybe", "might", "consider",
"TODO", "idea", a question), else MEDIUM 0.7. The same title in several files is one
proposal (sources and occurrences united).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs

from echo_core.errors import EchoError
from echo_core.names import slugify
from echo_core.ops.reflect import ProposalOrigin

HIGH, MEDIUM, LOW = 0.9, 0.7, 0.4
MAX_TITLE = 120
MAX_FILE_BYTES = 1_000_000
SOURCE_TAG = "claude-memory"

_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(.*\S)\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TOPIC_LINK = re.compile(r"^\[[^\]]*\]\((?![a-z]+://)[^)]*\.md\)\s*(?:[-—–:].*)?$")
_EMPHASIS = re.compile(r"(\*\*|__|`)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_HIGH = re.compile(r"\b(always|never|must|don'?t|do not|prefer(?:s|red)?|instead of|"
                   r"rather than|avoid|only use)\b|\buse\s+\S+(?:\s+\S+)?,?\s+not\b",
                   re.IGNORECASE)
_LOW = re.compile(r"\b(maybe|might|perhaps|consider|possibly|todo|tbd|idea|someday)\b",
                  re.IGNORECASE)


@attrs.frozen
class MemoryFile:
    """One memory file found: its path and whose memory it is (user, project, auto)."""

    path: Path
    scope: str


@attrs.frozen
class MemoryBullet:
    """One bullet read from a memory file."""

    text: str
    headings: tuple[str, ...]
    line: int


def claude_home(env: Mapping[str, str]) -> Path:
    """``$CLAUDE_CONFIG_DIR``, else ``~/.claude`` (``HOME`` from ``env``)."""
    configured = env.get("CLAUDE_CONFIG_DIR", "").strip()
    if configured:
        return Path(configured).expanduser()
    home = env.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".claude"


def project_key(folder: Path) -> str:
    """The folder name Claude Code gives a project under ``<claude home>/projects``."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(folder))


def _git_root(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def auto_memory_dir(project: Path, home: Path) -> Path | None:
    """The auto-memory folder of ``project`` (its git root's first), None when absent."""
    roots = [r for r in (_git_root(project), project) if r is not None]
    for root in dict.fromkeys(roots):
        folder = home / "projects" / project_key(root) / "memory"
        if folder.is_dir():
            return folder
    return None


def find_memory_files(project: Path, home: Path) -> list[MemoryFile]:
    """Every memory file of ``project`` and the user, in the order of the module
    docstring (user, project, auto: ``MEMORY.md`` first)."""
    found = [MemoryFile(home / "CLAUDE.md", "user")]
    found += [MemoryFile(project / name, "project")
              for name in ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")]
    auto = auto_memory_dir(project, home)
    if auto is not None:
        topics = sorted(p for p in auto.glob("*.md") if p.name != "MEMORY.md")
        found += [MemoryFile(p, "auto") for p in (auto / "MEMORY.md", *topics)]
    return [f for f in found if f.path.is_file()]


def read_bullets(text: str) -> Iterator[MemoryBullet]:
    """The bullets of a memory file's ``text`` with the headings above each (module
    docstring: what is skipped)."""
    headings: list[tuple[int, str]] = []
    lines = text.splitlines()
    fenced = comment = False
    start = 0
    if lines and lines[0].strip() == "---":  # frontmatter
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() == "---"), 0)
    current: tuple[int, int, list[str]] | None = None  # (line, indent, parts)

    def flush() -> Iterator[MemoryBullet]:
        if current is not None:
            yield MemoryBullet(" ".join(current[2]), tuple(h for _, h in headings), current[0])

    for number in range(start, len(lines)):
        line = lines[number]
        if comment:
            comment = "-->" not in line
            continue
        if "<!--" in line:  # the line is skipped; a comment left open skips until -->
            comment = "-->" not in line.split("<!--", 1)[1]
            continue
        if _FENCE.match(line):
            fenced = not fenced
            yield from flush()
            current = None
            continue
        if fenced:
            continue
        heading = _HEADING.match(line)
        bullet = _BULLET.match(line)
        if heading or bullet or not line.strip() or line.lstrip().startswith("@"):
            yield from flush()
            current = None
        if heading:
            level = len(heading.group(1))
            headings = [h for h in headings if h[0] < level] + [(level, heading.group(2))]
        elif bullet:
            current = (number + 1, len(bullet.group(1)), [bullet.group(2)])
        elif current is not None and line.strip() and \
                len(line) - len(line.lstrip()) > current[1]:
            current[2].append(line.strip())
    yield from flush()


def _plain(text: str) -> str:
    return " ".join(_EMPHASIS.sub("", _LINK.sub(r"\1", text)).split())


def _title(bullet: MemoryBullet) -> str:
    title = _plain(bullet.text)
    if len(title.split()) < 3 and bullet.headings:
        title = f"{_plain(bullet.headings[-1])}: {title}"
    if len(title) > MAX_TITLE:
        title = title[:MAX_TITLE].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return title


def confidence_of(text: str) -> float:
    """HIGH for an instruction, LOW for a tentative line, else MEDIUM (module docstring)."""
    if _LOW.search(text) or text.rstrip().endswith("?"):
        return LOW
    return HIGH if _HIGH.search(text) else MEDIUM


def _tags(headings: tuple[str, ...]) -> list[str]:
    tags = [SOURCE_TAG]
    for heading in headings:
        try:
            tag = slugify(_plain(heading), max_len=40)
        except EchoError:
            continue
        if tag not in tags:
            tags.append(tag)
    return tags


def _shown(path: Path, home: str) -> str:
    text = str(path)
    return "~" + text[len(home):] if home and text.startswith(home + os.sep) else text


def memory_proposals(files: list[MemoryFile], home: str = "",
                     ) -> tuple[list[object], list[ProposalOrigin | None]]:
    """The proposals (and their origins) of ``files``' bullets; a path under ``home`` is
    shown with ``~``. A file that cannot be read as UTF-8 text is skipped."""
    merged: dict[str, tuple[dict[str, object], ProposalOrigin]] = {}
    for memory in files:
        try:
            with memory.path.open("rb") as handle:
                text = handle.read(MAX_FILE_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue
        shown = _shown(memory.path, home)
        for bullet in read_bullets(text):
            if _TOPIC_LINK.match(bullet.text.strip()):
                continue
            title = _title(bullet)
            if not re.search(r"\w", title):
                continue
            key = " ".join(re.sub(r"\W+", " ", title.casefold()).split())
            where = f"{shown}:{bullet.line}"
            if key in merged:
                proposal, origin = merged[key]
                sources = proposal["sources"]
                assert isinstance(sources, list)
                if shown not in sources:
                    sources.append(shown)
                merged[key] = (proposal, attrs.evolve(
                    origin, occurrences=origin.occurrences + 1,
                    turns=(*origin.turns, where)))
                continue
            under = " > ".join(bullet.headings)
            proposal = {"title": title, "kind": "semantic", "body": bullet.text,
                        "confidence": confidence_of(bullet.text),
                        "tags": _tags(bullet.headings), "sources": [shown]}
            origin = ProposalOrigin(
                rationale=f"{memory.scope} memory {where}" + (f" under {under}" if under else ""),
                category=SOURCE_TAG, excerpts=(bullet.text[:240],), turns=(where,))
            merged[key] = (proposal, origin)
    return [p for p, _ in merged.values()], [o for _, o in merged.values()]
