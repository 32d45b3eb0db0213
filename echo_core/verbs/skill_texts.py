"""The texts of the built-in Claude Code skills (``SkillSpec``), kept apart from the
declarations they belong to so each verb module stays short. The built skill adds the
command's usage, derived from the declaration."""

from __future__ import annotations

from echo_core.operations import SkillSpec

LOAD_SKILL = SkillSpec("load", (
    "Load the echo-memory brief: current scope, operator preferences, the last session's "
    "open threads and next step, today's agent log and the inbox count. Use at the start of "
    "work when no echo-memory brief is in context, after switching projects, or when asked "
    "what we were doing."), """
# Load memory

The SessionStart hook injects this brief automatically on startup, `/clear` and after
compaction. Run it yourself when it is missing from your context or you need it fresh:

```bash
echo-memory load --brief        # the budgeted digest (about 8000 characters at most)
echo-memory load                # everything load reads, in full
echo-memory scope show          # just the current focus and when it was set
```

Then act on it: follow the operator's Fact / Pattern preferences, pick up the last
session's Open Threads and Suggested Next Step, and mention a non-empty inbox if the user
may want to triage it. When the focus changes for good, record it:

```bash
echo-memory scope set "Ship the recall index; then the MCP server"
```
""")

REFLECT_SKILL = SkillSpec("reflect", (
    "Save what a session learned in echo-memory: reflection proposals (preferences, "
    "corrections, fixes, decisions) checked against memory and captured, proposals mined "
    "from a Claude Code transcript, and the session log (goal, decisions, open threads, next "
    "step). Use at the end of substantive work, or when the Stop hook asks you to save what "
    "was learned."), """
# Reflect and end the session

1. Write a bundle file, e.g. `/tmp/echo-session.json` (only `slug` and `log_body` are
   required; `slug` is kebab-case):

```json
{
  "slug": "fix-recall-index-crash",
  "log_body": "## Goal\\nFix the crash on empty notes.\\n\\n## Decisions Made\\n- Skip empty bodies at index time.\\n\\n## Open Threads\\n- Backfill the skipped notes.\\n\\n## Suggested Next Step\\nRun `echo-memory reindex` and re-check recall.",
  "agent_log_line": "- 2026-03-01: fixed the recall index crash on empty notes",
  "scope": "Stabilise the recall index",
  "reflect": [
    {"title": "Run tests with pytest -n 2", "kind": "semantic",
     "body": "The operator prefers the parallel test run.", "confidence": 0.9}
  ]
}
```

2. Preview, then apply:

```bash
echo-memory session-end /tmp/echo-session.json           # dry run: shows every step
echo-memory session-end /tmp/echo-session.json --apply   # writes log, agent log, notes, heartbeat
```

`-` instead of the file name reads the bundle from stdin (e.g. a heredoc).

## Reflect without ending the session

The same proposals on their own (a JSON list) go through `echo-memory reflect`, which
classifies each against memory first (create, update, inbox, gated,
supersede-suggested, unchanged) and writes only with `--apply`:

```json
[{"title": "Use pytest, not unittest", "kind": "semantic",
  "body": "The operator prefers pytest.", "confidence": 0.9}]
```

```bash
echo-memory reflect /tmp/proposals.json            # preview
echo-memory reflect /tmp/proposals.json --apply    # capture them
echo-memory reflect --transcript "$TRANSCRIPT"     # mine this session's transcript
echo-memory reflect claude-memory                  # import CLAUDE.md / MEMORY.md bullets
```

Show the user the preview before applying. Reflection proposals go through capture (the
duplicate gate applies); `confidence` below 0.6 sends a proposal to the inbox instead. A
`supersede-suggested` proposal contradicts something memory holds: add the
`"supersedes"` value it shows to replace that, or drop the proposal. Propose only what a
future session needs: explicit preferences ("always/never/I prefer"), corrections,
decisions with their reason, fixes for errors that cost time. Leave out `scope` unless
the focus really changed.
""")

TRIAGE_SKILL = SkillSpec("triage", (
    "Process the echo-memory inbox: list the quick captures and route each into a proper "
    "note (person, project, decision, ...) or leave it there. Run when the user asks to "
    "triage or clean up the inbox."), """
# Triage the inbox

```bash
echo-memory triage list --json
```

Write a proposals file with one entry per item, copying `line` exactly from the list:

```json
[{"line": "- 2026-02-20: met Ada at the engine demo", "title": "Ada Lovelace",
  "kind": "person", "body": "Met her at the engine demo."},
 {"line": "- 2026-02-21: Vantage renewal", "title": "Vantage Systems", "kind": "company",
  "merge_into": "vantage-systems"},
 {"line": "- 2026-02-22: call the bank", "action": "stay"}]
```

```bash
echo-memory triage apply /tmp/proposals.json           # preview: create / update / gated / ...
echo-memory triage apply /tmp/proposals.json --apply   # route them
```

Show the user the preview before applying. A `gated` item needs `"merge_into": SLUG` or
`"force": true`. Routed lines stay in the inbox, struck as processed (they no longer wait);
each is logged, so re-applying never routes it twice. To go through the whole inbox at
once (merge items that name an entity, expire old ones), preview `echo-memory inbox review`.
""", model_invocable=False)

