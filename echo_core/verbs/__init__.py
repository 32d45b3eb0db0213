"""The core's own verbs, each declared once as an ``Operation`` (``echo_core.operations``)
in a module of this package, and registered by the core's default plugin through
``register_operations`` like any third party's.

They are registered by reference (``OperationRef``): the index below says what the CLI
needs to list and route each verb, so a start-up imports only the verb it runs. A test
(``tests/test_operation_surfaces.py``) checks every reference against its declaration.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from echo_core.operations.lazy import OperationRef

if TYPE_CHECKING:
    from echo_core.operations import Operation
from echo_core.verbs.groups import GROUP_HELP

PACKAGE = "echo_core.verbs"


def _ref(name: str, module: str, attr: str, summary: str, command: tuple[str, ...],
         tool: str, skills: tuple[str, ...]) -> OperationRef:
    group = GROUP_HELP.get(command[0], "") if len(command) > 1 else ""
    return OperationRef(name, f"{PACKAGE}.{module}", attr, summary, command, tool, skills,
                        group)


#: Every built-in verb, in the order the CLI lists them.
BUILTIN: tuple[OperationRef, ...] = (
    _ref('init', 'vault_verbs', 'INIT',
         'Make the folder a vault: marker and memory files (full layout if empty).',
         ('init',), '', ()),
    _ref('doctor', 'vault_verbs', 'DOCTOR',
         'Check readiness: config (and which source won), vault, marker, schema, plugins.',
         ('doctor',), 'echo_health', ('doctor',)),
    _ref('lint', 'lint_verbs', 'LINT',
         'Check the vault: links, orphans, routes, frontmatter, index drift, scope.',
         ('lint',), '', ('health',)),
    _ref('capture', 'capture_verbs', 'CAPTURE',
         'Remember TITLE: create or update the entity it names, or add it to the inbox.',
         ('capture',), 'echo_capture', ('save',)),
    _ref('resolve', 'entity_verbs', 'RESOLVE',
         'Find the entity MENTION names (slug, title or alias, any case or punctuation).',
         ('resolve',), 'echo_resolve', ()),
    _ref('link', 'entity_verbs', 'LINK',
         'Link two notes both ways under their `## Related` headings.',
         ('link',), 'echo_link', ()),
    _ref('recall', 'recall_verbs', 'RECALL',
         'Search memory for QUERY: ranked notes with excerpts, plus linked notes.',
         ('recall',), 'echo_recall', ('recall',)),
    _ref('reindex', 'recall_verbs', 'REINDEX',
         'Rebuild the recall index from every note in the vault (with a progress bar).',
         ('reindex',), '', ()),
    _ref('eval', 'eval_verbs', 'EVAL',
         'Measure recall on your own notes: R@5 and MRR, and the change since last run.',
         ('eval',), 'echo_eval', ()),
    _ref('sweep', 'sweep_verbs', 'SWEEP',
         'Make the indexes, frontmatter and links agree with the notes (dry run).',
         ('sweep',), 'echo_sweep', ('sweep',)),
    _ref('heat', 'heat_verbs', 'HEAT',
         'Show which notes recall use would promote to, or demote from, always-load.',
         ('heat',), '', ()),
    _ref('scope-show', 'scope_verbs', 'SCOPE_SHOW',
         'Print the scope, when it was set, and how many sessions were logged since.',
         ('scope', 'show'), 'echo_get_scope', ()),
    _ref('scope-set', 'scope_verbs', 'SCOPE_SET',
         'Replace the scope with TEXT (use - to read it from stdin).',
         ('scope', 'set'), 'echo_set_scope', ()),
    _ref('load', 'session_verbs', 'LOAD',
         'Print what the agent should know at the start of a session.',
         ('load',), 'echo_load', ('load',)),
    _ref('session-end', 'session_verbs', 'SESSION_END',
         'Commit a session: its log, agent-log line, reflections, scope, heartbeat.',
         ('session-end',), 'echo_log_session', ()),
    _ref('reflect', 'reflect_verbs', 'REFLECT',
         'Capture what was learned: PROPOSALS (a JSON file, - for stdin) or --transcript.',
         ('reflect',), 'echo_reflect', ('reflect',)),
    _ref('reflect-claude-memory', 'claude_memory_verbs', 'CLAUDE_MEMORY',
         "Import Claude Code's CLAUDE.md and auto-memory notes as proposals (dry run).",
         ('reflect', 'claude-memory'), '', ()),
    _ref('reflect-corpus', 'reflect_corpus_verbs', 'REFLECT_CORPUS',
         'Mine every Claude Code transcript into proposals (resumable). Dry run by default.',
         ('reflect', 'corpus'), '', ()),
    _ref('get', 'note_verbs', 'GET',
         'Print the note at PATH (vault-relative, e.g. resources/people/ada.md).',
         ('get',), 'echo_get_note', ()),
    _ref('put', 'note_verbs', 'PUT',
         'Write the whole note at PATH from stdin (-) or a local FILE, atomically.',
         ('put',), '', ()),
    _ref('evolve', 'evolve_verbs', 'EVOLVE',
         'Replace the note at PATH with a new version; the old one is archived.',
         ('evolve',), 'echo_evolve', ()),
    _ref('append', 'note_verbs', 'APPEND',
         'Append LINE to the note at PATH unless that exact line is already there.',
         ('append',), 'echo_append_note', ()),
    _ref('fm', 'note_verbs', 'FM',
         'Set frontmatter KEY of the note at PATH to a JSON value; nothing else changes.',
         ('fm',), '', ()),
    _ref('patch', 'patch_verbs', 'PATCH',
         'Append, prepend or replace under a heading, a frontmatter field or a ^block.',
         ('patch',), 'echo_patch_note', ()),
    _ref('ls', 'note_verbs', 'LS',
         'List the files under FOLDER (default: the whole vault), one path per line.',
         ('ls',), '', ()),
    _ref('history', 'history_verbs', 'HISTORY',
         'List the earlier versions kept of the note at PATH, newest first.',
         ('history',), 'echo_note_history', ()),
    _ref('restore', 'history_verbs', 'RESTORE',
         'Restore the note at PATH to VERSION (an id from `history`, or its first 4+ digits).',
         ('restore',), 'echo_restore_note', ()),
    _ref('backup', 'history_verbs', 'BACKUP',
         'Write a dated zip of the whole vault, then delete all but the newest --keep.',
         ('backup',), '', ()),
    _ref('export', 'transfer_verbs', 'EXPORT',
         'Copy the whole vault into a folder, byte for byte: a folder vault to open.',
         ('export',), '', ()),
    _ref('import', 'transfer_verbs', 'IMPORT',
         'Copy every file of a folder into the vault, byte for byte (any backend).',
         ('import',), '', ()),
    _ref('rollup', 'rollup_verbs', 'ROLLUP',
         'Sum up a week or month: sessions, decisions, notes created and updated, log.',
         ('rollup',), 'echo_rollup_data', ()),
    _ref('triage-list', 'triage_verbs', 'TRIAGE_LIST',
         'List the inbox items: date, age in days and text (reads only).',
         ('triage', 'list'), '', ()),
    _ref('triage', 'triage_verbs', 'TRIAGE',
         'Route inbox items as PROPOSALS say (a file, or - for stdin). Dry run by default.',
         ('triage', 'apply'), 'echo_triage_inbox', ('triage',)),
    _ref('inbox-review', 'inbox_verbs', 'INBOX_REVIEW',
         'Review every waiting inbox item: merge, expire or promote. Dry run by default.',
         ('inbox', 'review'), 'echo_inbox_review', ()),
    _ref('ingest', 'ingest_verbs', 'INGEST',
         'Store a web page, PDF, markdown or text file as a reference and its parts.',
         ('ingest',), 'echo_ingest', ()),
    _ref('flush', 'vault_verbs', 'FLUSH',
         'Replay the offline outbox: writes queued while the vault was unreachable.',
         ('flush',), '', ()),
)


def builtin_operations() -> tuple[Operation[Any], ...]:
    """Every built-in operation, loaded (imports every verb module)."""
    return tuple(ref.load() for ref in BUILTIN)
