"""The daily digest as a vault note: ``_agent/memory/episodic/habitat-digest-YYYY-MM-DD.md``.

Why there: the digest is a dated account of what happened across the fleet — episodic
memory in the layout of SPEC §1.1 (``_agent/memory/episodic``, the ``episodic`` kind of
§1.2), the agent's own area, where recall and the entity index already look and lint
expects notes; ``journal/daily`` belongs to the daily note and ``_agent/sessions`` to
session logs (``load`` reads the newest as "last session"). The name carries
``habitat-digest`` so its wikilink is unique.

``write_digest(ctx, day)`` composes the digest (``digest.compose``), after a scan of the
record's last ``SCAN_DAYS`` days up to ``day`` (so today's failures are in it), renders
it (``render_note``: frontmatter of an episodic note, one section per part, every item
one line, secrets redacted; ``## Related`` links the day's daily note and the previous
digest when they exist, and connections link their entities, so the note is in the
graph) and writes it through the vault (under the vault lock; the
old text goes to the note's history; the entity index is synced). Re-running on the
same day rewrites the same note (unchanged text: nothing written). ``dry_run``: no scan,
no write. The last digest written is remembered in ``<habitat_dir>/digest.json``
(``last_digest``) for ``habitat status``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from typing import Any

import attrs

from echo_core import Action, Envelope, redact
from plugins.habitat.digest import Digest, compose
from plugins.habitat.patterns_scan import ScanSummary

__all__ = ["DIGEST_FOLDER", "SCAN_DAYS", "DigestResult", "digest_path", "last_digest",
           "render_note", "write_digest"]

DIGEST_FOLDER = "_agent/memory/episodic"
SCAN_DAYS = 2
#: Days back a digest looks for the previous digest to link to.
LOOK_BACK = 31
ITEM_CHARS = 200
_STATE_FILE = "digest.json"


def digest_path(day: str) -> str:
    """The vault path of ``day``'s digest note."""
    return f"{DIGEST_FOLDER}/habitat-digest-{day}.md"


@attrs.frozen(kw_only=True)
class DigestResult:
    """The digest of ``date``: where its note is, whether this call wrote it
    (``changed``: its text differs from what was there), the scan made first, the
    digest's parts and the note's text."""

    date: str
    path: str
    written: bool
    changed: bool
    scan: ScanSummary | None
    digest: Digest
    text: str


def _one_line(text: str, limit: int = ITEM_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def _section(title: str, lines: list[str], empty: str) -> list[str]:
    return [f"## {title} ({len(lines)})", "", *(lines or [empty]), ""]


def render_note(d: Digest, updated: _dt.date, related: tuple[str, ...] = ()) -> str:
    """The note's whole text (see the module docstring); ``related``: the link targets of
    its ``## Related`` section."""
    learnings = [f"- `{x.id}` {x.type}, x{x.recurrence}, from {_one_line(x.agent_id, 60)}: "
                 f"{_one_line(x.content)}" for x in d.learnings]
    suggested = [f"- {s.source} `{s.id}` ({s.why}): {_one_line(s.text)}" for s in d.suggested]
    patterns = [f"- `{p.id}` {p.status}, {p.severity}, x{p.recurrence}"
                + (f", flagged x{p.flags}" if p.flags else "") + f": {_one_line(p.title)}"
                for p in d.patterns]
    batches = [f"- `{b.id}` {b.items}/{b.size}: "
               + ", ".join(f"{k} {n}" for k, n in sorted(b.kinds.items())) for b in d.batches]
    linked = [(f"- [[{c.name}]]" if c.via == "entity" else f"- tag `{_one_line(c.name, 60)}`")
              + f": {', '.join(_one_line(a, 60) for a in c.agents)} — "
              f"{len(c.record_ids)} record(s), {c.first_ts[:16]} .. {c.last_ts[:16]}"
              for c in d.connections]
    counts = ", ".join(f"{s} {n}" for s, n in d.counts.items() if n) or "none yet"
    body = [f"# Habitat digest {d.date}", "",
            ("What the habitat's record, learnings and failure patterns hold for this day. "
             "`echo-memory habitat digest` rewrites this note; edits here are overwritten "
             "(the note's history keeps them)."), "",
            *_section("Learnings to approve", learnings,
                      "Nothing waits for approval."),
            *(["Approve with `echo-memory habitat approve <id>`, or reject with a reason.", ""]
              if learnings else []),
            *_section("Suggested insights", suggested, "None today."),
            *_section("Patterns seen today", patterns, "No failure pattern seen today."),
            f"Registry: {counts}. `echo-memory habitat pattern <id>` shows the evidence.", "",
            *_section("Batches", batches, "No batch today."),
            *_section("Connections across agents", linked, "No connection today."),
            ]
    if d.problems:
        body += ["## Not read", "", *[f"- {_one_line(p)}" for p in d.problems], ""]
    if related:
        body += ["## Related", "", *[f"- [[{t}]]" for t in related], ""]
    front = ["---", "type: episodic", "status: active", f"created: {d.date}",
             f"updated: {updated.isoformat()}", "tags: [episodic, habitat, digest]", "---"]
    return "\n".join(front) + "\n" + redact("\n".join(body).rstrip() + "\n").text


def last_digest(habitat: Any) -> dict[str, str] | None:
    """``{"date", "path", "written"}`` of the latest digest written, or None."""
    try:
        with open(os.path.join(habitat, _STATE_FILE), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str)
                                             for k in ("date", "path", "written")):
        return None
    return {k: str(data[k]) for k in ("date", "path", "written")}


