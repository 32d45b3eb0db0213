"""Where a wikilink points, the way Obsidian resolves it, plus entity names.

A target (the part of ``[[target|label]]`` / ``[[target#heading]]`` before ``|`` or
``#``) resolves to:

* a vault path: ``folder/note`` or ``folder/note.md``, or the end of one
  (``people/ada`` for ``resources/people/ada.md``), or a file with its extension
  (``assets/chart.png``, for an embed ``![[...]]``);
* a file name: a note's name without ``.md`` (``ada``) or any file's full name
  (``chart.png``);
* an entity name: the slug, title or an alias of an entity (up to case and
  punctuation, as ``resolve`` matches).

All comparisons ignore case, as Obsidian's do. Matching by entity name is computed only
when a link misses every path and file name (the names of every entity cost a pass).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

from echo_core.names import name_key


class LinkResolver:
    """Resolves link targets against the vault's files and its entities' names."""

    def __init__(self, files: Iterable[str],
                 entity_names: Callable[[], dict[str, set[str]]]) -> None:
        self._paths: dict[str, str] = {}
        self._names: dict[str, list[str]] = {}
        for path in files:
            folded = path.casefold()
            self._paths[folded] = path
            name = folded.rsplit("/", 1)[-1]
            self._names.setdefault(name, []).append(path)
            if name.endswith(".md"):
                self._names.setdefault(name[:-3], []).append(path)
        self._entity_names = entity_names
        self._seen: dict[str, tuple[str, ...]] = {}

    @functools.cached_property
    def _by_entity_name(self) -> dict[str, set[str]]:
        return self._entity_names()

    def resolve(self, target: str) -> tuple[str, ...]:
        """The paths ``target`` may point to (several when names repeat); empty when it
        points at nothing. Answers are remembered (links repeat)."""
        found = self._seen.get(target)
        if found is None:
            found = self._seen[target] = self._resolve(target)
        return found

    def by_name_only(self, target: str) -> bool:
        """Whether ``target`` resolves only through an entity's name (its title, an alias,
        or its slug when that is not its file's name): Obsidian, which resolves by path
        and file name, opens no note for it."""
        return bool(self.resolve(target)) and not self._by_file(target)

    def _by_file(self, target: str) -> tuple[str, ...]:
        """The paths ``target`` names as a path or a file name, as Obsidian resolves it."""
        folded = target.strip().casefold().lstrip("/")
        if not folded:
            return ()
        if "/" in folded:
            for candidate in (folded, folded + ".md"):
                exact = self._paths.get(candidate)
                if exact is not None:
                    return (exact,)
            name = folded.rsplit("/", 1)[-1]
            return tuple(p for p in self._names.get(name, ())
                         if p.casefold().endswith("/" + folded)
                         or p.casefold().endswith("/" + folded + ".md"))
        return tuple(self._names.get(folded, ()))

    def _resolve(self, target: str) -> tuple[str, ...]:
        found = self._by_file(target)
        if found:
            return found
        key = name_key(target)
        return tuple(sorted(self._by_entity_name.get(key, ()))) if key else ()
