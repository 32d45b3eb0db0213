"""Every hook of echo-memory: the contract of the whole system (DESIGN §2).

Three kinds, no others:

* **Registration hooks** (``register_*``) are called once at start-up with a
  ``register(name, obj)`` callback. The core validates each registration (a name taken by
  two plugins is a start-up error naming both).
* **Event hooks** (``on_*``) are called for every implementation; results are ignored.
  They fire once per operation (never per token or per note in a loop).
* **Policy hooks** are ``firstresult``: the first non-``None`` answer wins; the core ships
  a ``trylast`` default.

Keep this module free of heavy imports: it is loaded on every start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import pluggy

if TYPE_CHECKING:
    from collections.abc import Sequence

    from echo_core.gating import GateContext
    from echo_core.hook_views import CliState, EventContext
    from echo_core.models import CaptureRequest, GateStop, Note
    from echo_core.operations import Operation
    from echo_core.operations.lazy import OperationRef
    from echo_core.protocols import (
        BuildTarget,
        Expander,
        QueueFactory,
        RankerFactory,
        StorageFactory,
        Tokenizer,
    )

PROJECT = "echo_memory"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


T_contra = TypeVar("T_contra", contravariant=True)


class Register(Protocol[T_contra]):
    """The callback handed to registration hooks: ``register(name, obj)``, generic over
    what the hook registers (``Register[Tokenizer]``). ``name`` is a non-empty string,
    unique within the hook across all plugins (a clash is reported naming both)."""

    def __call__(self, name: str, obj: T_contra, /) -> None: ...


class SessionContextProvider(Protocol):
    """What ``register_session_contexts`` registers: called with the session's context
    and its situation as keywords, it returns blocks of text for the session's opening
    context, or ``None``."""

    def __call__(self, ctx: Any, /, *, cwd: str = "", project: str = "", prompt: str = "",
                 entities: tuple[str, ...] = (), budget_chars: int | None = None,
                 **more: Any) -> list[str] | None: ...


# --- registration hooks -------------------------------------------------------------


@hookspec
def register_storage(register: Register[StorageFactory]) -> None:
    """Register storage backends by URL scheme.

    :param register: ``register(scheme, factory)`` with ``factory(url, options) ->
        Storage`` (``echo_core.protocols.Storage``; subclass ``StorageBase`` to implement
        only the primitives). The vault URL's scheme picks the backend: ``"file"`` for a
        folder, ``"obsidian+https"`` for the Local REST API. A scheme taken by two
        plugins is reported by ``plugins`` and ``doctor`` naming both.
    :returns: nothing; registrations go through ``register``.

    Contract suite: ``StorageContract``.
    """


@hookspec
def register_tokenizers(register: Register[Tokenizer]) -> None:
    """Register tokenizers.

    :param register: ``register(name, tokenizer)`` with a ``Tokenizer`` object whose
        ``tokenize(text) -> list[str]`` is deterministic and identical at index and query
        time. Config ``tokenizer = "<name>"`` picks one.

    Suite: ``TokenizerContract``.
    """


@hookspec
def register_rankers(register: Register[RankerFactory]) -> None:
    """Register rankers.

    :param register: ``register(name, factory)`` with ``factory(tokenizer, state_dir) ->
        Ranker`` for one vault. Config ``recall = "<name>"`` picks one. A ranker
        implements ranking only (upsert / remove / search): the core builds it from the
        corpus when it is absent and keeps it current on note writes and deletions.

    Suite: ``RankerContract``.
    """


@hookspec
def register_expanders(register: Register[Expander]) -> None:
    """Register query expanders.

    :param register: ``register(name, expander)``; ``expander.expand(query, context) ->
        list[WeightedTerm]`` adds weighted terms (e.g. aliases of entities the query
        names); ``context`` is an ``ExpandContext``. Every registered expander is applied.

    Suite: ``ExpanderContract``.
    """


@hookspec
def register_queues(register: Register[QueueFactory]) -> None:
    """Register offline outboxes.

    :param register: ``register(name, factory)`` with ``factory(state_dir) -> Queue``, a
        queue that persists writes while the backend is down. Config ``queue`` picks one
        (default ``"outbox"``).

    Suite: ``QueueContract``.
    """


@hookspec
def register_operations(register: Register[Operation[Any] | OperationRef]) -> None:
    """Register operations (``echo_core.operations``).

    :param register: ``register(name, operation)`` with an ``Operation`` whose ``name``
        equals ``name`` (kebab-case), or an ``OperationRef`` naming where it is declared
        (imported only when a surface needs it: cheaper start-up for many verbs). The CLI, the MCP server and the ``claude-code``
        skills are derived from every registered operation; the core's own verbs come
        through this hook too. A malformed declaration, or a CLI command, MCP tool or
        skill name claimed twice, is reported naming both plugins. Keep this cheap:
        declarations import their operation's implementation only when it runs.

    Suite: ``OperationsContract``.
    """


@hookspec
def register_commands(cli: Any) -> None:
    """Add raw subcommands to the ``echo-memory`` CLI (for what is not an operation:
    ``serve``, ``hook``, ``build``, ``plugins``).

    :param cli: the root ``click.Group``; call ``cli.add_command(command)``. Prefer an
        operation (``register_operations``): it reaches every surface. Import command
        modules lazily so ``echo-memory --help`` stays fast. A command name taken twice
        is a start-up error naming both plugins.

    Suite: ``CommandsContract``.
    """


@hookspec(firstresult=True)
def run_direct(argv: Sequence[str], state: CliState) -> int | None:
    """Run a command line without building the click CLI, when it is one of this
    plugin's commands in a form it answers alone; return its exit code, else None.

    :param argv: the command line after ``echo-memory`` (no option of the CLI's own has
        been parsed: a plugin answers only forms it parses exactly, e.g. ``hook EVENT``).
    :param state: the CLI's state (``CliState``): host, flags unset, ``context()``.

    For the commands a process runs many times a session (a Claude Code hook on every
    prompt, an agent's ``recall --json``): importing click and deriving every command
    costs ~10 ms of each. The answer must be exactly what the click command would do
    for that command line (``--help`` and any form the plugin does not parse exactly as
    click would go to click: return None). First non-None answer wins; the CLI plugin's
    own answer for operation commands (``transport_cli.direct_ops``) is asked last.
    Suite: ``CommandsContract``.
    """


@hookspec
def register_build_targets(register: Register[BuildTarget]) -> None:
    """Register build-target parts.

    :param register: ``register("<target>:<plugin>", part)``: ``target`` names an
        artefact (``"claude-code"``); ``part`` is a ``BuildTarget`` whose
        ``contribute(out_dir, context)`` writes this plugin's files (``context`` is a
        ``BuildContext``). Several plugins contribute to one target.

    Suite: ``BuildTargetContract``.
    """


@hookspec
def register_session_contexts(register: Register[SessionContextProvider]) -> None:
    """Register what a session's opening context gets besides the brief.

    :param register: ``register(name, provider)`` with a ``SessionContextProvider``:
        at every session start that gets the brief (Claude Code's SessionStart for
        startup, clear and compact), ``provider(ctx, cwd=..., project=..., prompt=...,
        entities=..., budget_chars=...)`` returns blocks of markdown to add after the
        brief, or ``None`` (nothing to add). ``ctx``: the session's ``EchoContext``;
        ``cwd``: its working folder; ``project``: its name when the caller knows it ("":
        the provider may derive it from ``cwd``); ``prompt``: its first prompt ("" at a
        start); ``entities``: names the brief mentions (recent work); ``budget_chars``:
        the most characters its blocks may take together (``None``: its own budget).
        A provider accepts and ignores keywords it does not know (more may come).
    :returns: nothing; registrations go through ``register``.

    Called once per session start, never per prompt. The caller calls the providers in
    name order, skips one that raises (noting it on stderr) and a block that does not
    fit what is left of the output, and calls none when most of its time budget is
    spent. A provider must be quick, answer from local state where it can, and keep to
    ``budget_chars``. Suite: ``SessionContextContract``.
    """


# --- event hooks ----------------------------------------------------------------------


@hookspec
def on_note_written(note: Note, ctx: EventContext) -> None:
    """A note was created or replaced in the vault (after the write is durable).

    :param note: the note as written.
    :param ctx: an ``EventContext`` (settings, time, state dir, the vault to read).

    Called once per written note by the operation that wrote it, after the core has
    updated the active ranker. Work proportional to the note; errors are logged, not
    raised. Suite: ``EventsContract``.
    """


@hookspec
def on_note_deleted(path: str, ctx: EventContext) -> None:
    """A note was deleted from the vault.

    :param path: the vault path that no longer exists.
    :param ctx: an ``EventContext``.

    Suite: ``EventsContract``.
    """


@hookspec
def on_session_start(ctx: EventContext) -> None:
    """A session began: ``load`` ran and produced its digest.

    :param ctx: an ``EventContext``.

    Called once per ``load``, after the outbox flush. Listeners must be quick (the
    session-start hook has a tight time budget). Suite: ``EventsContract``.
    """


@hookspec
def on_session_end(bundle: Any, ctx: EventContext) -> None:
    """A session ended (``session-end --apply`` committed its heartbeat).

    :param bundle: the validated session bundle (``ops.session_end.SessionBundle``).
    :param ctx: an ``EventContext``.

    Suite: ``EventsContract``.
    """


# --- policy hooks ---------------------------------------------------------------------


@hookspec(firstresult=True)
def gate_capture(request: CaptureRequest, ctx: GateContext) -> GateStop | None:
    """Decide whether a capture may proceed.

    :param request: the validated ``CaptureRequest``.
    :param ctx: a ``GateContext``: the entities as they are under the vault lock (an
        ``EntityLookup``: lookups by slug, path, name and name tokens; no walk over every
        entity) and the route of the requested kind. Gates must not write.
    :returns: a ``GateStop`` (with candidates) to stop the capture (duplicate, trust
        boundary), or ``None`` to let it through.

    Stop rule (``firstresult``): implementations are called newest-registered first
    (``tryfirst`` / ``trylast`` reorder them); the first one that returns something other
    than ``None`` decides and the rest are not called; the core's ``trylast`` default
    returns ``None`` (let through). Not consulted for ``force`` or an explicit
    ``merge_into``. Suite: ``GateContract``.
    """
