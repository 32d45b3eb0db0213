"""What a fault-injection run left on disk (``crash_kit.Sandbox``): torn notes, how often
each unique body marker landed, titles with more than one entity note, index/notes
mismatches, temp files and held locks left behind, records still pending in the outbox.

Bodies carry a unique marker word (``crash_kit.marker``); ``audit`` counts markers across
every ``.md`` file of the vault, so "landed once / doubled / missing" needs no knowledge
of where a capture should have gone.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from bench.crash_kit import MARKER, Sandbox
from echo_core.entities import EntityStore
from echo_core.frontmatter import parse_frontmatter
from echo_core.routing import load_manifest
from plugins.queue_outbox.outbox import OutboxQueue

#: Notes ``init`` writes into kind folders that are not captured entities.
INIT_NOTES = frozenset({"_agent/memory/semantic/operator-preferences.md"})


@attrs.frozen
class VaultAudit:
    """What a vault and its state dir hold after a fault-injection run."""

    markers: Counter[str]  # marker -> copies found across every .md of the vault
    torn: tuple[str, ...]  # notes whose frontmatter does not parse or that lack a title
    notes_by_title: dict[str, tuple[str, ...]]  # entity notes per "# Title"
    index_problems: tuple[str, ...]
    leftovers: tuple[str, ...]  # temp files and held locks (vault and state dir)
    hidden_files: tuple[str, ...]  # every dot-file there, leftover or by design
    pending: tuple[str, ...]  # outbox records not done: "id state detail"

    def copies(self, marks: Iterable[str]) -> Counter[int]:
        """How many of ``marks`` landed 0, 1, 2, ... times."""
        return Counter(self.markers.get(m, 0) for m in marks)

    def missing(self, marks: Iterable[str]) -> list[str]:
        return [m for m in marks if self.markers.get(m, 0) == 0]

    def doubled(self) -> list[str]:
        """Every marker (queued, acknowledged or not) found more than once."""
        return sorted(m for m, n in self.markers.items() if n > 1)

    def duplicate_notes(self) -> dict[str, tuple[str, ...]]:
        """Titles with more than one entity note."""
        return {t: p for t, p in self.notes_by_title.items() if len(p) > 1}

    def extra_notes(self) -> int:
        return sum(len(p) - 1 for p in self.duplicate_notes().values())


def entity_note_paths(vault: Path) -> list[str]:
    """Vault paths of every note in a kind folder, except READMEs and ``init``'s own."""
    found = []
    for folder in load_manifest().kind_folders():
        for path in sorted((vault / folder).glob("*.md")):
            rel = path.relative_to(vault).as_posix()
            if path.name != "README.md" and rel not in INIT_NOTES:
                found.append(rel)
    return found


def _title_of(body: str) -> str | None:
    match = re.search(r"^# (.+?)\s*$", body, re.MULTILINE)
    return match.group(1) if match else None


def _read_notes(vault: Path) -> tuple[Counter[str], list[str], dict[str, str | None]]:
    """Marker counts over every note, torn notes, and each entity note's title."""
    entity_paths = set(entity_note_paths(vault))
    markers: Counter[str] = Counter()
    torn: list[str] = []
    titles: dict[str, str | None] = {}
    for path in sorted(vault.rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        markers.update(MARKER.findall(text))
        _, body, error = parse_frontmatter(text)
        if rel in entity_paths:
            titles[rel] = _title_of(body)
            if titles[rel] is None:
                error = error or "no '# Title' line"
        if error is not None:
            torn.append(f"{rel}: {error}")
    return markers, torn, titles


def _index_problems(sandbox: Sandbox, notes: Iterable[str]) -> list[str]:
    try:
        index = EntityStore(sandbox.ctx().storage).load()
    except Exception as error:  # noqa: BLE001 - a corrupt snapshot is a finding
        return [f"entity index does not load: {type(error).__name__}: {error}"]
    problems = []
    entries: dict[str, list[str]] = defaultdict(list)
    for slug, entity in index.entities.items():
        if entity.path not in INIT_NOTES:
            entries[entity.path].append(slug)
    for path, slugs in sorted(entries.items()):
        if not (sandbox.vault / path).is_file():
            problems.append(f"index entry {slugs[0]} -> {path}: no such note")
        if len(slugs) > 1:
            problems.append(f"{path}: {len(slugs)} index entries ({', '.join(slugs)})")
    problems += [f"{path}: note not in the entity index" for path in notes if path not in entries]
    return problems


def _files(sandbox: Sandbox) -> list[Path]:
    """Every file under the vault and the state dir."""
    tops = [t for t in (sandbox.vault, sandbox.state_base) if t.is_dir()]
    return sorted(p for top in tops for p in top.rglob("*") if p.is_file())


def _leftovers(sandbox: Sandbox, files: Iterable[Path]) -> list[str]:
    """Temp files among ``files``, and a vault lock still held (nobody is running)."""
    found = [p.relative_to(sandbox.root).as_posix() for p in files
             if p.name.endswith(".tmp") or ".tmp." in p.name]
    if (sandbox.vault / "_agent/.lock").exists():
        found.append("vault/_agent/.lock (held by nobody)")
    return found


def _pending(sandbox: Sandbox) -> list[str]:
    return [f"{r['id']} {r['state']} {r['detail']}".strip()
            for r in OutboxQueue(str(sandbox.state_dir())).pending()]


def audit(sandbox: Sandbox) -> VaultAudit:
    """Read what ``sandbox`` holds now (no process may be writing)."""
    markers, torn, titles = _read_notes(sandbox.vault)
    files = _files(sandbox)
    by_title: dict[str, list[str]] = defaultdict(list)
    for path, title in titles.items():
        by_title[title or f"(untitled {path})"].append(path)
    return VaultAudit(
        markers=markers, torn=tuple(torn),
        notes_by_title={t: tuple(p) for t, p in sorted(by_title.items())},
        index_problems=tuple(_index_problems(sandbox, titles)),
        leftovers=tuple(_leftovers(sandbox, files)),
        hidden_files=tuple(p.relative_to(sandbox.root).as_posix() for p in files
                           if p.name.startswith(".")),
        pending=tuple(_pending(sandbox)))


def merge_audits(audits: Mapping[str, VaultAudit]) -> VaultAudit:
    """One audit of several vaults (keyed by name): marker counts summed, every other
    finding prefixed with its vault's name."""
    def each(field: str) -> tuple[str, ...]:
        return tuple(f"{name}: {item}" for name, a in audits.items() for item in getattr(a, field))

    markers: Counter[str] = Counter()
    for found in audits.values():
        markers.update(found.markers)
    return VaultAudit(
        markers=markers, torn=each("torn"),
        notes_by_title={f"{name}: {t}": p for name, a in audits.items()
                        for t, p in a.notes_by_title.items()},
        index_problems=each("index_problems"), leftovers=each("leftovers"),
        hidden_files=each("hidden_files"), pending=each("pending"))


def describe_copies(copies: Counter[int]) -> str:
    """``{0: 2, 1: 90, 2: 8}`` -> ``'90 once, 8 doubled (max 2 copies), 2 missing'``."""
    doubled = sum(n for k, n in copies.items() if k > 1)
    top = max(copies, default=0)
    extra = f" (max {top} copies)" if doubled else ""
    return f"{copies.get(1, 0)} once, {doubled} doubled{extra}, {copies.get(0, 0)} missing"
