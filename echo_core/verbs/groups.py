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

Originals always stay in inbox/captures/inbox.md; each routed item gets an audit
line in inbox/processing-log/<today>.md, so re-applying never routes it twice."""

GROUP_HELP: dict[str, str] = {"scope": SCOPE_HELP, "triage": TRIAGE_HELP}
