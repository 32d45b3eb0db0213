"""Every lint check, in report order: name, what it finds, whether ``--fix`` repairs
it, and the function that runs it (one per check, each in a module of its theme)."""

from __future__ import annotations

from echo_core.errors import usage_error
from echo_core.ops.lint import (
    content_checks,
    contradictions,
    duplicates,
    frontmatter_checks,
    index_drift,
    layout_checks,
    link_checks,
)
from echo_core.ops.lint.model import CheckInfo

CHECKS: tuple[CheckInfo, ...] = (
    CheckInfo("retired-path", "a note under a retired route (routing manifest "
              "retired_paths); checked before routes", False, layout_checks.check_retired),
    CheckInfo("outside-route", "a note whose type: names a kind, outside every kind "
              "folder and the system layout (_agent/, journal/daily, inbox/, templates/, "
              "README.md); notes declaring no kind are your own: counted, not findings",
              False, layout_checks.check_routes),
    CheckInfo("unsafe-name", 'a file name with : * ? " < > |, a control character or '
              "a trailing space or dot (Obsidian sync refuses it)", False,
              layout_checks.check_unsafe_names),
    CheckInfo("broken-wikilink", "a [[link]] (or embed) resolving to no note, file or "
              "entity name, or by a note's old file name only (renamed by hand); links in "
              "code do not count", False,
              link_checks.check_broken_links),
    CheckInfo("orphan-note", "an entity note no other note links to and that links to "
              "none", False, link_checks.check_orphans),
    CheckInfo("dangling-superseded-by", "superseded_by naming no note", False,
              link_checks.check_superseded_by),
    CheckInfo("incomplete-frontmatter", "an entity note lacking a key of its kind (type, "
              "status, created, updated, tags; expires for working), whose block "
              "cannot be read or repeats a key, or a working note whose expires is not "
              "a date or status not one word (decay never archives it)", True,
              frontmatter_checks.check_incomplete_frontmatter),
    CheckInfo("expired-working-note", "a working note past its expires, not archived "
              "yet (status active, blank, or expired from an older lint --fix); the "
              "repair archives it as sweep --decay does", True,
              frontmatter_checks.check_expired_working),
    CheckInfo("index-drift", "an index entry with no note, an entity note with no "
              "entry, or an entry disagreeing with its note", True,
              index_drift.check_index_drift),
    CheckInfo("stale-scope", f"{content_checks.STALE_AFTER_SESSIONS}+ sessions logged "
              "since the scope was set", False, content_checks.check_stale_scope),
    CheckInfo("observations-overflow", f"a semantic note with more than "
              f"{content_checks.MAX_OBSERVATIONS} Observations", False,
              content_checks.check_observations),
    CheckInfo("duplicate-entities", "two same-kind entities the duplicate gate would "
              "not have let both in", False, duplicates.check_duplicates, apart=True),
    CheckInfo("contradiction", "Fact / Pattern or preference lines with opposite "
              "claims on one subject (always/never, use/avoid, prefer X/Y)", False,
              contradictions.check_contradictions),
)

CHECK_NAMES: tuple[str, ...] = tuple(c.name for c in CHECKS)


def selected(names: tuple[str, ...]) -> tuple[CheckInfo, ...]:
    """The checks named (all when none); an unknown name is a usage error listing them."""
    if not names:
        return CHECKS
    unknown = [n for n in names if n not in CHECK_NAMES]
    if unknown:
        raise usage_error(f"unknown check {unknown[0]!r}; use one of: "
                          f"{', '.join(CHECK_NAMES)}")
    return tuple(c for c in CHECKS if c.name in names)