HEALTH_SKILL = SkillSpec("health", (
    "Check whether echo-memory is healthy and its notes are consistent: broken links, "
    "orphans, notes outside the layout, incomplete frontmatter, index drift, stale scope, "
    "expired working notes, duplicates, contradictions. Use when memory seems wrong, stale "
    "or incomplete, or when the user asks about memory health."), """
# Memory health

First readiness (config, vault, marker, index, outbox), then the notes themselves:

```bash
echo-memory doctor            # each check ok / WARN / FAIL, with the fix
echo-memory lint              # findings grouped by check: path, what is wrong, the fix
echo-memory lint --json       # the same for machines, plus a quality score per note
echo-memory lint --check broken-wikilink --check orphan-note   # only some checks
```

`lint` exits 1 while findings remain, 0 on a clean vault. Over MCP, `echo_health` with
`deep: true` runs both and returns the lint findings.

Some findings are mechanical (incomplete frontmatter, an expired working note still
active, the entity index disagreeing with the notes); lint repairs those itself:

```bash
echo-memory lint --fix            # dry run: lists each repair, writes nothing
echo-memory lint --fix --apply    # makes them (one frontmatter line each; history kept)
```

Show the user the dry run before applying. The other findings need judgement: a broken
link to correct, an orphan to link (`echo-memory link A B`) or drop, a duplicate pair to
merge, a contradiction to resolve, a stale scope to renew (`echo-memory scope set`).
Propose those changes; do not make them without the user's go-ahead.
""")

SWEEP_SKILL = SkillSpec("sweep", (
    "Maintenance sweep of the echo-memory vault: rebuild the entity and recall indexes "
    "from the notes, add missing frontmatter and reciprocal links, repair a damaged index "
    "or marker. Run only when the user asks for memory maintenance or repair."), """
# Sweep

A full sweep makes everything derived from the notes agree with them: notes written or
deleted by hand become (or stop being) entities, required frontmatter is added one line
per key, `## Related` links are made reciprocal, a damaged `entities.json` is set aside
and rebuilt, a missing marker is rewritten. It is a dry run unless `--apply` is given.

1. Preview and read the report (grouped by kind of change):

```bash
echo-memory sweep
echo-memory sweep --json      # the same, for reading field by field
```

2. Show the user what would change (frontmatter added to their notes, links added,
   entities dropped because their note is gone). Notes listed under "left alone" have
   frontmatter the sweep will not rewrite: point the user at them.

3. With the user's go-ahead, apply, then check:

```bash
echo-memory sweep --apply
echo-memory sweep             # a second run reports nothing to change
```

Every note the sweep rewrites keeps its earlier text (`echo-memory history PATH`).
`echo-memory sweep --fast` is the cheap, index-only check for changed notes; it writes
no note and needs no `--apply`.
""", model_invocable=False)

DOCTOR_SKILL = SkillSpec("doctor", (
    "Diagnose the echo-memory setup: which config and vault are used, whether the vault is "
    "reachable and initialised, and plugin problems. Use when an echo-memory command fails, "
    "the memory hooks seem silent, or memory looks empty."), """
# Doctor

```bash
echo-memory doctor            # each check ok / WARN / FAIL, with the fix
echo-memory doctor --json
echo-memory plugins           # installed plugins, their hooks, and load errors
```

The vault is `--vault`, else `$ECHO_VAULT`, else `vault` in
`~/.config/echo-memory/config.toml`, else the embedded default; `echo-memory init` creates
the layout. The Claude Code hooks run `echo-memory` from PATH (or `$ECHO_MEMORY_BIN`) and
stay silent on any error. To see why a hook is silent, run it by hand:

```bash
echo '{"session_id": "t", "hook_event_name": "UserPromptSubmit", "prompt": "deploy checklist"}' \\
  | ECHO_HOOK_DEBUG=1 echo-memory hook UserPromptSubmit
```

Exit codes: 2 usage, 44 not found, 75 vault lock held (retry), 76 duplicate gate,
78 not configured (run `echo-memory init` or set the vault).
""")
