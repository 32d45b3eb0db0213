"""The help of the CLI groups the built-in verbs nest under (``scope ...``,
``triage ...``): plain strings, so the index in ``echo_core.verbs`` can give them without
importing a verb module."""

SCOPE_HELP = """Show or set what the agent is working on now (the scope).

The scope sits in _agent/context/current-context.md; each change keeps the old one,
dated, under Scope History."""

TRIAGE_HELP = """Process the inbox: list its items, then route them into notes.

\b
Workflow:
  echo-memory triage list --json            see the items (exact lines, ages)
  echo-memory triage apply proposals.json   preview what would happen
  echo-memory triage apply proposals.json --apply

Originals always stay in inbox/captures/inbox.md: a routed line is struck in place,
"- ~~2026-02-20: met Ada~~ → resources/people/ada-lovelace.md (processed 2026-03-01)",
and no longer waits (triage list and the session brief count only waiting lines). It
also gets an audit line in inbox/processing-log/<today>.md, so re-applying never
routes it twice. To review the whole inbox at once, see `echo-memory inbox review`."""

INBOX_HELP = """Review the inbox as a whole (item by item routing is `echo-memory triage`).

\b
Workflow:
  echo-memory inbox review              preview a step for every waiting item
  echo-memory inbox review --decisions d.json --apply

Nothing is deleted: routed lines are struck as processed, old ones as expired."""

GROUP_HELP: dict[str, str] = {"scope": SCOPE_HELP, "triage": TRIAGE_HELP,
                              "inbox": INBOX_HELP}
