"""Helpers for the capture tests: in-process vaults in tmp_path, disk snapshots, the index.

Not a test module (no ``test_`` prefix); imported by ``test_capture*.py`` and
``test_gate_duplicate.py``, and by the worker processes of the concurrency test.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from echo_core.context import EchoContext, create_context
from echo_core.entities import EntityIndex, EntityStore
from echo_core.frontmatter import parse_frontmatter
from echo_core.models import CaptureRequest, Entity, Envelope
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.routing import load_manifest

TODAY = "2026-03-01"

#: Notes ``init`` writes into kind folders that are not captured entities.
INIT_NOTES = frozenset({"_agent/memory/semantic/operator-preferences.md"})


def isolated_env(home: Path, **overrides: str) -> dict[str, str]:
    """An environment with no user config and pinned time (no ``os.environ`` leaks)."""
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "ECHO_TODAY": TODAY,
        "ECHO_STRICT_PLUGINS": "1",
        # hermetic: only the built-in distribution's plugins, whatever else is installed
        "ECHO_PLUGIN_DISTS": os.environ.get("ECHO_PLUGIN_DISTS", "echo-memory"),
    }
    env.update(overrides)
    return env


class VaultBox:
    """One vault under ``root`` plus the environment to open it with."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.vault = root / "vault"
        self.state = root / "state"
        self.home = root / "home"
        self.vault.mkdir(parents=True, exist_ok=True)

    def env(self, **overrides: str) -> dict[str, str]:
        return isolated_env(self.home, **overrides)

    def ctx(self, **env: str) -> EchoContext:
        """A fresh context (as a new process would build it); ``env`` overrides e.g.
        ``ECHO_TODAY``."""
        return create_context(vault=str(self.vault), state_dir=str(self.state), env=self.env(**env))

    def init(self) -> VaultBox:
        envelope = init_vault(self.ctx())
        assert envelope.ok, envelope
        return self

    def capture(self, title: str, *, today: str = TODAY, env: Mapping[str, str] | None = None,
                **fields: Any) -> Envelope:
        """Capture with a fresh context pinned to ``today``."""
        ctx = self.ctx(ECHO_TODAY=today, **dict(env or {}))
        return capture(ctx, CaptureRequest(title=title, **fields))

    def read(self, path: str) -> str:
        return (self.vault / path).read_text(encoding="utf-8")

    def frontmatter(self, path: str) -> dict[str, Any]:
        fm, _, error = parse_frontmatter(self.read(path))
        assert error is None, f"{path}: {error}"
        return dict(fm)

    def index(self) -> EntityIndex:
        """The entity index as a fresh store reads it from disk."""
        return EntityStore(self.ctx().storage).load()

    def captured(self) -> dict[str, Entity]:
        """Index entries of captured notes (slug -> entity), leaving out ``init``'s own
        notes whether or not ``init`` indexes them."""
        return {s: e for s, e in self.index().entities.items() if e.path not in INIT_NOTES}

    def entity(self, slug: str) -> Entity:
        """The index entry for ``slug`` (asserting it exists)."""
        entity = self.index().get(slug)
        assert entity is not None, f"no index entry {slug!r}"
        return entity

    def entity_notes(self) -> set[str]:
        """Vault paths of every note in a kind folder, except READMEs and ``init``'s own."""
        found: set[str] = set()
        for folder in load_manifest().kind_folders():
            base = self.vault / folder
            if not base.is_dir():
                continue
            for path in base.glob("*.md"):
                rel = path.relative_to(self.vault).as_posix()
                if path.name != "README.md" and rel not in INIT_NOTES:
                    found.add(rel)
        return found

    def tree_digest(self) -> str:
        """Hash of every file's path, bytes and mtime, and of every folder's path."""
        digest = hashlib.sha256()
        for path in sorted(self.vault.rglob("*")):
            digest.update(path.relative_to(self.vault).as_posix().encode() + b"\0")
            if path.is_file():
                digest.update(path.read_bytes())
                digest.update(str(path.stat().st_mtime_ns).encode())
        return digest.hexdigest()

    def files(self) -> set[str]:
        return {p.relative_to(self.vault).as_posix() for p in self.vault.rglob("*") if p.is_file()}

    def leftovers(self) -> list[str]:
        """Temp files and a held lock left behind by writers."""
        bad = [p for p in self.files() if p.endswith(".tmp")]
        if (self.vault / "_agent/.lock").exists():
            bad.append("_agent/.lock")
        return sorted(bad)


def section(text: str, heading: str) -> str:
    """The lines under ``## heading`` up to the next ``## `` heading."""
    match = re.search(rf"^## {re.escape(heading)}[ \t]*\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match is not None, f"no '## {heading}' in:\n{text}"
    return match.group(1)


def related_targets(text: str) -> list[str]:
    """The ``[[target]]`` bullets of a note's ``## Related`` section."""
    return re.findall(r"^- \[\[([^\]|#]+)", section(text, "Related"), re.MULTILINE)
