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

from typing import TYPE_CHECKING, Any, Protocol

import pluggy

if TYPE_CHECKING:
    import click

    from echo_core.models import CaptureRequest, GateStop, Note

PROJECT = "echo_memory"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class Register(Protocol):
    """The callback handed to registration hooks: ``register(name, obj)``."""

    def __call__(self, name: str, obj: Any, /) -> None: ...


# --- registration hooks -------------------------------------------------------------


@hookspec
def register_storage(register: Register) -> None:
    """Register storage backends by URL scheme.

    Call ``register(scheme, factory)`` where ``factory(url, options) -> Storage``
    (``echo_core.protocols.Storage``). The vault URL's scheme picks the backend:
    ``"file"`` for a folder, ``"obsidian+https"`` for the Local REST API. A scheme taken
    by two plugins is a start-up error. Contract suite: ``StorageContract``.
    """


@hookspec
def register_tokenizers(register: Register) -> None:
    """Register tokenizers: ``register(name, tokenizer)`` with a ``Tokenizer`` object.

    ``tokenizer.tokenize(text) -> list[str]`` must be deterministic and identical at index
    and query time. Config ``tokenizer = "<name>"`` picks one. Suite: ``TokenizerContract``.
    """


@hookspec
def register_rankers(register: Register) -> None:
    """Register rankers: ``register(name, factory)``, ``factory(tokenizer, state_dir)``.

    The factory returns a ``Ranker`` (upsert / remove / search) for one vault. Config
    ``recall = "<name>"`` picks one. The ranker only ranks: the core builds it when absent
    and keeps it current on note writes and deletions (``echo_core.ranker_upkeep``).
    Suite: ``RankerContract``.
    """


@hookspec
def register_expanders(register: Register) -> None:
    """Register query expanders: ``register(name, expander)``.

    ``expander.expand(query, context) -> list[WeightedTerm]`` adds weighted terms (e.g.
    aliases of entities the query names); every registered expander is applied.
    Suite: ``ExpanderContract``.
    """


@hookspec
def register_queues(register: Register) -> None:
    """Register offline outboxes: ``register(name, factory)``, ``factory(state_dir)``.

    The factory returns a ``Queue`` that persists writes while the backend is down.
    Suite: ``QueueContract``.
    """


@hookspec
def register_commands(cli: click.Group) -> None:
    """Add subcommands to the ``echo-memory`` CLI group.

    Called once when the CLI starts. Implementations must import their command modules
    lazily enough that ``echo-memory --help`` stays fast. A command name taken twice is a
    start-up error. Suite: ``CommandsContract``.
    """


@hookspec
def register_mcp_tools(register: Register) -> None:
    """Register MCP tools: ``register(name, McpTool(...))``.

    ``name`` starts with ``echo_``; the description is written for a model (what, when,
    returns; at most 3 sentences). The MCP transport serves every registered tool.
    Suite: ``McpToolsContract``.
    """


@hookspec
def register_build_targets(register: Register) -> None:
    """Register build-target parts: ``register(target, part)``.

    ``target`` names an artefact (``"claude-code"``); ``part`` is a ``BuildTarget`` whose
    ``contribute(out_dir, context)`` writes this plugin's files. Several plugins contribute
    to one target, so names are ``"<target>:<plugin>"``. Suite: ``BuildTargetContract``.
    """


# --- event hooks ----------------------------------------------------------------------


@hookspec
def on_note_written(note: Note, ctx: Any) -> None:
    """A note was created or replaced in the vault (after the write is durable).

    Called once per written note by the operation that wrote it, in work proportional to
    the note (the core then updates the active ranker itself). Errors are logged, not
    raised.
    Suite: ``EventsContract``.
    """


@hookspec
def on_note_deleted(path: str, ctx: Any) -> None:
    """A note was deleted from the vault (the core then drops it from the active ranker).
    Suite: ``EventsContract``."""


@hookspec
def on_session_start(ctx: Any) -> None:
    """A session began: ``load`` ran and produced its digest.

    Called once per ``load``, after the outbox flush. Listeners must be quick (the
    session-start hook has a tight time budget). Suite: ``EventsContract``.
    """


@hookspec
def on_session_end(bundle: Any, ctx: Any) -> None:
    """A session ended (``session-end --apply`` committed its heartbeat).

    ``bundle`` is the validated session bundle. Suite: ``EventsContract``.
    """


# --- policy hooks ---------------------------------------------------------------------


@hookspec(firstresult=True)
def gate_capture(request: CaptureRequest, ctx: Any) -> GateStop | None:
    """Decide whether a capture may proceed; the first non-``None`` answer wins.

    Return a ``GateStop`` (with candidates) to stop the capture (duplicate, trust
    boundary), or ``None`` to let it through. Not consulted for ``force`` or an explicit
    ``merge_into``. The core's ``trylast`` default returns ``None``. Suite: ``GateContract``.
    """
