"""The readable report of a full sweep: every change, grouped by kind."""

from __future__ import annotations

from typing import Any

from echo_core.models import Envelope
from echo_core.ops.links import link_target
from echo_core.ops.sweep.decay_model import DecayReport
from echo_core.ops.sweep.model import SweepResult


def _entity_lines(result: SweepResult) -> list[str]:
    lines = [f"  + {e.slug}  {e.kind}  {e.path}  {e.title}" for e in result.entities_added]
    lines += [f"  ~ {e.slug}  {e.path}  ({', '.join(e.fields)})" for e in result.entities_updated]
    lines += [f"  - {e.slug}  {e.path}  ({e.reason})" for e in result.entities_dropped]
    return lines


def _sections(result: SweepResult) -> list[tuple[str, list[str]]]:
    marker = result.marker
    return [
        ("marker", [f"  {marker.action}: {marker.reason}"] if marker else []),
        ("entity index files set aside",
         [f"  {s.path} -> {s.to}  ({s.reason})" for s in result.set_aside]),
        ("entities", _entity_lines(result)),
        ("frontmatter added", [f"  {f.path}: " + ", ".join(
            f"{k}: {v}" for k, v in zip(f.keys, f.values, strict=False)) for f in result.frontmatter]),
        ("links added under ## Related",
         [f"  {link.path} + [[{link_target(link.target)}]]" for link in result.links]),
        ("aliases learned", [f"  {a.slug}: + {a.alias!r}  ({a.reason})" for a in result.aliases]),
        ("left alone", [f"  {s.path}: {s.reason}" for s in result.skipped]),
    ]


def _decay_sections(decay: DecayReport) -> list[tuple[str, list[str]]]:
    return [
        ("decay: working notes archived (status archived, body under ## Archived)",
         [f"  {w.path}  (expired {w.expires})" for w in decay.working]),
        ("decay: Observations moved to their archive",
         [f"  {o.count} -> {o.archive}  (oldest: {o.first})" for o in decay.observations]),
        ("decay: projects moved to the folder of their status",
         [f"  {m.path} -> {m.to}  (status {m.status}: {m.reason})" for m in decay.moves]),
        ("decay: path-style links rewritten",
         [f"  {r.path}: {r.old} -> {r.new} ({r.count})" for r in decay.links]),
        ("decay: projects proposed for on-hold (confirm with --projects SLUG,... or all)",
         [f"  {p.slug}  {p.path}  ({p.reason})" for p in decay.proposed]),
        ("decay: left alone", [f"  {s.path}: {s.reason}" for s in decay.skipped]),
    ]


def render_sweep(env: Envelope[Any]) -> str:
    """Heading per kind of change (only those with entries), then the summary line."""
    result: SweepResult = env.data
    if not hasattr(result, "entities_added"):  # the fast sweep's own result
        return env.message
    lines = ["Applied:" if result.applied else "Dry run (nothing written):"]
    sections = _sections(result)
    if result.decay is not None:
        sections += _decay_sections(result.decay)
        if not any(entries for _title, entries in _decay_sections(result.decay)):
            lines.append("decay: nothing to archive, move or propose")
    for title, entries in sections:
        if entries:
            lines += [f"{title} ({len(entries)}):", *entries]
    if result.index_problem:
        lines.append(f"entity index: {result.index_problem}")
    recall = "rebuilt" if result.applied else "would be rebuilt"
    lines.append(f"recall index {recall}: {result.recall_indexed} notes")
    lines.append(env.message)
    return "\n".join(lines)
