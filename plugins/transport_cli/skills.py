"""transport_cli's part of the ``claude-code`` build target: one skill per CLI verb.

Writes ``skills/<name>/SKILL.md`` for load, save (capture), recall, reflect (session-end),
triage, health, sweep and doctor. Frontmatter: ``name``, ``description`` (written for the
model: what and when), ``argument-hint`` where the skill takes arguments, ``allowed-tools``
(``Bash(echo-memory:*)``: only this CLI), and ``disable-model-invocation: true`` for the
maintenance skills the user must start (triage, sweep). Bodies teach when and how, with
command lines that exist; verbs not installed yet (health, sweep) say so and point to what
does exist. Values are written as JSON strings, which YAML reads unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs

ALLOWED_TOOLS = "Bash(echo-memory:*)"


@attrs.frozen
class Skill:
    """One SKILL.md: frontmatter fields and the markdown body."""

    name: str
    description: str
    body: str
    argument_hint: str | None = None
    model_invocable: bool = True

    def render(self) -> str:
        """The SKILL.md text (LF, ends with a newline)."""
        fields: list[tuple[str, Any]] = [("name", self.name), ("description", self.description)]
        if self.argument_hint:
            fields.append(("argument-hint", self.argument_hint))
        fields.append(("allowed-tools", ALLOWED_TOOLS))
        if not self.model_invocable:
            fields.append(("disable-model-invocation", True))
        head = "\n".join(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields)
        return f"---\n{head}\n---\n\n{self.body.strip()}\n"


LOAD = Skill("load", (
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

SAVE = Skill("save", (
    "Save something worth remembering to echo-memory (a person, company, project update, "
    "decision, concept, or an operator preference). Use when the user says remember/note "
    "this, when a decision is made, or when you learn a durable fact a future session "
    "will need."), """
# Save to memory

Save: $ARGUMENTS

One note per thing: the title names it, `--kind` routes it, `--body` says what to keep.
An existing note with the same name (or alias) gets a dated bullet instead of a copy.

```bash
echo-memory capture "Ada Lovelace" --kind person --body "Maintains the billing service; prefers short PRs."
echo-memory capture "Vantage Systems" --kind company --body "Renewal due in April at 40k/year."
echo-memory capture "Move to Postgres 16" --kind decision --date 2026-03-01 --body "Chosen for ...; rejected ..."
echo-memory capture "Run tests with pytest -n 2" --kind semantic --body "The operator wants the parallel run."
echo-memory capture "look into flaky deploy test"          # no --kind: goes to the inbox
```

Kinds: person, company, concept, reference, project, area (needs `--domain business|
personal|learning|systems`), meeting, decision, semantic (facts and preferences), episodic
(what happened), working (short-lived, expires), skill. Add `--tags a,b`,
`--aliases "VSYS,Vantage"`, `--sources URL`; `--dry-run` previews without writing.

If capture stops at the duplicate gate (exit 76), it lists near-identical notes: re-run
with `--merge-into SLUG` to update that one, or `--force` if it really is new.
`echo-memory resolve "Vantage"` shows which note a name already points to. Keep bodies
factual and short; never store secrets.
""", argument_hint="[what to remember]")

RECALL = Skill("recall", (
    "Search echo-memory for notes about a person, project, decision, preference or past "
    "session. Use before answering questions about earlier work or people, before redoing "
    "something that may have been decided already, and when the user asks what we know "
    "about X."), """
# Recall from memory

```bash
echo-memory recall $ARGUMENTS --budget-chars 1500
```

Results are ranked notes with an excerpt each, plus notes they link to. Read a whole note
with `echo-memory get PATH` (add `--json` for frontmatter). Useful options: `--limit 3`,
`--no-linked`, `--json`. Words are stemmed and entity aliases expand the query, so plain
words work; try the person's or project's name, or two or three key words.

The UserPromptSubmit hook already adds a few clearly relevant notes to each prompt; recall
explicitly when you need more, or something older. If nothing matches, say memory has
nothing on it rather than guessing.
""", argument_hint="<query>")

REFLECT = Skill("reflect", (
    "Close a session in echo-memory: write the session log (goal, decisions, open threads, "
    "next step), an agent-log line, an optional new scope and reflection proposals (facts, "
    "decisions, preferences learned). Use at the end of substantive work, or when the Stop "
    "hook asks you to save what was learned."), """
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

Reflection proposals go through capture (the duplicate gate applies); `confidence` below
0.6 sends a proposal to the inbox instead. Propose only what a future session needs:
explicit preferences ("always/never/I prefer"), corrections, decisions with their reason,
fixes for errors that cost time. Leave out `scope` unless the focus really changed.
""")

TRIAGE = Skill("triage", (
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
`"force": true`. The inbox lines stay in place; each routed item is logged, so re-applying
never routes it twice.
""", model_invocable=False)

HEALTH = Skill("health", (
    "Check whether echo-memory is healthy and its notes are consistent. Use when memory "
    "seems wrong, stale or incomplete, or when the user asks about memory health."), """
# Memory health

This version of echo-memory has no `health` (lint) verb yet; the vault checks it will run
(broken links, orphans, stale scope, expired working notes, index drift) are not installed.
What you can check today:

```bash
echo-memory doctor            # config, vault, marker, schema, plugins: ok / warn / fail with fixes
echo-memory scope show        # how many sessions since the scope was last set
echo-memory triage list       # how much is waiting in the inbox
```

If recall misses notes you know exist (e.g. after editing notes outside echo-memory), the
index can be rebuilt with `echo-memory reindex`. Report what you found; do not edit notes
to "fix" them without the user's go-ahead.
""")

SWEEP = Skill("sweep", (
    "Maintenance sweep of the echo-memory vault: rebuild indexes and repair metadata. "
    "Run only when the user asks for memory maintenance."), """
# Sweep

This version of echo-memory has no `sweep` verb yet (frontmatter backfill, reciprocal
links and alias learning are not installed). The maintenance that exists:

```bash
echo-memory reindex     # rebuild the recall index from every note (safe, read-only on notes)
echo-memory doctor      # readiness report with fixes
```

Run `reindex` when recall misses notes that exist, e.g. after bulk edits in Obsidian.
""", model_invocable=False)

DOCTOR = Skill("doctor", (
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

SKILLS: tuple[Skill, ...] = (LOAD, SAVE, RECALL, REFLECT, TRIAGE, HEALTH, SWEEP, DOCTOR)


class CliSkillsPart:
    """``BuildTarget`` registered as ``claude-code:transport_cli``: writes every skill of
    ``SKILLS`` to ``skills/<name>/SKILL.md`` and returns those relative paths. Ignores
    ``context``; deterministic."""

    def contribute(self, out_dir: str, context: Any) -> list[str]:
        written = []
        for skill in SKILLS:
            rel = f"skills/{skill.name}/SKILL.md"
            path = Path(out_dir) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(skill.render(), encoding="utf-8", newline="\n")
            written.append(rel)
        return written