def _remember(habitat: Any, date: str, path: str, written: str) -> None:
    """Record the digest of ``date`` as the last one unless a later day's is."""
    previous = last_digest(habitat)
    if previous is not None and previous["date"] > date:
        return
    os.makedirs(habitat, exist_ok=True)
    target = os.path.join(habitat, _STATE_FILE)
    temp = f"{target}.{os.getpid()}.tmp"
    with open(temp, "w", encoding="utf-8") as f:
        json.dump({"date": date, "path": path, "written": written}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, target)


def _related(storage: Any, day: _dt.date) -> tuple[str, ...]:
    """The day's daily note and the latest digest of the ``LOOK_BACK`` days before, when
    they exist (so the digest is in the vault's graph, not an orphan)."""
    out = []
    if storage.exists(f"journal/daily/{day.isoformat()}.md"):
        out.append(day.isoformat())
    for back in range(1, LOOK_BACK + 1):
        earlier = (day - _dt.timedelta(days=back)).isoformat()
        if storage.exists(digest_path(earlier)):
            out.append(f"habitat-digest-{earlier}")
            break
    return tuple(out)


def write_digest(ctx: Any, day: _dt.date, *, dry_run: bool = False) -> Envelope[DigestResult]:
    """Compose, render and (unless ``dry_run``) write ``day``'s digest note."""
    from echo_core import planned_again_if_edited, sync_paths
    from plugins.habitat.paths import habitat_dir
    from plugins.habitat.patterns_scan import scan

    summary = None if dry_run else scan(ctx, days=SCAN_DAYS, end=day)
    digest = compose(ctx, day)
    path = digest_path(digest.date)
    storage = ctx.vault.storage
    def write_once() -> tuple[str, bool]:  # a person's save meanwhile: history, then again
        text = render_note(digest, ctx.today(), _related(storage, day))
        current = storage.read(path) if storage.exists(path) else None
        if current != text and not dry_run:
            ctx.vault.update_note(path, text, current)
        return text, current != text

    with storage.lock():
        text, changed = planned_again_if_edited(write_once)
    if changed and not dry_run:
        sync_paths(ctx, [path], recall=False)
    if not dry_run:
        _remember(habitat_dir(ctx), digest.date, path,
                  ctx.now().isoformat(timespec="seconds"))
    data = DigestResult(date=digest.date, path=path, written=changed and not dry_run,
                        changed=changed, scan=summary, digest=digest, text=text)
    parts = (f"{len(digest.learnings)} learning(s) to approve, {len(digest.suggested)} "
             f"suggested insight(s), {len(digest.patterns)} pattern(s), "
             f"{len(digest.connections)} connection(s)")
    if dry_run:
        return Envelope(True, Action.DRY_RUN, f"digest {digest.date} (not written): {parts}",
                        data)
    if not changed:
        return Envelope(True, Action.UNCHANGED, f"{path} already holds this digest: {parts}",
                        data)
    return Envelope(True, Action.WRITTEN, f"wrote {path}: {parts}", data)
