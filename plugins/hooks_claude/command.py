"""``echo-memory hook <event>``: the command the generated Claude Code hooks run."""

from __future__ import annotations

import click


@click.command("hook")
@click.argument("event", metavar="EVENT")
def hook_command(event: str) -> None:
    """Answer a Claude Code hook EVENT: read its JSON from stdin, print the reply.

    \b
    Events (the generated plugin wires them; see `echo-memory build claude-code`):
      SessionStart      the brief memory digest (startup, clear; compact: the
                        session's latest checkpoint first; quiet on resume)
      UserPromptSubmit  notes relevant to the prompt, at most 1500 characters,
                        or nothing
      Stop              once per substantive session with nothing saved: ask
                        to save; mine what was said since the last Stop into
                        inbox lines (preferences, corrections, fixes, ideas)
      PreCompact        write a checkpoint note (recent prompts, files edited);
                        no output
      SessionEnd        mine the rest of the session into inbox lines; no
                        output (ECHO_AUTO_REFLECT=off turns mining off;
                        ECHO_REFLECT_HIGH=capture saves explicit preferences
                        as notes)

    \b
    Example:
      echo '{"session_id": "s1", "hook_event_name": "UserPromptSubmit",
             "prompt": "how do we deploy?"}' | echo-memory hook UserPromptSubmit

    Exits 0 for any EVENT, whatever happens to the answer (exit 2 would block
    Stop, PreCompact and UserPromptSubmit): on any error, an unknown EVENT or a
    timeout it prints nothing, so a memory problem never blocks the agent; only SessionStart then says in one line "memory
    unavailable: <reason>; <what to do>". A command line without EVENT, or with
    an unknown option, is a usage error, exit 2 like any command; the generated
    hooks.json always names the event and adds `|| true`. Output is always JSON
    (--json is accepted for uniformity); ECHO_HOOK_DEBUG=1 prints tracebacks to
    stderr.

    \b
    SessionStart answers after a quick check for new, deleted and renamed notes;
    the check of every note (or the weekly fast sweep) runs after the answer, in
    a detached process (ECHO_SESSION_PASS=inline: in this one, before it exits).
    """
    from plugins.hooks_claude.answer import answer_event

    answer_event(event, click.get_current_context().obj)
